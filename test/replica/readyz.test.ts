/**
 * `/readyz` of a replica process: 503 while no keyval state is loaded (the store is down at start and
 * there is no state file), 200 once the store answers; `/healthz` answers all along. Issue 18 §3.10:
 * with Redis gone afterwards it stays 200 — the replica enforces its last state (fail-static), and
 * taking every replica out of service would turn a store outage into an ingress outage — and says
 * `connected: false` with the reason, as the docs said.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { freePort } from '../helpers/free-port.ts';
import {
  metricValue,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

describe('replica: readiness', () => {
  const dir = new TempDir();
  let redis: RedisServer;
  let replica: ReplicaRun;

  before(async () => {
    redis = await RedisServer.start();
    await redis.kill();
    const config = dir.write(
      'nginx.conf',
      `events {}
http {
    keyval_zone zone=switches:64k;
    keyval $server_name $switch zone=switches;
    server {
        listen 127.0.0.1:${await freePort()};
        location / { return 200 "$switch\\n"; }
    }
}
`,
    );
    replica = await startReplica(config, ['--redis', redis.url]);
  });

  after(async () => {
    await stopAll();
    await redis?.stop();
    dir.remove();
  });

  async function get(path: string) {
    const res = await request(`${replica.statusUrl}${path}`);
    return { status: res.statusCode, text: await res.body.text() };
  }

  test('not ready while the store is down and no state was ever loaded', async () => {
    const ready = await get('/readyz');
    assert.equal(ready.status, 503, ready.text);
    assert.deepEqual(JSON.parse(ready.text).error, {
      status: 503,
      text: 'keyval state not loaded yet',
      code: 'StoreUnavailable',
    });
    assert.equal((await get('/healthz')).status, 200);
    assert.equal(metricValue((await get('/metrics')).text, 'limitswitch_sync_connected'), 0);
  });

  test('ready once the store answers', async () => {
    await redis.restart();
    await waitFor(async () => (await get('/readyz')).status === 200, {
      timeoutMs: 20_000,
      intervalMs: 50,
      message: '/readyz to turn 200',
    });
    assert.deepEqual(JSON.parse((await get('/readyz')).text), {
      status: 'ready',
      revision: 0,
      connected: true,
      source: 'store',
      lastError: null,
    });
    assert.equal(metricValue((await get('/metrics')).text, 'limitswitch_sync_connected'), 1);
  });

  test('still ready with the store gone again (fail-static), and /readyz says it is not connected', async () => {
    await redis.kill();
    await waitFor(async () => JSON.parse((await get('/readyz')).text).connected === false, {
      timeoutMs: 20_000,
      intervalMs: 50,
      message: '/readyz to say connected: false',
    });
    const ready = await get('/readyz');
    assert.equal(ready.status, 200, ready.text);
    const body = JSON.parse(ready.text);
    assert.equal(body.status, 'ready');
    assert.equal(body.source, 'store');
    assert.equal(typeof body.lastError, 'string');
  });
});
