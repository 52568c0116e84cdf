/**
 * Debian's prometheus-nginx-exporter, unchanged, in NGINX Plus mode against the control plane: every
 * endpoint it asks for answers, so `nginxplus_up 1`, and the limit_req and limit_conn metrics are the
 * cluster sums.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { type ControlPlaneServer, startControlPlaneServer } from '../../src/control-plane/server.ts';
import { openMemoryStore } from '../../src/store/memory/open-memory-store.ts';
import { freePort } from '../helpers/free-port.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { addCounters } from './harness.ts';

const EXPORTER = '/usr/bin/prometheus-nginx-exporter';

function sample(metrics: string, name: string): number | undefined {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('prometheus-nginx-exporter --nginx.plus scrapes the control plane', () => {
  let server: ControlPlaneServer;
  let exporter: ChildProcess;
  let metricsUrl: string;
  let exporterLog = '';
  const store = openMemoryStore();

  before(async () => {
    await addCounters(store, 'replica-a', {
      req_zone_10: { passed: 40, delayed: 3, rejected: 7, delayed_dry_run: 0, rejected_dry_run: 1 },
    });
    await addCounters(store, 'replica-b', {
      req_zone_10: { passed: 2, delayed: 0, rejected: 5, delayed_dry_run: 2, rejected_dry_run: 0 },
      zone_two: { passed: 9, delayed: 0, rejected: 0, delayed_dry_run: 0, rejected_dry_run: 0 },
    });
    await addCounters(
      store,
      'replica-a',
      { addr: { passed: 20, rejected: 4, rejected_dry_run: 1 } },
      'limit_conn',
    );
    await addCounters(
      store,
      'replica-b',
      { addr: { passed: 1, rejected: 2, rejected_dry_run: 0 } },
      'limit_conn',
    );
    server = await startControlPlaneServer({ store, host: '127.0.0.1', port: 0 });
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${port}/metrics`;
    exporter = spawn(
      EXPORTER,
      ['-nginx.plus', `-nginx.scrape-uri=${server.url}/api`, `-web.listen-address=127.0.0.1:${port}`],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    // Never outlive the test process, whatever happens to it.
    process.once('exit', () => exporter.kill('SIGKILL'));
    exporter.stdout?.on('data', (chunk) => {
      exporterLog += String(chunk);
    });
    exporter.stderr?.on('data', (chunk) => {
      exporterLog += String(chunk);
    });
    await waitFor(
      () =>
        fetch(metricsUrl).then(
          (r) => r.ok,
          () => false,
        ),
      { timeoutMs: 30_000, intervalMs: 50, message: 'the exporter to serve /metrics' },
    );
  });

  after(async () => {
    if (exporter.exitCode === null) {
      const exited = new Promise((resolve) => exporter.once('exit', resolve));
      exporter.kill('SIGTERM');
      await exited;
    }
    await server.close();
  });

  it('reports nginxplus_up 1 and the cluster-wide limit_req counters', async () => {
    const metrics = await (await fetch(metricsUrl)).text();
    assert.equal(sample(metrics, 'nginxplus_up'), 1, exporterLog);
    assert.equal(sample(metrics, 'nginxplus_limit_request_passed{zone="req_zone_10"}'), 42);
    assert.equal(sample(metrics, 'nginxplus_limit_request_delayed{zone="req_zone_10"}'), 3);
    assert.equal(sample(metrics, 'nginxplus_limit_request_rejected{zone="req_zone_10"}'), 12);
    assert.equal(sample(metrics, 'nginxplus_limit_request_delayed_dry_run{zone="req_zone_10"}'), 2);
    assert.equal(sample(metrics, 'nginxplus_limit_request_rejected_dry_run{zone="req_zone_10"}'), 1);
    assert.equal(sample(metrics, 'nginxplus_limit_request_passed{zone="zone_two"}'), 9);
  });

  it('reports the cluster-wide limit_conn counters under its own names', async () => {
    const metrics = await (await fetch(metricsUrl)).text();
    assert.equal(sample(metrics, 'nginxplus_limit_connection_passed{zone="addr"}'), 21, exporterLog);
    assert.equal(sample(metrics, 'nginxplus_limit_connection_rejected{zone="addr"}'), 6);
    assert.equal(sample(metrics, 'nginxplus_limit_connection_rejected_dry_run{zone="addr"}'), 1);
  });

  it('follows new counter deltas on the next scrape', async () => {
    await addCounters(store, 'replica-c', {
      zone_two: { passed: 1, delayed: 0, rejected: 0, delayed_dry_run: 0, rejected_dry_run: 0 },
    });
    const metrics = await (await fetch(metricsUrl)).text();
    assert.equal(sample(metrics, 'nginxplus_up'), 1);
    assert.equal(sample(metrics, 'nginxplus_limit_request_passed{zone="zone_two"}'), 10);
  });
});
