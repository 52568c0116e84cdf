/**
 * SIGTERM on a replica process with requests in flight: it stops accepting, lets the forwarded and the
 * held (delayed) requests finish, flushes its counters, and exits 0 — after which the control plane's
 * cluster totals (`/api/9/http/limit_reqs/`, from Redis) equal exactly what the clients saw.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { freePort } from '../helpers/free-port.ts';
import {
  type ControlPlaneRun,
  connectionRefused,
  type ReplicaRun,
  startControlPlane,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { echo, startUpstream, type TestUpstream } from './http/harness.ts';

const ZERO = { passed: 0, delayed: 0, rejected: 0, delayed_dry_run: 0, rejected_dry_run: 0 };

describe('replica: graceful stop on SIGTERM', () => {
  const dir = new TempDir();
  let redis: RedisServer;
  let upstream: TestUpstream;
  let controlPlane: ControlPlaneRun;
  let replica: ReplicaRun;
  let port: number;
  /** Answers every held /slow request. */
  let releaseSlow: () => void = () => {};
  const slowReleased = new Promise<void>((resolve) => {
    releaseSlow = resolve;
  });

  before(async () => {
    const listen = await freePort();
    [redis, upstream] = await Promise.all([
      RedisServer.start(),
      startUpstream((req, res, record) => {
        if (req.url?.startsWith('/slow')) void slowReleased.then(() => echo(req, res, record));
        else echo(req, res, record);
      }),
    ]);
    const config = dir.write(
      'nginx.conf',
      `events {}
http {
    limit_req_zone $binary_remote_addr zone=slow:1m rate=1r/m;
    # 12r/m: a second request right away waits about 5 s.
    limit_req_zone $binary_remote_addr zone=held:1m rate=12r/m;
    upstream backend { server 127.0.0.1:${upstream.port}; }
    server {
        listen ${listen};
        location /slow { limit_req zone=slow burst=1 nodelay; proxy_pass http://backend; }
        location /held { limit_req zone=held burst=5; proxy_pass http://backend; }
    }
}
`,
    );
    [controlPlane, replica] = await Promise.all([
      startControlPlane(['--redis', redis.url, '-c', config]),
      startReplica(config, ['--redis', redis.url, '--id', 'replica-term', '--error-log-level', 'warn']),
    ]);
    port = replica.ports[String(listen)]!;
  });

  after(async () => {
    releaseSlow();
    await stopAll();
    await Promise.all([redis?.stop(), upstream?.close()]);
    dir.remove();
  });

  async function get(path: string) {
    const res = await request(`http://127.0.0.1:${port}${path}`, { reset: true });
    return { status: res.statusCode, text: await res.body.text() };
  }

  test('in-flight and held requests finish, the process exits 0, the cluster totals are exact', async () => {
    // Two forwarded requests the upstream holds, and one rejected.
    const slowStarted = [upstream.nextStarted(), upstream.nextStarted()];
    const slow = [get('/slow/1'), get('/slow/2')];
    await Promise.all(slowStarted);
    assert.equal((await get('/slow/3')).status, 503);
    // One passed and one held by the delay.
    assert.equal((await get('/held/1')).status, 200);
    const held = get('/held/2');
    await waitFor(() => replica.process.stderr.includes('by zone "held"'), { message: 'the delay' });

    replica.process.signal('SIGTERM');
    await replica.process.waitForLog('stopping: finishing in-flight requests');
    assert.equal(
      upstream.started.some((r) => r.url === '/held/2'),
      false,
      'the delayed request is still held when the stop begins',
    );
    // New connections are refused while the old ones finish.
    await waitFor(() => connectionRefused(port), { message: 'the listener to close' });
    assert.equal(replica.process.child.exitCode, null, 'still running: requests are in flight');

    releaseSlow();
    const answers = await Promise.all([...slow, held]);
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200],
    );
    assert.deepEqual(
      answers.map((a) => (JSON.parse(a.text) as { url: string }).url),
      ['/slow/1', '/slow/2', '/held/2'],
    );
    assert.deepEqual(await replica.process.exited, { code: 0, signal: null });

    const totals = await request(`${controlPlane.url}/api/9/http/limit_reqs/`);
    assert.deepEqual(await totals.body.json(), {
      slow: { ...ZERO, passed: 2, rejected: 1 },
      held: { ...ZERO, passed: 1, delayed: 1 },
    });
    assert.match(replica.process.stdout, /"msg":"stopped"/);
  });
});
