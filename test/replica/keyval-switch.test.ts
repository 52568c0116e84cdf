/**
 * Keyval switches reach a running replica through a real control plane and Redis, without a reload:
 * the seed's pattern (keyval → map → limit_req_zone key; an empty key is not accounted) switched on and
 * off for a URI prefix with `?wait=applied`, enforced on the next request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { freePort } from '../helpers/free-port.ts';
import {
  type ControlPlaneRun,
  metricValue,
  type ReplicaRun,
  startControlPlane,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { startUpstream, type TestUpstream } from './http/harness.ts';

describe('replica: keyval switches from the store', () => {
  const dir = new TempDir();
  let redis: RedisServer;
  let upstream: TestUpstream;
  let controlPlane: ControlPlaneRun;
  let replica: ReplicaRun;
  let base: string;

  before(async () => {
    const listen = await freePort();
    [redis, upstream] = await Promise.all([RedisServer.start(), startUpstream()]);
    const config = dir.write(
      'nginx.conf',
      `events {}
http {
    keyval_zone zone=limitreq_uri:64k type=prefix;
    keyval $uri $enablelimit zone=limitreq_uri;
    map $enablelimit $limit_key {
        default "";
        1 $binary_remote_addr;
    }
    limit_req_zone $limit_key zone=switched:1m rate=1r/m;
    upstream backend { server 127.0.0.1:${upstream.port}; }
    server {
        listen ${listen};
        location / { limit_req zone=switched; proxy_pass http://backend; }
    }
}
`,
    );
    [controlPlane, replica] = await Promise.all([
      startControlPlane(['--redis', redis.url, '-c', config]),
      startReplica(config, ['--redis', redis.url, '--id', 'replica-a']),
    ]);
    base = `http://127.0.0.1:${replica.ports[String(listen)]}`;
  });

  after(async () => {
    await stopAll();
    await Promise.all([redis?.stop(), upstream?.close()]);
    dir.remove();
  });

  async function statuses(path: string, n: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < n; i++) {
      const res = await request(`${base}${path}`);
      await res.body.dump();
      out.push(res.statusCode);
    }
    return out;
  }

  async function patch(body: string) {
    const res = await request(
      `${controlPlane.url}/api/9/http/keyvals/limitreq_uri?wait=applied&timeout=20s`,
      {
        method: 'PATCH',
        body,
        headers: { 'content-type': 'application/json' },
      },
    );
    return {
      status: res.statusCode,
      revision: Number(res.headers['x-limitswitch-revision']),
      text: await res.body.text(),
    };
  }

  test('switched off, nothing is limited', async () => {
    assert.deepEqual(await statuses('/coffee/latte', 4), [200, 200, 200, 200]);
  });

  test('switched on for /coffee through the control plane: enforced at once, /tea untouched', async () => {
    const created = await request(
      `${controlPlane.url}/api/9/http/keyvals/limitreq_uri?wait=applied&timeout=20s`,
      {
        method: 'POST',
        body: '{"/coffee":"1"}',
        headers: { 'content-type': 'application/json' },
      },
    );
    assert.equal(created.statusCode, 201, await created.body.text());
    const revision = Number(created.headers['x-limitswitch-revision']);
    assert.deepEqual(await statuses('/coffee/latte', 3), [200, 503, 503]);
    assert.deepEqual(await statuses('/tea', 3), [200, 200, 200]);

    const keyvals = await request(`${replica.statusUrl}/api/9/http/keyvals/limitreq_uri`);
    assert.deepEqual(await keyvals.body.json(), { '/coffee': '1' });
    const metrics = await (await request(`${replica.statusUrl}/metrics`)).body.text();
    assert.equal(metricValue(metrics, 'limitswitch_sync_applied_revision'), revision);
    assert.equal(metricValue(metrics, 'limitswitch_sync_connected'), 1);
  });

  test('switched off again: no longer limited; the process was never reloaded', async () => {
    const off = await patch('{"/coffee":null}');
    assert.equal(off.status, 204, off.text);
    assert.deepEqual(await statuses('/coffee/latte', 3), [200, 200, 200]);
    assert.equal(
      replica.process.lines.some((l) => l.msg === 'configuration reloaded'),
      false,
    );
    // Only the one switched-on key was ever accounted.
    const counted = { passed: 1, delayed: 0, rejected: 2, delayed_dry_run: 0, rejected_dry_run: 0 };
    const limits = await request(`${replica.statusUrl}/api/9/http/limit_reqs/switched`);
    assert.deepEqual(await limits.body.json(), counted);
    // The replica flushes every second: the cluster view catches up while it keeps running.
    await waitFor(
      async () => {
        const res = await request(`${controlPlane.url}/api/9/http/limit_reqs/switched`);
        return JSON.stringify(await res.body.json()) === JSON.stringify(counted);
      },
      { timeoutMs: 20_000, intervalMs: 100, message: 'the cluster totals' },
    );
  });
});
