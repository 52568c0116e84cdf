/** limit_conns: the same cluster-wide counters as limit_reqs, for the limit_conn zones. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addCounters, assertMatchesSpec, assertNginxError, buildApp, replicaInfo } from './harness.ts';

const c = (passed: number, rejected: number, rd = 0) => ({ passed, rejected, rejected_dry_run: rd });

async function seeded() {
  const built = await buildApp({ limitConnZones: ['configured_only'] });
  const { store } = built;
  await store.registry.heartbeat({ ...replicaInfo('a', 0), limitConnZones: ['addr', 'idle'] }, 60_000);
  await store.registry.heartbeat({ ...replicaInfo('b', 0), limitConnZones: ['addr'] }, 60_000);
  await addCounters(store, 'a', { addr: c(10, 3, 1) }, 'limit_conn');
  await addCounters(store, 'b', { addr: c(5, 1) }, 'limit_conn');
  // limit_req counters of the same name are another family
  await addCounters(store, 'a', {
    addr: { passed: 99, delayed: 0, rejected: 0, delayed_dry_run: 0, rejected_dry_run: 0 },
  });
  return built;
}

describe('limit_conns: cluster-wide sums', () => {
  it('GET /api/9/http/limit_conns/ and /limit_conns sum every replica; known zones without counts are zeros', async () => {
    const { app } = await seeded();
    for (const url of ['/api/9/http/limit_conns', '/api/9/http/limit_conns/', '/limit_conns']) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.deepEqual(JSON.parse(res.body), { addr: c(15, 4, 1), configured_only: c(0, 0), idle: c(0, 0) });
    }
    assertMatchesSpec(
      'getHttpLimitConns',
      await app.inject({ method: 'GET', url: '/api/9/http/limit_conns' }),
    );
    const byReplica = await app.inject({ method: 'GET', url: '/limit_conns?by=replica&fields=passed' });
    assert.deepEqual(JSON.parse(byReplica.body), {
      a: { addr: { passed: 10 }, idle: { passed: 0 } },
      b: { addr: { passed: 5 } },
    });
    assertMatchesSpec('getClusterLimitConns', byReplica);
  });

  it('one zone; unknown zone 404 LimitConnNotFound; DELETE resets it everywhere', async () => {
    const { app } = await seeded();
    const one = await app.inject({ method: 'GET', url: '/api/9/http/limit_conns/addr' });
    assert.equal(one.body, '{"passed":15,"rejected":4,"rejected_dry_run":1}');
    assertMatchesSpec('getHttpLimitConnZone', one);
    assertNginxError(
      await app.inject({ method: 'GET', url: '/api/9/http/limit_conns/nope' }),
      404,
      'LimitConnNotFound',
    );
    const reset = await app.inject({ method: 'DELETE', url: '/api/9/http/limit_conns/addr' });
    assert.equal(reset.statusCode, 204);
    const after = await app.inject({ method: 'GET', url: '/api/9/http/limit_conns/addr' });
    assert.equal(after.body, '{"passed":0,"rejected":0,"rejected_dry_run":0}');
    // the limit_req family is untouched
    const req = await app.inject({ method: 'GET', url: '/api/9/http/limit_reqs/addr' });
    assert.equal(JSON.parse(req.body).passed, 99);
  });
});
