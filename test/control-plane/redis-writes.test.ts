/**
 * Writes over HTTP against a real Redis: concurrent POSTs of one key, and writes while Redis is away
 * (503 in NGINX's shape within a bounded time, nothing half-applied).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ControlPlaneServer, startControlPlaneServer } from '../../src/control-plane/server.ts';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import type { Store } from '../../src/store/store.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { assertNginxError, isNginxError, JSON_HEADERS } from './harness.ts';

const ZONE = { name: 'zone_one', type: 'string', timeoutMs: null, sizeBytes: null } as const;

async function request(method: string, url: string, body?: string) {
  const res = await fetch(url, { method, ...(body === undefined ? {} : { body, headers: JSON_HEADERS }) });
  return { statusCode: res.status, body: await res.text(), headers: Object.fromEntries(res.headers) };
}

describe('writes on Redis over HTTP', () => {
  let redis: RedisServer;
  let store: Store;
  let server: ControlPlaneServer;

  before(async () => {
    redis = await RedisServer.start({ persistence: true });
    store = openRedisStore({ url: redis.url, commandTimeoutMs: 2000 });
    server = await startControlPlaneServer({ store, keyvalZones: [ZONE], host: '127.0.0.1', port: 0 });
  });

  after(async () => {
    await server.close();
    await store.close();
    await redis.stop();
  });

  it('100 concurrent POSTs of one key: exactly one 201, 99 × 409', async () => {
    const url = `${server.url}/api/9/http/keyvals/zone_one`;
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => request('POST', url, JSON.stringify({ race: `v${i}` }))),
    );
    const created = answers.filter((a) => a.statusCode === 201);
    const conflicts = answers.filter((a) => a.statusCode === 409);
    assert.equal(created.length, 1);
    assert.equal(conflicts.length, 99);
    for (const conflict of conflicts) {
      assert.ok(isNginxError(409, conflict.body));
      assert.equal(JSON.parse(conflict.body).error.text, 'key "race" already exists');
    }
    const winner = created[0]!.headers['x-limitswitch-revision'];
    assert.equal(String((await store.keyvals.head()).revision), winner);
    assert.match((await store.keyvals.getZone('zone_one', Date.now())).race!.value, /^v[0-9]+$/);
    assert.equal((await store.audit.recent(10)).filter((e) => e.key === 'race').length, 1);
  });

  it('Redis killed: writes answer 503 StoreUnavailable in bounded time; after restart nothing was applied', async () => {
    const url = `${server.url}/api/9/http/keyvals/zone_one`;
    await request('DELETE', url);
    assert.equal((await request('POST', url, '{"a":"1"}')).statusCode, 201);
    const revision = (await store.keyvals.head()).revision;
    await redis.kill();

    const startMs = performance.now();
    assertNginxError(
      await request('POST', url, '{"b":"2"}'),
      503,
      'StoreUnavailable',
      'keyval store unavailable',
    );
    assertNginxError(await request('PATCH', `${url}/`, '{"a":"3"}'), 503, 'StoreUnavailable');
    assertNginxError(await request('DELETE', `${url}/`), 503, 'StoreUnavailable');
    assertNginxError(await request('GET', `${server.url}/readyz`), 503, 'StoreUnavailable');
    // Four requests, each bounded by the 2 s store timeout; generous for a loaded machine.
    assert.ok(performance.now() - startMs < 4 * 2000 + 4000, `took ${performance.now() - startMs} ms`);
    assert.equal((await request('GET', `${server.url}/healthz`)).statusCode, 200);

    await redis.restart();
    await waitFor(async () => (await request('GET', `${server.url}/readyz`)).statusCode === 200, {
      timeoutMs: 20_000,
      message: 'the control plane to reach Redis again',
    });
    assert.equal((await store.keyvals.head()).revision, revision);
    assert.deepEqual(JSON.parse((await request('GET', url)).body), { a: '1' });
  });

  it('Redis frozen: a write answers 503 within about the store timeout', async () => {
    const url = `${server.url}/api/9/http/keyvals/zone_one`;
    redis.pause();
    try {
      const startMs = performance.now();
      assertNginxError(await request('POST', url, '{"frozen":"1"}'), 503, 'StoreUnavailable');
      const tookMs = performance.now() - startMs;
      assert.ok(tookMs >= 1500 && tookMs < 8000, `took ${tookMs} ms`);
    } finally {
      redis.resume();
    }
  });
});
