/**
 * The timers that bound what a client can hold, honoured as nginx honours them, on a real replica
 * process: `client_body_timeout` (a stalled body closes its connection; one that fits
 * `client_body_buffer_size` never reaches a server), `send_timeout` (a client that takes nothing of
 * its answer), `client_header_timeout`, `keepalive_timeout`, `keepalive_requests`, and the HTTP/2
 * connection's `keepalive_requests` (GOAWAY after that many streams).
 */
import assert from 'node:assert/strict';
import { connect as h2Connect } from 'node:http2';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  freePorts,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { rawExchange, responseCount, ScriptedUpstream } from '../helpers/raw-peers.ts';
import { TestPki } from '../helpers/tls-certs.ts';

const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nup\n';
const BIG_BODY_BYTES = 32 * 1024 * 1024;

/** A connection that sends `bytes`, reads nothing, and resolves with when the server closed it. */
function stallingClient(port: number, bytes: string): Promise<{ closedAfterMs: number; socket: Socket }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const startedMs = performance.now();
    socket.on('error', () => {});
    socket.on('close', () => resolve({ closedAfterMs: performance.now() - startedMs, socket }));
    socket.write(bytes);
  });
}

describe('client connection timers', () => {
  const dir = new TempDir();
  const pki = new TestPki();
  let replica: ReplicaRun;
  let upstream: ScriptedUpstream;
  let port: number;
  let h2: number;
  let h2Loaded: number;

  before(async () => {
    upstream = await ScriptedUpstream.start((request) =>
      request.startsWith('GET /big ')
        ? `HTTP/1.1 200 OK\r\nContent-Length: ${BIG_BODY_BYTES}\r\n\r\n${'x'.repeat(BIG_BODY_BYTES)}`
        : OK,
    );
    const [plain, h2c, h2Tls] = await freePorts(3);
    const cert = pki.server('cafe', ['cafe.example.com']);
    const file = dir.write(
      'nginx.conf',
      `events {}
http {
    client_header_timeout 1s;
    server {
        listen ${plain};
        client_body_timeout 1s;
        location /big {
            send_timeout 1s;
            proxy_pass http://127.0.0.1:${upstream.port};
        }
        location /twice {
            keepalive_requests 2;
            proxy_pass http://127.0.0.1:${upstream.port};
        }
        location /brief {
            keepalive_timeout 1s;
            proxy_pass http://127.0.0.1:${upstream.port};
        }
        location /never {
            keepalive_timeout 0;
            proxy_pass http://127.0.0.1:${upstream.port};
        }
        location / { proxy_pass http://127.0.0.1:${upstream.port}; }
    }
    server {
        listen ${h2c} http2;
        keepalive_requests 3;
        location / { return 200 "h2\\n"; }
    }
    server {
        listen ${h2Tls} ssl http2;
        ssl_certificate ${cert.cert};
        ssl_certificate_key ${cert.key};
        keepalive_requests 200;
        location / { proxy_pass http://127.0.0.1:${upstream.port}; }
    }
}
`,
    );
    replica = await startReplica(file, ['--error-log-level', 'info']);
    port = replica.ports[String(plain)]!;
    h2 = replica.ports[String(h2c)]!;
    h2Loaded = replica.ports[String(h2Tls)]!;
  });

  after(async () => {
    await stopAll();
    await upstream.close();
    dir.remove();
    pki.remove();
  });

  test('client_body_timeout: a small body that stalls closes its connection and never reaches a server', async () => {
    const before = upstream.received.length;
    const { closedAfterMs, socket } = await stallingClient(
      port,
      'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\na',
    );
    assert.ok(closedAfterMs >= 900 && closedAfterMs < 5000, `closed after ${closedAfterMs} ms`);
    assert.equal(socket.bytesRead, 0, 'no answer (nginx: 408, closed)');
    assert.equal(upstream.received.length, before);
    assert.equal(upstream.connections, 0);
  });

  test('client_body_timeout: a large body that stalls closes its connection and frees the upstream', async () => {
    const { closedAfterMs } = await stallingClient(
      port,
      `POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n${'a'.repeat(20_000)}`,
    );
    assert.ok(closedAfterMs >= 900 && closedAfterMs < 5000, `closed after ${closedAfterMs} ms`);
    // the upstream request was abandoned with it
    const answer = await rawExchange(port, ['GET / HTTP/1.1\r\nHost: x\r\n\r\n'], {
      until: (text) => responseCount(text) === 1,
    });
    assert.match(answer.text, /^HTTP\/1\.1 200 OK/);
  });

  test("send_timeout: a client that takes nothing of its answer is closed, with nginx's line", async () => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write('GET /big HTTP/1.1\r\nHost: x\r\n\r\n');
    // the stimulus: the client takes nothing for 3 s (three times send_timeout), then reads on
    await new Promise((resolve) => setTimeout(resolve, 3000));
    let bytes = 0;
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    await new Promise((resolve) => socket.once('close', resolve));
    assert.ok(bytes < BIG_BODY_BYTES, `the answer was cut (${bytes} bytes read)`);
    assert.match(
      replica.process.stderr,
      /\[info\] \d+#\d+: \*\d+ client timed out \(110: Connection timed out\) while sending to client, client: 127\.0\.0\.1, server: , request: "GET \/big HTTP\/1\.1"/,
    );
  });

  test('client_header_timeout: a head that never ends closes its connection', async () => {
    const { closedAfterMs } = await stallingClient(port, 'GET / HTTP/1.1\r\nHost: x\r\n');
    assert.ok(closedAfterMs >= 900 && closedAfterMs < 5000, `closed after ${closedAfterMs} ms`);
  });

  test('keepalive_requests: the second answer of the location closes the connection', async () => {
    const answer = await rawExchange(port, [
      'GET /twice HTTP/1.1\r\nHost: x\r\n\r\nGET /twice HTTP/1.1\r\nHost: x\r\n\r\nGET /twice HTTP/1.1\r\nHost: x\r\n\r\n',
    ]);
    assert.equal(answer.ended, 'closed');
    assert.equal(responseCount(answer.text), 2);
    assert.match(answer.text.slice(answer.text.lastIndexOf('HTTP/1.1 200')), /\r\nConnection: close\r\n/);
  });

  test("keepalive_timeout: the location's idle time closes the connection; 0 turns keep-alive off", async () => {
    const startedMs = performance.now();
    const idle = await rawExchange(port, ['GET /brief HTTP/1.1\r\nHost: x\r\n\r\n']);
    assert.equal(idle.ended, 'closed');
    assert.equal(responseCount(idle.text), 1);
    const ms = performance.now() - startedMs;
    assert.ok(ms >= 900 && ms < 5000, `closed after ${ms} ms`);
    const never = await rawExchange(port, ['GET /never HTTP/1.1\r\nHost: x\r\n\r\n']);
    assert.equal(never.ended, 'closed');
    assert.match(never.text, /\r\nConnection: close\r\n/);
  });

  test('keepalive_requests on HTTP/2: GOAWAY after that many streams, the streams answered', async () => {
    const session = h2Connect(`http://127.0.0.1:${h2}`);
    const goaway = new Promise<number>((resolve) =>
      session.once('goaway', (_code, lastStreamId) => resolve(lastStreamId)),
    );
    const statuses = await Promise.all(
      [1, 2, 3].map(
        () =>
          new Promise<number>((resolve) => {
            const stream = session.request({ ':path': '/' });
            stream.on('response', (headers) => resolve(Number(headers[':status'])));
            stream.resume();
          }),
      ),
    );
    assert.deepEqual(statuses, [200, 200, 200]);
    assert.equal(await goaway, 5, 'the last stream taken: the third (ids 1, 3, 5)');
    session.destroy();
  });

  test('keepalive_requests on HTTP/2 under load: sessions closing with proxied streams in flight, the process lives on', async () => {
    // Closing a session from the stream that reached the limit, its other streams in flight,
    // corrupted the heap: glibc aborted the process within seconds of such load.
    const answered = { ok: 0, refused: 0 };
    // Each client keeps 20 streams in flight on its session until the GOAWAY, then opens another.
    const client = async (untilMs: number) => {
      while (performance.now() < untilMs) {
        const session = h2Connect(`https://127.0.0.1:${h2Loaded}`, {
          ca: pki.read(pki.ca.cert),
          servername: 'cafe.example.com',
        });
        session.on('error', () => {});
        let goneAway = false;
        session.once('goaway', () => {
          goneAway = true;
        });
        const lane = async () => {
          while (!goneAway && !session.destroyed && performance.now() < untilMs) {
            await new Promise<void>((resolve) => {
              const stream = session.request({ ':path': '/' });
              stream.on('response', (headers) => {
                if (headers[':status'] === 200) answered.ok++;
              });
              stream.on('error', () => answered.refused++);
              stream.on('close', () => resolve());
              stream.resume();
            });
          }
        };
        await Promise.all(Array.from({ length: 20 }, lane));
        session.destroy();
      }
    };
    const untilMs = performance.now() + 3000;
    await Promise.all([client(untilMs), client(untilMs), client(untilMs), client(untilMs)]);
    assert.ok(answered.ok > 100, `answered ${JSON.stringify(answered)}`);
    const child = replica.process.child;
    assert.deepEqual([child.exitCode, child.signalCode], [null, null], replica.process.output());
    const res = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(res.status, 200);
  });
});
