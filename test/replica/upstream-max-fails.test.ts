/**
 * `max_fails` and `fail_timeout` of an upstream server, against real nginx: two servers, the first of
 * which closes every third connection it gets without an answer. With `max_fails=3` its failures add
 * up (no check clears them within `fail_timeout`), and the third leaves it out: of 30 requests it
 * answers 6 (nginx-tests' upstream.t, "failures"). With `max_fails=0` it is never left out: every
 * other request tries it first. nginx and the replica are sent the same requests in turn, the servers'
 * counts reset between them.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { rawExchange } from '../helpers/raw-peers.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

/** Answers `X-Port`; `flaky`: every third connection is closed after its head, unanswered. */
function server(flaky: boolean): Server & { count: number } {
  const s = Object.assign(
    createServer((socket: Socket) => {
      let head = '';
      socket.on('data', (chunk) => {
        head += chunk.toString('latin1');
        if (!head.includes('\r\n\r\n')) return;
        const port = (s.address() as { port: number }).port;
        if (flaky && ++s.count % 3 === 0) socket.destroy();
        else socket.end(`HTTP/1.1 200 OK\r\nConnection: close\r\nX-Port: ${port}\r\n\r\nOK\n`);
      });
      socket.on('error', () => {});
    }),
    { count: 0 },
  );
  return s;
}

function body(listen: number, flaky: number, good: number): string {
  return `
    upstream three {
        server 127.0.0.1:${flaky} max_fails=3 fail_timeout=10s;
        server 127.0.0.1:${good} max_fails=3 fail_timeout=10s;
    }
    upstream never {
        server 127.0.0.1:${flaky} max_fails=0;
        server 127.0.0.1:${good} max_fails=0;
    }
    server {
        listen 127.0.0.1:${listen};
        add_header X-Addr $upstream_addr;
        location /three { proxy_pass http://three; }
        location /never { proxy_pass http://never; }
    }
`;
}

async function fields(port: number, target: string): Promise<string> {
  const request = `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`;
  const { text } = await rawExchange(port, [request], { timeoutMs: 5000 });
  const line = (name: string) => new RegExp(`^${name}: (.*)\r$`, 'm').exec(text)?.[1] ?? '';
  return `${text.slice(9, 12)} ${line('X-Port')} ${line('X-Addr')}`;
}

describe('replica vs nginx: max_fails and fail_timeout', () => {
  const flaky = server(true);
  const good = server(false);
  let both: SideBySide;

  before(async () => {
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => good.listen(0, '127.0.0.1', resolve));
    const ports = [flaky, good].map((s) => (s.address() as { port: number }).port);
    both = await startSideBySide((port) => body(port, ports[0]!, ports[1]!));
  });

  after(async () => {
    await both?.stop();
    flaky.close();
    good.close();
  });

  /** `count` requests to `target` on one side, from a fresh count of the flaky server's connections. */
  async function run(port: number, target: string, count: number): Promise<string[]> {
    flaky.count = 0;
    const answers: string[] = [];
    for (let i = 0; i < count; i++) answers.push(await fields(port, target));
    return answers;
  }

  test('max_fails=3: the third failure leaves the server out; the same answers, in the same order', async () => {
    const fromNginx = await run(both.nginxPort, '/three', 30);
    const fromReplica = await run(both.replicaPort, '/three', 30);
    assert.deepEqual(fromReplica, fromNginx);
    const flakyPort = String((flaky.address() as { port: number }).port);
    assert.equal(fromNginx.filter((a) => a.split(' ')[1] === flakyPort).length, 6);
  });

  test('max_fails=0: the failing server is tried again and again', async () => {
    const fromNginx = await run(both.nginxPort, '/never', 9);
    const fromReplica = await run(both.replicaPort, '/never', 9);
    assert.deepEqual(fromReplica, fromNginx);
    // tries 1, 3, 5, 7, 9 go to it first: the third connection fails (and goes on), the others answer
    assert.equal(fromNginx.filter((a) => a.includes(', ')).length, 1);
    const flakyPort = String((flaky.address() as { port: number }).port);
    assert.equal(fromNginx.filter((a) => a.split(' ')[1] === flakyPort).length, 4);
  });
});
