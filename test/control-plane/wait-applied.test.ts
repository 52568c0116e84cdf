import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseWaitTimeout } from '../../src/control-plane/wait-applied.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { assertMatchesSpec, assertNginxError, buildApp, JSON_HEADERS, replicaInfo } from './harness.ts';

const TTL_MS = 60_000;

describe('?wait=applied', () => {
  it('parses nginx times, defaults to 2 s and caps at 60 s', () => {
    assert.equal(parseWaitTimeout(undefined), 2000);
    assert.equal(parseWaitTimeout('250ms'), 250);
    assert.equal(parseWaitTimeout('3s'), 3000);
    assert.equal(parseWaitTimeout('3'), 3000);
    assert.equal(parseWaitTimeout('1m'), 60_000);
    assert.equal(parseWaitTimeout('5m'), 60_000);
    assert.throws(() => parseWaitTimeout('2h'), {
      code: 'QueryFormatError',
      message: 'invalid "timeout" argument',
    });
  });

  it('a lagging live replica gives 202 with the laggards; a dead replica is not waited for', async () => {
    const { app, store } = await buildApp({ waitPollMs: 5 });
    await store.registry.heartbeat(replicaInfo('fast', 0), TTL_MS);
    await store.registry.heartbeat(replicaInfo('slow', 0), TTL_MS);
    await store.registry.heartbeat(replicaInfo('dead', 0), 1);
    await waitFor(async () => (await store.registry.replicas()).some((r) => r.id === 'dead' && !r.live));

    // `fast` applies every revision as soon as it appears, like a subscribed replica.
    const unsubscribe = await store.keyvals.subscribe((change) => {
      void store.registry.heartbeat(replicaInfo('fast', change.revision), TTL_MS);
    });
    const res = await app.inject({
      method: 'POST',
      url: '/api/9/http/keyvals/zone_one?wait=applied&timeout=300ms',
      payload: '{"a":"1"}',
      headers: JSON_HEADERS,
    });
    await unsubscribe();
    assert.equal(res.statusCode, 202);
    assert.equal(res.headers['x-limitswitch-revision'], '1');
    assertMatchesSpec('postHttpKeyvalZone', res);
    assert.deepEqual(JSON.parse(res.body), {
      revision: 1,
      applied: false,
      laggards: [{ id: 'slow', applied_revision: 0 }],
    });
    // The write itself is done.
    assert.equal((await store.keyvals.getZone('zone_one', Date.now())).a?.value, '1');
  });

  it('answers the normal status as soon as every live replica reports the revision', async () => {
    const { app, store } = await buildApp({ waitPollMs: 5 });
    await store.registry.heartbeat(replicaInfo('r1', 0), TTL_MS);
    await store.registry.heartbeat(replicaInfo('r2', 0), TTL_MS);
    await store.registry.heartbeat(replicaInfo('dead', 0), 1);
    await waitFor(async () => (await store.registry.replicas()).some((r) => r.id === 'dead' && !r.live));
    // A write that fails answers at once: there is nothing to wait for.
    const failed = await app.inject({
      method: 'PATCH',
      url: '/api/9/http/keyvals/zone_one/?wait=applied&timeout=30s',
      payload: '{"a":null}',
      headers: JSON_HEADERS,
    });
    assertNginxError(failed, 404, 'KeyvalKeyNotFound');

    await store.keyvals.add('zone_one', { a: { value: '1', expireAtMs: null } });
    const deleting = app.inject({
      method: 'PATCH',
      url: '/api/9/http/keyvals/zone_one/?wait=applied&timeout=30s',
      payload: '{"a":null}',
      headers: JSON_HEADERS,
    });
    await waitFor(async () => (await store.keyvals.head()).revision === 2, {
      message: 'the PATCH to commit',
    });
    await store.registry.heartbeat(replicaInfo('r1', 2), TTL_MS);
    await store.registry.heartbeat(replicaInfo('r2', 2), TTL_MS);
    const res = await deleting;
    assert.equal(res.statusCode, 204);
    assert.equal(res.headers['x-limitswitch-revision'], '2');
  });

  it('with no live replica at all the wait ends at once; a bad timeout changes nothing', async () => {
    const { app, store } = await buildApp();
    const res = await app.inject({
      method: 'DELETE',
      url: '/api/9/http/keyvals/zone_one?wait=applied&timeout=60s',
    });
    assert.equal(res.statusCode, 204);
    assertNginxError(
      await app.inject({
        method: 'POST',
        url: '/api/9/http/keyvals/zone_one?wait=applied&timeout=soon',
        payload: '{"a":"1"}',
        headers: JSON_HEADERS,
      }),
      400,
      'QueryFormatError',
      'invalid "timeout" argument',
    );
    assertNginxError(
      await app.inject({
        method: 'POST',
        url: '/api/9/http/keyvals/zone_one?wait=yes',
        payload: '{"a":"1"}',
        headers: JSON_HEADERS,
      }),
      400,
      'QueryFormatError',
      'invalid "wait" argument',
    );
    assert.equal((await store.keyvals.head()).revision, 1);
  });
});
