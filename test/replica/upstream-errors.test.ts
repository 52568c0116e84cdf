/**
 * Upstream failures on a replica process, answered as nginx does: 502 with nginx's page when the
 * upstream refuses the connection (group or host:port) or drops it without answering, and a group
 * whose first server refuses still serves from the next one; an upstream slower than the location's
 * `proxy_read_timeout` is a 504; so is one that cannot be connected to within the location's
 * `proxy_connect_timeout` (each location its own), or that accepts nothing of a request body for
 * `proxy_send_timeout` (a client slow to send its body is not the upstream's fault).
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import { type FullBacklogListener, startFullBacklogListener } from '../helpers/full-backlog-listener.ts';
import {
  freePorts,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { nginxPage, startUpstream, type TestUpstream } from './http/harness.ts';

describe('replica: upstream errors', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let blackhole: FullBacklogListener;
  /** Accepts connections and never reads from them. */
  let deaf: Server;
  let replica: ReplicaRun;
  let base: string;
  let port: number;

  before(async () => {
    // Ports nothing listens on (free a moment ago, never bound).
    const [listen, deadA, deadB] = await freePorts(3);
    upstream = await startUpstream((req, res, record) => {
      if (req.url === '/hangup') {
        req.socket.destroy();
        return;
      }
      if (req.url === '/slow-client') {
        res.end(`${record.body.length} bytes`);
        return;
      }
      if (req.url === '/slow') {
        // Answers long after the location's proxy_read_timeout (and well before the test's end).
        setTimeout(() => res.end(record.url), 3000).unref();
        return;
      }
      res.end(record.url);
    });
    blackhole = await startFullBacklogListener();
    deaf = createServer((socket) => {
      socket.pause();
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => deaf.listen(0, '127.0.0.1', resolve));
    const deafPort = (deaf.address() as { port: number }).port;
    const config = dir.write(
      'nginx.conf',
      `events {}
http {
    upstream dead { server 127.0.0.1:${deadA}; }
    upstream mixed {
        server 127.0.0.1:${deadB};
        server 127.0.0.1:${upstream.port};
    }
    server {
        listen 127.0.0.1:${listen};
        location /refused { proxy_pass http://dead; }
        location /refused-address { proxy_pass http://127.0.0.1:${deadA}; }
        location /hangup { proxy_pass http://127.0.0.1:${upstream.port}; }
        location /mixed { proxy_pass http://mixed; }
        location /slow { proxy_read_timeout 300ms; proxy_pass http://127.0.0.1:${upstream.port}; }
        location /connect-soon { proxy_connect_timeout 300ms; proxy_pass http://127.0.0.1:${blackhole.port}; }
        location /connect-later { proxy_connect_timeout 2s; proxy_pass http://127.0.0.1:${blackhole.port}; }
        location /deaf {
            proxy_send_timeout 300ms;
            client_max_body_size 0;
            proxy_pass http://127.0.0.1:${deafPort};
        }
        location /slow-client { proxy_send_timeout 300ms; proxy_pass http://127.0.0.1:${upstream.port}; }
    }
}
`,
    );
    replica = await startReplica(config, [], { status: false });
    port = replica.ports[String(listen)]!;
    base = `http://127.0.0.1:${port}`;
  });

  after(async () => {
    await stopAll();
    await upstream?.close();
    await blackhole?.close();
    deaf?.close();
    dir.remove();
  });

  /**
   * A POST of `parts` (bytes each), sent on a raw connection with `pauseMs` between parts; resolves with
   * the status line and body. The proxy may answer before it read everything, then close.
   */
  function post(
    path: string,
    parts: readonly number[],
    pauseMs = 0,
  ): Promise<{ status: string; body: string }> {
    const total = parts.reduce((sum, n) => sum + n, 0);
    return new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', () => {});
      socket.once('close', () => {
        const text = Buffer.concat(chunks).toString('latin1');
        resolve({ status: text.split('\r\n')[0]!, body: text.slice(text.indexOf('\r\n\r\n') + 4) });
      });
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${total}\r\nConnection: close\r\n\r\n`,
      );
      void (async () => {
        for (const [i, bytes] of parts.entries()) {
          if (i > 0) await sleep(pauseMs);
          if (socket.destroyed) return;
          socket.write(Buffer.alloc(bytes, 'a'));
        }
      })();
    });
  }

  async function get(path: string) {
    const res = await request(`${base}${path}`);
    return { status: res.statusCode, text: await res.body.text() };
  }

  test('a refused connection is a 502 with nginx page, for a group and for host:port', async () => {
    const page = nginxPage('502 Bad Gateway');
    assert.deepEqual(await get('/refused'), { status: 502, text: page });
    assert.deepEqual(await get('/refused-address'), { status: 502, text: page });
  });

  test('an upstream slower than proxy_read_timeout is a 504 with nginx page, after that timeout', async () => {
    const started = performance.now();
    assert.deepEqual(await get('/slow'), { status: 504, text: nginxPage('504 Gateway Time-out') });
    const elapsedMs = performance.now() - started;
    assert.ok(elapsedMs >= 290 && elapsedMs < 2900, `answered after ${elapsedMs.toFixed(0)} ms`);
  });

  test('each location connects within its own proxy_connect_timeout, then answers 504', async () => {
    const started = performance.now();
    const elapsed = async (path: string) => {
      const answer = await get(path);
      return { ...answer, ms: performance.now() - started };
    };
    const [soon, later] = await Promise.all([elapsed('/connect-soon'), elapsed('/connect-later')]);
    const page = nginxPage('504 Gateway Time-out');
    assert.deepEqual([soon.status, soon.text, later.status, later.text], [504, page, 504, page]);
    // undici checks these timers about every half second
    assert.ok(soon.ms >= 290 && soon.ms < 1900, `300 ms: answered after ${soon.ms.toFixed(0)} ms`);
    assert.ok(later.ms >= 1990 && later.ms < 4000, `2 s: answered after ${later.ms.toFixed(0)} ms`);
  });

  test('an upstream that accepts nothing of the body for proxy_send_timeout is a 504', async () => {
    const started = performance.now();
    // More than every buffer between the replica and a server that never reads holds.
    const answer = await post('/deaf', [64 * 1024 * 1024]);
    const elapsedMs = performance.now() - started;
    assert.equal(answer.status, 'HTTP/1.1 504 Gateway Time-out');
    assert.equal(answer.body, nginxPage('504 Gateway Time-out'));
    assert.ok(elapsedMs >= 290 && elapsedMs < 2900, `answered after ${elapsedMs.toFixed(0)} ms`);
  });

  test('a client slower to send its body than proxy_send_timeout is not timed out', async () => {
    const answer = await post('/slow-client', [1000, 1000], 700);
    assert.equal(answer.status, 'HTTP/1.1 200 OK');
    assert.equal(answer.body, '2000 bytes');
  });

  test('an upstream that closes without answering is a 502', async () => {
    assert.deepEqual(await get('/hangup'), { status: 502, text: nginxPage('502 Bad Gateway') });
  });

  test('an upstream that closes after it read a whole request body is a 502, and the replica lives on', async () => {
    const answer = await post('/hangup', [1000]);
    assert.equal(answer.status, 'HTTP/1.1 502 Bad Gateway');
    assert.equal(answer.body, nginxPage('502 Bad Gateway'));
    assert.equal((await get('/mixed/after-hangup')).status, 200);
  });

  test('a group tries its next server when one refuses', async () => {
    for (let i = 0; i < 4; i++)
      assert.deepEqual(await get(`/mixed/${i}`), { status: 200, text: `/mixed/${i}` });
  });
});
