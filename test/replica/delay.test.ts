/**
 * Delayed requests on a replica process: held for nginx's delay, then proxied; a client that goes away
 * while held is released at once (the upstream never sees it), counted in
 * `limitswitch_client_closed_total{phase="delay"}` and logged as 499.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
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
import { waitFor } from '../helpers/wait-for.ts';
import { startUpstream, type TestUpstream } from './http/harness.ts';

describe('replica: delayed requests', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let replica: ReplicaRun;
  let port: number;

  before(async () => {
    const listen = await freePort();
    upstream = await startUpstream();
    const config = dir.write(
      'nginx.conf',
      `events {}
http {
    limit_req_zone $binary_remote_addr zone=second:1m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=minute:1m rate=1r/m;
    upstream backend { server 127.0.0.1:${upstream.port}; }
    server {
        listen ${listen};
        location /second { limit_req zone=second burst=5; proxy_pass http://backend; }
        location /minute { limit_req zone=minute burst=5; proxy_pass http://backend; }
    }
}
`,
    );
    // Delays are logged one level below limit_req_log_level (error → warn).
    replica = await startReplica(config, [
      '--error-log-level',
      'warn',
      '--access-log',
      dir.file('access.log'),
    ]);
    port = replica.ports[String(listen)]!;
  });

  after(async () => {
    await stopAll();
    await upstream?.close();
    dir.remove();
  });

  test('a delayed request is held for the delay nginx computes, then proxied', async () => {
    const first = await request(`http://127.0.0.1:${port}/second/a`);
    assert.equal(first.statusCode, 200);
    await first.body.dump();
    const sentMs = performance.now();
    const upstreamSeen = upstream.nextStarted().then(() => performance.now());
    const second = await request(`http://127.0.0.1:${port}/second/b`);
    const answeredMs = performance.now();
    assert.equal(second.statusCode, 200);
    await second.body.dump();
    // nginx's delay is excess / rate: at 1r/s, excess 0.985 means 985 ms.
    const line = await waitFor(() =>
      /delaying request, excess: (\d+\.\d{3}), by zone "second"/.test(stderr()),
    );
    void line;
    const excess = Number(/delaying request, excess: (\d+\.\d{3}), by zone "second"/.exec(stderr())![1]);
    const delayMs = excess * 1000;
    assert.ok(delayMs > 500, `the delay (${delayMs} ms) is most of a second`);
    assert.ok(
      answeredMs - sentMs >= delayMs,
      `answered after ${answeredMs - sentMs} ms, delay ${delayMs} ms`,
    );
    assert.ok((await upstreamSeen) - sentMs >= delayMs, 'the upstream saw it only after the delay');
    assert.equal(upstream.requests.at(-1)?.url, '/second/b');
  });

  test('a client that disconnects while held is released at once; nothing is proxied', async () => {
    const first = await request(`http://127.0.0.1:${port}/minute/a`);
    assert.equal(first.statusCode, 200);
    await first.body.dump();
    const upstreamBefore = upstream.started.length;
    const metricsBefore = await metrics();
    assert.equal(metricValue(metricsBefore, 'limitswitch_client_closed_total{phase="delay"}'), 0);

    // At 1r/m the second request is held for about a minute.
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write('GET /minute/held HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await waitFor(() => stderr().includes('by zone "minute"'), { message: 'the delay to be logged' });
    const closedAtMs = performance.now();
    socket.destroy();

    await waitFor(
      async () => metricValue(await metrics(), 'limitswitch_client_closed_total{phase="delay"}') === 1,
      { timeoutMs: 20_000, message: 'the held request to be released and counted' },
    );
    const releasedAfterMs = performance.now() - closedAtMs;
    assert.ok(releasedAfterMs < 20_000, `released ${releasedAfterMs} ms after the client left`);
    await waitFor(() => /"GET \/minute\/held HTTP\/1\.1" 499 0 /.test(dir.read('access.log')), {
      message: 'the 499 access-log line',
    });
    assert.equal(upstream.started.length, upstreamBefore, 'the upstream never saw the held request');
    const api = await request(`${replica.statusUrl}/api/9/http/limit_reqs/minute`);
    assert.deepEqual(await api.body.json(), {
      passed: 1,
      delayed: 1,
      rejected: 0,
      delayed_dry_run: 0,
      rejected_dry_run: 0,
    });
  });

  function stderr(): string {
    return replica.process.stderr;
  }

  async function metrics(): Promise<string> {
    return (await request(`${replica.statusUrl}/metrics`)).body.text();
  }
});
