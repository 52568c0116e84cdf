import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LimitReqCounters } from '../../src/engine/limit-req/limit-req-zone.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { addCounters, assertMatchesSpec, assertNginxError, buildApp, replicaInfo } from './harness.ts';

const c = (passed: number, delayed: number, rejected: number, dd = 0, rd = 0): LimitReqCounters => ({
  passed,
  delayed,
  rejected,
  delayed_dry_run: dd,
  rejected_dry_run: rd,
});

/** Two live replicas and one that stopped (its counts still count). */
async function seeded() {
  const built = await buildApp({ limitReqZones: ['configured_only'] });
  const { store } = built;
  await store.registry.heartbeat(replicaInfo('a', 0, ['req_zone_10', 'idle_zone']), 60_000);
  await store.registry.heartbeat(replicaInfo('b', 0, ['req_zone_10']), 60_000);
  await store.registry.heartbeat(replicaInfo('gone', 0, ['req_zone_10', 'old_zone']), 60_000);
  await store.registry.deregister('gone');
  await addCounters(store, 'a', { req_zone_10: c(10, 2, 3, 1, 0) });
  await addCounters(store, 'b', { req_zone_10: c(5, 0, 1, 0, 2) });
  await addCounters(store, 'gone', { req_zone_10: c(100, 0, 0), old_zone: c(7, 0, 0) });
  return built;
}

describe('limit_reqs: cluster-wide sums', () => {
  it('GET /api/9/http/limit_reqs/ sums every replica, stopped ones included; known zones without counts are zeros', async () => {
    const { app } = await seeded();
    for (const url of [
      '/api/9/http/limit_reqs',
      '/api/9/http/limit_reqs/',
      '/api/6/http/limit_reqs',
      '/limit_reqs',
      '/limit_reqs/',
    ]) {
      const res = await app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      assert.deepEqual(JSON.parse(res.body), {
        configured_only: c(0, 0, 0),
        idle_zone: c(0, 0, 0),
        old_zone: c(7, 0, 0),
        req_zone_10: c(115, 2, 4, 1, 2),
      });
    }
    assertMatchesSpec('getHttpLimitReqs', await app.inject({ method: 'GET', url: '/api/9/http/limit_reqs' }));
  });

  it('one zone, with fields; empty fields gives names only; unknown zone 404 LimitReqNotFound', async () => {
    const { app } = await seeded();
    const one = await app.inject({ method: 'GET', url: '/api/9/http/limit_reqs/req_zone_10' });
    assert.equal(
      one.body,
      '{"passed":115,"delayed":2,"rejected":4,"delayed_dry_run":1,"rejected_dry_run":2}',
    );
    assertMatchesSpec('getHttpLimitReqZone', one);
    // Issue 18 §3.11: the short form answers for one zone too, as `/limit_reqs` does for all.
    for (const url of ['/limit_reqs/req_zone_10', '/limit_reqs/req_zone_10/']) {
      const short = await app.inject({ method: 'GET', url });
      assert.equal(short.statusCode, 200, url);
      assert.equal(short.body, one.body);
      assertMatchesSpec('getClusterLimitReqZone', short);
    }
    assertNginxError(
      await app.inject({ method: 'GET', url: '/limit_reqs/nope' }),
      404,
      'LimitReqNotFound',
      'limit_req not found',
    );
    const some = await app.inject({
      method: 'GET',
      url: '/api/9/http/limit_reqs/req_zone_10/?fields=passed,rejected',
    });
    assert.equal(some.body, '{"passed":115,"rejected":4}');
    const names = await app.inject({ method: 'GET', url: '/api/9/http/limit_reqs?fields=' });
    assert.equal(names.body, '{"configured_only":{},"idle_zone":{},"old_zone":{},"req_zone_10":{}}');
    assertNginxError(
      await app.inject({ method: 'GET', url: '/api/9/http/limit_reqs/nope' }),
      404,
      'LimitReqNotFound',
      'limit_req not found',
    );
  });

  it('before API 6 the endpoint does not exist', async () => {
    const { app } = await seeded();
    assertNginxError(
      await app.inject({ method: 'GET', url: '/api/5/http/limit_reqs' }),
      404,
      'PathNotFound',
      'path not found',
    );
  });

  // Issue 18 §3.11: a zone a replica reports but nothing hit yet was left out of its breakdown.
  it('/limit_reqs?by=replica breaks the sums down per replica, zones without counts as zeros', async () => {
    const { app } = await seeded();
    const res = await app.inject({ method: 'GET', url: '/limit_reqs?by=replica&fields=passed' });
    assertMatchesSpec('getClusterLimitReqs', res);
    assert.equal(
      res.body,
      JSON.stringify({
        a: { idle_zone: { passed: 0 }, req_zone_10: { passed: 10 } },
        b: { req_zone_10: { passed: 5 } },
        gone: { old_zone: { passed: 7 }, req_zone_10: { passed: 100 } },
      }),
    );
    assertNginxError(
      await app.inject({ method: 'GET', url: '/limit_reqs?by=zone' }),
      400,
      'QueryFormatError',
      'invalid "by" argument',
    );
  });

  it('DELETE resets one zone on every replica record (204, revision header); there is no DELETE on the collection', async () => {
    const { app, store } = await seeded();
    const res = await app.inject({ method: 'DELETE', url: '/api/9/http/limit_reqs/req_zone_10/' });
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['x-limitswitch-revision'], '0');
    const after = JSON.parse((await app.inject({ method: 'GET', url: '/limit_reqs' })).body);
    assert.deepEqual(after.req_zone_10, c(0, 0, 0));
    assert.deepEqual(after.old_zone, c(7, 0, 0));
    const audit = await store.audit.recent(1);
    assert.equal(audit[0]!.zone, 'req_zone_10');
    assertNginxError(
      await app.inject({ method: 'DELETE', url: '/api/9/http/limit_reqs' }),
      405,
      'MethodNotSupported',
    );
    assertNginxError(
      await app.inject({ method: 'DELETE', url: '/api/9/http/limit_reqs/nope' }),
      404,
      'LimitReqNotFound',
    );
  });
});

describe('GET /cluster/replicas', () => {
  it('lists every replica with its state: live, lagging, gone', async () => {
    const { app, store } = await buildApp();
    await store.keyvals.add('zone_one', { a: { value: '1', expireAtMs: null } });
    await store.keyvals.add('zone_one', { b: { value: '1', expireAtMs: null } });
    await store.registry.heartbeat(replicaInfo('r1', 2, ['z']), 60_000);
    await store.registry.heartbeat(replicaInfo('r2', 1), 60_000);
    await store.registry.heartbeat(replicaInfo('r3', 2), 1);
    await waitFor(async () => (await store.registry.replicas()).some((r) => r.id === 'r3' && !r.live));
    const res = await app.inject({ method: 'GET', url: '/cluster/replicas' });
    assertMatchesSpec('getClusterReplicas', res);
    const body = JSON.parse(res.body) as { revision: number; replicas: Record<string, unknown>[] };
    assert.equal(body.revision, 2);
    assert.deepEqual(
      body.replicas.map((r) => [r.id, r.state, r.applied_revision]),
      [
        ['r1', 'live', 2],
        ['r2', 'lagging', 1],
        ['r3', 'gone', 2],
      ],
    );
    const r1 = body.replicas[0]!;
    assert.equal(r1.config_hash, 'abc123');
    assert.equal(r1.version, '0.1.0');
    assert.equal(r1.started_at, new Date(1_700_000_000_000).toISOString());
    assert.deepEqual(r1.limit_req_zones, ['z']);
  });
});
