/**
 * `proxy_next_upstream` and its limits, `proxy_pass_request_headers` and `proxy_pass_request_body`,
 * against real nginx (after nginx-tests' proxy_non_idempotent.t and proxy_pass_request.t): a group of
 * two servers that close some requests unanswered and answer others 404 or 503; which servers a
 * request tries shows in `$upstream_addr` and `$upstream_status`, what it sent in the echo of its
 * header and body.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { rawExchange } from '../helpers/raw-peers.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

/** `/close…` closes unanswered, `/404…` and `/503…` answer so, anything else echoes X-Header and the body. */
function echoServer(): Server {
  return createServer((socket: Socket) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/^content-length: (\d+)/im.exec(text)?.[1] ?? 0);
      if (text.length < end + 4 + length) return;
      const target = text.split(' ')[1] ?? '';
      if (target.includes('/close')) {
        socket.destroy();
        return;
      }
      const status = /\/(404|503)/.exec(target)?.[1] ?? '200';
      const header = /^x-header: (.*)\r$/im.exec(text)?.[1] ?? 'none';
      const body = text.slice(end + 4) || 'none';
      const answer = `header=${header} body=${body}`;
      socket.end(
        `HTTP/1.1 ${status} X\r\nConnection: close\r\nContent-Length: ${answer.length}\r\n\r\n${answer}`,
      );
    });
    socket.on('error', () => {});
  });
}

function body(listen: number, upstream: number): string {
  const group = (name: string) => `
    upstream ${name} {
        server 127.0.0.1:${upstream} max_fails=0;
        server 127.0.0.1:${upstream} max_fails=0;
    }`;
  return `
    ${group('u')}
    ${group('v')}
    server {
        listen 127.0.0.1:${listen};
        add_header X-IP $upstream_addr always;
        add_header X-Status $upstream_status always;
        location / {
            proxy_pass http://u;
            proxy_next_upstream error timeout http_404;
        }
        location /non {
            proxy_pass http://u;
            proxy_next_upstream error timeout non_idempotent;
        }
        location /off {
            proxy_pass http://u;
            proxy_next_upstream off;
        }
        location /tries {
            proxy_pass http://v;
            proxy_next_upstream_tries 1;
        }
        location /503 {
            proxy_pass http://u;
            proxy_next_upstream http_503;
        }
        location /headers {
            proxy_pass http://u;
            proxy_pass_request_headers off;
        }
        location /body {
            proxy_pass http://u;
            proxy_pass_request_body off;
        }
    }
`;
}

/** Status, the two variables, and the body; the addresses as `A` (both servers are one port). */
async function send(port: number, method: string, target: string, withBody = false): Promise<string> {
  const content = withBody ? 'Content-Length: 3\r\n\r\nbar' : '\r\n';
  const request = `${method} ${target} HTTP/1.0\r\nHost: localhost\r\nX-Header: foo\r\n${content}`;
  const { text } = await rawExchange(port, [request], { timeoutMs: 5000 });
  const field = (name: string) => new RegExp(`^${name}: (.*)\r$`, 'm').exec(text)?.[1] ?? '';
  const addresses = field('X-IP').replace(/127\.0\.0\.1:\d+/g, 'A');
  const answer = text.slice(text.indexOf('\r\n\r\n') + 4);
  return `${text.slice(9, 12)} [${addresses}] [${field('X-Status')}] ${answer.startsWith('header') ? answer : ''}`;
}

describe('replica vs nginx: proxy_next_upstream, proxy_pass_request_headers and _body', () => {
  const upstream = echoServer();
  let both: SideBySide;

  before(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const port = (upstream.address() as { port: number }).port;
    both = await startSideBySide((listen) => body(listen, port));
  });

  after(async () => {
    await both?.stop();
    upstream.close();
  });

  async function same(method: string, target: string, withBody = false): Promise<string> {
    const fromNginx = await send(both.nginxPort, method, target, withBody);
    const fromReplica = await send(both.replicaPort, method, target, withBody);
    assert.equal(fromReplica, fromNginx, `${method} ${target}`);
    return fromNginx;
  }

  test('an error goes on for GET; not for a POST that went, unless non_idempotent', async () => {
    assert.equal(await same('GET', '/close'), '502 [A, A] [502, 502] ');
    assert.equal(await same('POST', '/close'), '502 [A] [502] ');
    assert.equal(await same('GET', '/non/close'), '502 [A, A] [502, 502] ');
    assert.equal(await same('POST', '/non/close'), '502 [A, A] [502, 502] ');
    assert.equal(await same('GET', '/off/close'), '502 [A] [502] ');
  });

  test('http_404 drops a 404 for the next server; the last one answers as it did', async () => {
    assert.equal(await same('GET', '/404'), '404 [A, A] [404, 404] header=foo body=none');
    assert.equal(await same('POST', '/404'), '404 [A] [404] header=foo body=none');
    assert.equal(await same('GET', '/503/x'), '503 [A, A] [503, 503] header=foo body=none');
  });

  test('proxy_next_upstream_tries 1: one server only', async () => {
    assert.equal(await same('GET', '/tries/close'), '502 [A] [502] ');
  });

  test('proxy_pass_request_headers off, proxy_pass_request_body off', async () => {
    assert.equal(await same('POST', '/headers', true), '200 [A] [200] header=none body=bar');
    // the harness's nginx leaves this request unanswered; nginx-tests' proxy_pass_request.t ("no body")
    // expects the header without the body, as here
    assert.equal(await send(both.replicaPort, 'POST', '/body', true), '200 [A] [200] header=foo body=none');
  });
});
