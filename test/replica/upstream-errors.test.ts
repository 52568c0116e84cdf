/**
 * Upstream failures on a replica process, answered as nginx does: 502 with nginx's page when the
 * upstream refuses the connection (group or host:port) or drops it without answering, and a group
 * whose first server refuses still serves from the next one; an upstream slower than the location's
 * `proxy_read_timeout` is a 504.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
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
  let replica: ReplicaRun;
  let base: string;

  before(async () => {
    // Ports nothing listens on (free a moment ago, never bound).
    const [listen, deadA, deadB] = await freePorts(3);
    upstream = await startUpstream((req, res, record) => {
      if (req.url === '/hangup') {
        req.socket.destroy();
        return;
      }
      if (req.url === '/slow') {
        // Answers long after the location's proxy_read_timeout (and well before the test's end).
        setTimeout(() => res.end(record.url), 3000).unref();
        return;
      }
      res.end(record.url);
    });
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
    }
}
`,
    );
    replica = await startReplica(config, [], { status: false });
    base = `http://127.0.0.1:${replica.ports[String(listen)]}`;
  });

  after(async () => {
    await stopAll();
    await upstream?.close();
    dir.remove();
  });

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

  test('an upstream that closes without answering is a 502', async () => {
    assert.deepEqual(await get('/hangup'), { status: 502, text: nginxPage('502 Bad Gateway') });
  });

  test('a group tries its next server when one refuses', async () => {
    for (let i = 0; i < 4; i++)
      assert.deepEqual(await get(`/mixed/${i}`), { status: 200, text: `/mixed/${i}` });
  });
});
