/**
 * The whole loop with the real programs: a metric source → Prometheus (scrape, alert rule) →
 * Alertmanager (route, webhook with a bearer token) → the control plane over HTTP → the store; then the
 * source calms down, the alert resolves, and the key is removed. Intervals are 1 s everywhere, so the
 * loop takes seconds; each step prints its time.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, describe, it } from 'node:test';
import { parseAlertRules } from '../../src/automation/alert-rules.ts';
import { type ControlPlaneServer, startControlPlaneServer } from '../../src/control-plane/server.ts';
import type { KeyvalChange, KeyvalZoneInfo } from '../../src/store/keyval-store.ts';
import { MemoryKeyvalStore } from '../../src/store/memory-keyval-store.ts';
import { type MonitoringProcess, startAlertmanager, startPrometheus } from '../helpers/prometheus-stack.ts';
import { waitFor } from '../helpers/wait-for.ts';

const TOKEN = 'alertmanager-e2e-token-0123456789';
const ZONES: KeyvalZoneInfo[] = [{ name: 'limitreq_uri', type: 'prefix', timeoutMs: null }];

const CONTROL_PLANE_RULES = `rules:
  - name: coffee-overloaded
    matchers: ['alertname="CoffeeOverloaded"', 'path=~"/.+"']
    zone: limitreq_uri
    key: "{{ .Labels.path }}"
    value: "1"
    on_resolve: delete
    ttl: 10m
`;

const PROMETHEUS_RULES = `groups:
  - name: limitswitch-e2e
    interval: 1s
    rules:
      - alert: CoffeeOverloaded
        expr: limitswitch_e2e_request_rate{path="/coffee"} > 10
        labels:
          severity: page
        annotations:
          summary: "{{ $labels.path }} gets {{ $value }} requests/s"
`;

/** A scrape target with one gauge the test sets: the request rate of `/coffee`. */
async function startMetricSource(): Promise<{ server: Server; port: number; setRate(rate: number): void }> {
  let rate = 0;
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/plain; version=0.0.4');
    res.end(
      '# HELP limitswitch_e2e_request_rate Requests per second by path\n' +
        '# TYPE limitswitch_e2e_request_rate gauge\n' +
        `limitswitch_e2e_request_rate{path="/coffee"} ${rate}\n` +
        'limitswitch_e2e_request_rate{path="/tea"} 1\n',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    server,
    port,
    setRate: (r) => {
      rate = r;
    },
  };
}

describe('alert loop with real Prometheus and Alertmanager', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  it('an alert fires, the key is set over the webhook; the alert resolves, the key is removed', {
    timeout: 55_000,
  }, async () => {
    const startedMs = performance.now();
    const step = (what: string) =>
      console.log(`[${((performance.now() - startedMs) / 1000).toFixed(2)} s] ${what}`);
    const store = new MemoryKeyvalStore();
    await store.registerZones(ZONES);
    const changes: KeyvalChange[] = [];
    const waiters: { test: (c: KeyvalChange) => boolean; resolve: (c: KeyvalChange) => void }[] = [];
    await store.subscribe((change) => {
      changes.push(change);
      for (const w of waiters.filter((w) => w.test(change))) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(change);
      }
    });
    /** The next change of `/coffee` matching `test`, or a failure naming what the programs logged. */
    const nextCoffeeChange = (op: KeyvalChange['op'], what: string, logs: () => string) =>
      new Promise<KeyvalChange>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${what} within 30 s\n${logs()}`)), 30_000);
        waiters.push({
          test: (c) =>
            c.zone === 'limitreq_uri' &&
            c.op === op &&
            (op !== 'set' || (c as { key: string }).key === '/coffee'),
          resolve: (c) => {
            clearTimeout(timer);
            resolve(c);
          },
        });
      });

    const source = await startMetricSource();
    cleanups.push(() => new Promise((resolve) => source.server.close(resolve)));
    const controlPlane: ControlPlaneServer = await startControlPlaneServer({
      store,
      keyvalZones: ZONES,
      auth: { tokens: new Map([['alertmanager', TOKEN]]) },
      alertRules: parseAlertRules(CONTROL_PLANE_RULES, 'alert-rules.yaml'),
      host: '127.0.0.1',
      port: 0,
    });
    cleanups.push(() => controlPlane.close());
    step(`metric source on :${source.port}, control plane at ${controlPlane.url}`);

    const alertmanager: MonitoringProcess = await startAlertmanager(`global:
  resolve_timeout: 5s
route:
  receiver: limitswitch
  group_by: [alertname, path]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1m
receivers:
  - name: limitswitch
    webhook_configs:
      - url: ${controlPlane.url}/hooks/alertmanager
        send_resolved: true
        http_config:
          authorization:
            type: Bearer
            credentials: ${TOKEN}
`);
    cleanups.push(() => alertmanager.stop());
    step(`alertmanager ready at ${alertmanager.url}`);

    const prometheus: MonitoringProcess = await startPrometheus({
      config: `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: [rules.yml]
scrape_configs:
  - job_name: cafe
    static_configs:
      - targets: ['127.0.0.1:${source.port}']
alerting:
  alertmanagers:
    - static_configs:
        - targets: ['127.0.0.1:${alertmanager.port}']
`,
      rules: PROMETHEUS_RULES,
    });
    cleanups.push(() => prometheus.stop());
    step(`prometheus ready at ${prometheus.url}`);
    const logs = () => `--- prometheus\n${prometheus.log}\n--- alertmanager\n${alertmanager.log}`;

    const set = nextCoffeeChange('set', 'set of /coffee', logs);
    source.setRate(50);
    step('load on /coffee: 50 requests/s');
    const setChange = await set;
    step(`alert fired, webhook set limitreq_uri["/coffee"] (revision ${setChange.revision})`);
    const live = await store.getZone('limitreq_uri', Date.now());
    assert.equal(live['/coffee']?.value, '1');
    assert.ok((live['/coffee']?.expireAtMs ?? 0) > Date.now(), 'the key carries the rule TTL');
    // The audit line follows the write within the same webhook call.
    const coffeeAudit = async () => (await store.audit(10)).filter((e) => e.key === '/coffee');
    await waitFor(async () => (await coffeeAudit()).length === 1, { message: 'the audit entry of the set' });
    const [fired] = await coffeeAudit();
    assert.equal(fired!.tokenId, 'alertmanager');
    assert.equal(fired!.new, '1');
    const firedReason =
      /^alert CoffeeOverloaded firing \(fingerprint ([0-9a-f]{16}), rule coffee-overloaded\)$/.exec(
        fired!.reason ?? '',
      );
    assert.ok(firedReason, fired!.reason ?? 'no reason');

    const removed = nextCoffeeChange('delete', 'delete of /coffee', logs);
    source.setRate(0);
    step('load on /coffee stopped');
    const deleteChange = await removed;
    step(`alert resolved, webhook deleted limitreq_uri["/coffee"] (revision ${deleteChange.revision})`);
    assert.deepEqual(await store.getZone('limitreq_uri', Date.now()), {});
    await waitFor(async () => (await coffeeAudit()).length === 2, {
      message: 'the audit entry of the delete',
    });
    const [resolved] = await coffeeAudit();
    assert.equal(
      resolved!.reason,
      `alert CoffeeOverloaded resolved (fingerprint ${firedReason[1]}, rule coffee-overloaded)`,
    );
    assert.deepEqual([resolved!.old, resolved!.new], ['1', null]);
    // /tea never crossed the threshold: nothing but /coffee was ever written outside the automation zone.
    assert.deepEqual(
      [...new Set(changes.filter((c) => c.zone === 'limitreq_uri').map((c) => ('key' in c ? c.key : c.op)))],
      ['/coffee'],
    );
    const metrics = await (await fetch(`${controlPlane.url}/metrics`)).text();
    assert.match(
      metrics,
      /limitswitch_automation_changes_total\{rule="coffee-overloaded",action="set"\} 1\n/,
    );
    assert.match(
      metrics,
      /limitswitch_automation_changes_total\{rule="coffee-overloaded",action="delete"\} 1\n/,
    );
    step('done');
  });
});
