/**
 * Rejections on a replica process: the zone's `limit_req_status` (default 503) with nginx's page,
 * 444 closing the connection without an answer, `Retry-After` only with the `limit_req_retry_after`
 * extension, dry run passing what it would reject; and the replica's status API and metrics count
 * exactly what the clients saw.
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
import { nginxPage, rawRequest, startUpstream, type TestUpstream } from './http/harness.ts';

// 1r/m: a second request right after the first is over any burst of 0 (excess 1.000, 16 milli-requests
// drained per second), whatever the machine's load.
const ZONES = ['plain', 'toomany', 'closed', 'retry', 'dry'];

describe('replica: rejected requests', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let replica: ReplicaRun;
  let port: number;

  before(async () => {
    const listen = await freePort();
    upstream = await startUpstream();
    const zones = ZONES.map((z) => `    limit_req_zone $binary_remote_addr zone=${z}:1m rate=1r/m;`).join(
      '\n',
    );
    const config = dir.write(
      'nginx.conf',
      `events {}
http {
${zones}
    upstream backend { server 127.0.0.1:${upstream.port}; }
    server {
        listen ${listen};
        location /plain { limit_req zone=plain; proxy_pass http://backend; }
        location /toomany { limit_req zone=toomany; limit_req_status 429; proxy_pass http://backend; }
        location /closed { limit_req zone=closed; limit_req_status 444; proxy_pass http://backend; }
        location /retry {
            limit_req zone=retry burst=1 nodelay;
            limit_req_status 429;
            limit_req_retry_after on;
            proxy_pass http://backend;
        }
        location /dry { limit_req zone=dry; limit_req_dry_run on; proxy_pass http://backend; }
    }
}
`,
    );
    replica = await startReplica(config);
    port = replica.ports[String(listen)]!;
  });

  after(async () => {
    await stopAll();
    await upstream?.close();
    dir.remove();
  });

  async function get(path: string) {
    const res = await request(`http://127.0.0.1:${port}${path}`);
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  test('default limit_req_status 503 with nginx page; nothing reaches the upstream', async () => {
    assert.equal((await get('/plain')).status, 200);
    const before = upstream.requests.length;
    const rejected = await get('/plain');
    assert.equal(rejected.status, 503);
    assert.equal(rejected.text, nginxPage('503 Service Temporarily Unavailable'));
    assert.equal(rejected.headers['content-type'], 'text/html');
    assert.equal(rejected.headers['retry-after'], undefined);
    assert.equal(upstream.requests.length, before);
  });

  test('limit_req_status 429 answers 429 with its page', async () => {
    assert.equal((await get('/toomany')).status, 200);
    const rejected = await get('/toomany');
    assert.equal(rejected.status, 429);
    assert.equal(rejected.text, nginxPage('429 Too Many Requests'));
  });

  test('limit_req_status 444 closes the connection without a response', async () => {
    assert.equal((await get('/closed')).status, 200);
    const out = await rawRequest(port, ['GET /closed HTTP/1.1', 'Host: localhost']);
    assert.deepEqual(out, { closedWithoutResponse: true });
    // The listener is unharmed.
    assert.equal((await get('/plain/after')).status, 503);
  });

  test('limit_req_retry_after on: Retry-After from the bucket (whole seconds, rounded up)', async () => {
    assert.equal((await get('/retry')).status, 200);
    assert.equal((await get('/retry')).status, 200);
    const rejected = await get('/retry');
    assert.equal(rejected.status, 429);
    // excess ≈ 2000 milli over a burst of 1000 at 16 milli/s: ≈ 62.5 s until it would pass.
    const seconds = Number(rejected.headers['retry-after']);
    assert.ok(Number.isInteger(seconds) && seconds >= 50 && seconds <= 63, `Retry-After ${seconds}`);
  });

  test('dry run passes what it would reject', async () => {
    assert.equal((await get('/dry')).status, 200);
    assert.equal((await get('/dry')).status, 200);
  });

  test("the replica's Plus API and /metrics count what the clients saw, per zone", async () => {
    const api = await request(`${replica.statusUrl}/api/9/http/limit_reqs/`);
    assert.deepEqual(await api.body.json(), {
      plain: { passed: 1, delayed: 0, rejected: 2, delayed_dry_run: 0, rejected_dry_run: 0 },
      toomany: { passed: 1, delayed: 0, rejected: 1, delayed_dry_run: 0, rejected_dry_run: 0 },
      closed: { passed: 1, delayed: 0, rejected: 1, delayed_dry_run: 0, rejected_dry_run: 0 },
      retry: { passed: 2, delayed: 0, rejected: 1, delayed_dry_run: 0, rejected_dry_run: 0 },
      dry: { passed: 1, delayed: 0, rejected: 0, delayed_dry_run: 0, rejected_dry_run: 1 },
    });
    const metrics = await (await request(`${replica.statusUrl}/metrics`)).body.text();
    assert.match(
      metrics,
      /# HELP nginxplus_limit_request_rejected Total number of requests that were rejected\n# TYPE nginxplus_limit_request_rejected counter\n/,
    );
    assert.equal(metricValue(metrics, 'nginxplus_limit_request_rejected{zone="plain"}'), 2);
    assert.equal(metricValue(metrics, 'nginxplus_limit_request_passed{zone="retry"}'), 2);
    assert.equal(metricValue(metrics, 'nginxplus_limit_request_rejected_dry_run{zone="dry"}'), 1);
    // Latency by status code, the closed connection as nginx logs it (444).
    assert.equal(metricValue(metrics, 'limitswitch_request_duration_seconds_count{code="503"}'), 2);
    assert.equal(metricValue(metrics, 'limitswitch_request_duration_seconds_count{code="429"}'), 2);
    assert.equal(metricValue(metrics, 'limitswitch_request_duration_seconds_count{code="444"}'), 1);
    assert.equal(metricValue(metrics, 'limitswitch_request_duration_seconds_count{code="200"}'), 7);
  });
});
