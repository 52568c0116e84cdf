import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ControlPlaneMetrics } from '../../src/metrics/control-plane-metrics.ts';
import { assertMatchesSpec, assertNginxError, buildApp, JSON_HEADERS, replicaInfo } from './harness.ts';

function value(metrics: string, series: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('/metrics, /healthz, /readyz', () => {
  it('counts API requests by route and code, mutations by zone and op, store latency, live replicas', async () => {
    const { app, store } = await buildApp();
    await store.registry.heartbeat(replicaInfo('r1', 0), 60_000);
    await store.registry.heartbeat(replicaInfo('r2', 0), 60_000);
    await store.registry.heartbeat(replicaInfo('r3', 0), 60_000);
    await store.registry.deregister('r3');
    const url = '/api/9/http/keyvals/zone_one';
    await app.inject({ method: 'POST', url, payload: '{"a":"1"}', headers: JSON_HEADERS });
    await app.inject({ method: 'POST', url, payload: '{"a":"1"}', headers: JSON_HEADERS });
    await app.inject({ method: 'PATCH', url, payload: '{"a":"2"}', headers: JSON_HEADERS });
    await app.inject({ method: 'GET', url: '/nope' });

    const res = await app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/plain/);
    const text = res.body;
    const requests = 'limitswitch_api_requests_total';
    assert.equal(value(text, `${requests}{route="postHttpKeyvalZone",method="POST",code="201"}`), 1);
    assert.equal(value(text, `${requests}{route="postHttpKeyvalZone",method="POST",code="409"}`), 1);
    assert.equal(value(text, `${requests}{route="patchHttpKeyvalZone",method="PATCH",code="204"}`), 1);
    assert.equal(value(text, `${requests}{route="unmatched",method="GET",code="404"}`), 1);
    assert.equal(value(text, 'limitswitch_keyval_mutations_total{zone="zone_one",op="add"}'), 1);
    assert.equal(value(text, 'limitswitch_keyval_mutations_total{zone="zone_one",op="change"}'), 1);
    assert.equal(value(text, 'limitswitch_store_request_duration_seconds_count{op="add",outcome="ok"}'), 2);
    assert.equal(value(text, 'limitswitch_replicas_live'), 2);
  });

  it('process metrics are optional', async () => {
    const metrics = new ControlPlaneMetrics({ processMetrics: true });
    assert.match(await metrics.text(), /^limitswitch_control_plane_process_cpu_seconds_total /m);
    assert.doesNotMatch(await new ControlPlaneMetrics().text(), /process_cpu/);
  });

  it('healthz answers while the process runs; readyz only while the store answers', async () => {
    const { app, store } = await buildApp();
    const healthy = await app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(healthy.body, '{"status":"ok"}');
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    assertMatchesSpec('getReadyz', ready);
    assert.equal(ready.body, '{"status":"ready","revision":0}');
    await store.close();
    assertNginxError(
      await app.inject({ method: 'GET', url: '/readyz' }),
      503,
      'StoreUnavailable',
      'keyval store unavailable',
    );
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    assertNginxError(
      await app.inject({
        method: 'POST',
        url: '/api/9/http/keyvals/zone_one',
        payload: '{"a":"1"}',
        headers: JSON_HEADERS,
      }),
      503,
      'StoreUnavailable',
    );
  });
});
