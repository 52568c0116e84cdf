/**
 * The `api_rate_limit` extension (Cilium's API rate limiter) on a replica process: requests wait
 * within max-wait-duration, then 429; and with auto-adjust, the parallel-requests limit follows the
 * upstream's measured latency — halving when it doubles (within mean-over samples), held by
 * max-adjustment-factor when it quadruples, back when it returns.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import {
  metricValue,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';

/** An upstream that answers after `latencyMs`. */
class SlowUpstream {
  latencyMs = 0;
  readonly server: Server = createServer((_req, res) => {
    setTimeout(() => res.end('ok'), this.latencyMs);
  });
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }
}

function config(listen: number, upstream: number): string {
  return `events {}
http {
    # Cilium's endpoint-create (0.5/s, burst 4, 4 in parallel), its times scaled down.
    api_rate_limit_zone create rate-limit=1/s rate-burst=4 parallel-requests=4 max-wait-duration=1200ms;
    api_rate_limit_zone adjusting parallel-requests=8 min-parallel-requests=1 max-parallel-requests=8
        auto-adjust=true estimated-processing-duration=100ms mean-over=5 delayed-adjustment-factor=1
        max-adjustment-factor=3 max-wait-duration=30s;
    server {
        listen 127.0.0.1:${listen};
        location /create { api_rate_limit create; proxy_pass http://127.0.0.1:${upstream}; }
        location /adjusting { api_rate_limit adjusting; proxy_pass http://127.0.0.1:${upstream}; }
    }
}
`;
}

describe('api_rate_limit: Cilium’s API limiter on the data path', () => {
  const dir = new TempDir();
  const upstream = new SlowUpstream();
  let replica: ReplicaRun;
  let url: string;

  const get = async (path: string): Promise<{ status: number; ms: number }> => {
    const started = performance.now();
    const res = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(30_000) });
    await res.arrayBuffer();
    return { status: res.status, ms: performance.now() - started };
  };
  const metric = async (series: string): Promise<number> =>
    metricValue(await (await fetch(`${replica.statusUrl}/metrics`)).text(), series);

  before(async () => {
    await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
    const listen = await freePort();
    replica = await startReplica(dir.write('nginx.conf', config(listen, upstream.port)));
    url = `http://127.0.0.1:${replica.ports[String(listen)]}`;
  });

  after(async () => {
    await stopAll();
    upstream.server.close();
    dir.remove();
  });

  it('waits within max-wait-duration, then 429 (the burst at once, the next after 1 / rate)', async () => {
    upstream.latencyMs = 0;
    const answers = await Promise.all(Array.from({ length: 6 }, () => get('/create')));
    const statuses = answers.map((a) => a.status).sort();
    // 4 from the burst, the 5th after 1 s, the 6th would wait 2 s > 1.2 s
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
    const waited = answers.filter((a) => a.status === 200).sort((x, y) => x.ms - y.ms);
    assert.ok(waited[4]!.ms >= 400, `the fifth waited ${waited[4]!.ms} ms`);
    assert.equal(
      await metric(
        'limitswitch_api_limiter_processed_requests_total{api_call="create",outcome="fail-limit-wait",return_code="429"}',
      ),
      1,
    );
    assert.equal(
      await metric(
        'limitswitch_api_limiter_processed_requests_total{api_call="create",outcome="success",return_code="200"}',
      ),
      5,
    );
  });

  it('auto-adjust: parallel-requests halves when the latency doubles, the clamp holds, and it recovers', async () => {
    const limit = () =>
      metric('limitswitch_api_limiter_requests_in_flight{api_call="adjusting",value="limit"}');
    const run = async (latencyMs: number, samples: number) => {
      upstream.latencyMs = latencyMs;
      for (let i = 0; i < samples; i++) assert.equal((await get('/adjusting')).status, 200);
    };
    const factor = () => metric('limitswitch_api_limiter_adjustment_factor{api_call="adjusting"}');
    // faster than estimated: the factor above 1, the limit held at max-parallel-requests
    await run(60, 5);
    assert.equal(await limit(), 8);
    // twice the estimated time (the proxy adds a few ms): after mean-over (5) samples the factor is
    // about ½, the limit about half of 8
    await run(200, 5);
    const half = await factor();
    assert.ok(half > 0.4 && half <= 0.5, `factor ${half}`);
    assert.ok((await limit()) === 3 || (await limit()) === 4, `limit ${await limit()}`);
    // four times: the factor would be ¼; max-adjustment-factor=3 holds it at ⅓, the limit at 8 / 3
    await run(400, 5);
    assert.equal(await factor(), 1 / 3);
    assert.equal(await limit(), 2);
    // the latency back under the estimate: the limit back to 8
    await run(60, 5);
    assert.equal(await limit(), 8);
    const mean = await metric(
      'limitswitch_api_limiter_processing_duration_seconds{api_call="adjusting",value="mean"}',
    );
    assert.ok(mean >= 0.06 && mean < 0.1, `mean ${mean}`);
  });
});
