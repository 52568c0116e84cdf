/**
 * deploy/monitoring: the alert rules load in promtool and fire in a promtool unit test; the Grafana
 * dashboard queries only metrics the replicas export.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { stringify } from 'yaml';
import { ReplicaMetrics } from '../../src/metrics/replica-metrics.ts';
import { built, deploy, type Obj, promtool } from './deploy-helpers.ts';

describe('deploy/monitoring', { timeout: 300_000 }, () => {
  it('the alert rules load in promtool and fire on rejections, a lost store and a lagging replica', () => {
    const rule = built('monitoring').find((o) => o.kind === 'PrometheusRule') as Obj & {
      spec: { groups: unknown[] };
    };
    const dir = mkdtempSync(join(tmpdir(), 'limitswitch-rules-'));
    try {
      writeFileSync(join(dir, 'rules.yaml'), stringify({ groups: rule.spec.groups }));
      const check = promtool(['check', 'rules', 'rules.yaml'], dir);
      assert.equal(check.status, 0, check.out);
      assert.match(check.out, /SUCCESS: 7 rules found/);
      const replica = (pod: string) => `job="limitswitch-replica", pod="${pod}"`;
      writeFileSync(
        join(dir, 'rules.test.yaml'),
        stringify({
          rule_files: ['rules.yaml'],
          evaluation_interval: '1m',
          tests: [
            {
              interval: '1m',
              input_series: [
                // 0 rejections for an hour and more, then 600/min (10/s) on two replicas.
                {
                  series: `nginxplus_limit_request_rejected{${replica('a')}, zone="req_zone_10"}`,
                  values: '0+0x90 0+300x20',
                },
                {
                  series: `nginxplus_limit_request_rejected{${replica('b')}, zone="req_zone_10"}`,
                  values: '0+0x90 0+300x20',
                },
                { series: `limitswitch_sync_connected{${replica('a')}}`, values: '1x100' },
                { series: `limitswitch_sync_connected{${replica('b')}}`, values: '1x95 0x5' },
                { series: `limitswitch_sync_applied_revision{${replica('a')}}`, values: '5x95 9x5' },
                { series: `limitswitch_sync_applied_revision{${replica('b')}}`, values: '5x100' },
              ],
              alert_rule_test: [
                {
                  eval_time: '100m',
                  alertname: 'LimitswitchRejectionsSpiking',
                  exp_alerts: [
                    {
                      exp_labels: { severity: 'warning', zone: 'req_zone_10' },
                      exp_annotations: {
                        summary: 'Zone req_zone_10 rejects 10 requests/s across the cluster',
                        description:
                          'limit_req rejections in zone req_zone_10 are above 1/s and more than three times the rate an hour ago.',
                      },
                    },
                  ],
                },
                { eval_time: '80m', alertname: 'LimitswitchRejectionsSpiking', exp_alerts: [] },
                {
                  eval_time: '99m',
                  alertname: 'LimitswitchStoreUnreachable',
                  exp_alerts: [
                    {
                      exp_labels: { severity: 'critical', job: 'limitswitch-replica', pod: 'b' },
                      exp_annotations: {
                        summary: 'Replica b has lost the keyval store',
                        description:
                          'The replica enforces its last known switches; changes made through the control plane do not reach it until the store is back.',
                      },
                    },
                  ],
                },
                {
                  eval_time: '99m',
                  alertname: 'LimitswitchReplicaLagging',
                  exp_alerts: [
                    {
                      exp_labels: { severity: 'warning', job: 'limitswitch-replica', pod: 'b' },
                      exp_annotations: {
                        summary: 'Replica b is 4 revisions behind',
                        description:
                          'The replica enforces an older keyval revision than the other replicas for two minutes.',
                      },
                    },
                  ],
                },
              ],
            },
          ],
        }),
      );
      const test = promtool(['test', 'rules', 'rules.test.yaml'], dir);
      assert.equal(test.status, 0, test.out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the Grafana dashboard queries only metrics the replicas export, and promtool parses them', async () => {
    const dash = JSON.parse(readFileSync(join(deploy, 'monitoring/grafana-dashboard.json'), 'utf8')) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const exprs = dash.panels.flatMap((p) => p.targets.map((t) => t.expr));
    const titles = dash.panels.map((p) => p.title);
    for (const want of ['Passed', 'Delayed', 'Rejected'])
      assert.ok(
        titles.some((t) => t.startsWith(want)),
        want,
      );
    const metrics = new Set(exprs.flatMap((e) => e.match(/\b(nginxplus|limitswitch)_[a-z_]+/g) ?? []));
    const exported = await exportedMetricNames();
    assert.ok(exported.has('nginxplus_limit_request_rejected'));
    for (const m of metrics) {
      // A histogram's series carry their suffix; a counter's name is the series'.
      const family = m.replace(/_(bucket|sum|count)$/, '');
      assert.ok(exported.has(m) || exported.has(family), `${m} is not exported by the replicas`);
    }
    const dir = mkdtempSync(join(tmpdir(), 'limitswitch-dash-'));
    try {
      const rules = exprs.map((e, i) => ({
        record: `dashboard:expr_${i}`,
        expr: e.replaceAll('$__rate_interval', '5m').replaceAll('$zone', '.*'),
      }));
      writeFileSync(join(dir, 'dash.yaml'), stringify({ groups: [{ name: 'dashboard', rules }] }));
      const check = promtool(['check', 'rules', 'dash.yaml'], dir);
      assert.equal(check.status, 0, check.out);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The metric names a replica's registry serves, read from the registry itself. */
async function exportedMetricNames(): Promise<Set<string>> {
  const registry = new Registry();
  new ReplicaMetrics(registry, {
    zones: () => [],
    connZones: () => [],
    apiLimiters: () => [],
    storeResets: () => ({ restored: 0, restoredElsewhere: 0, dropped: 0 }),
    sync: () => ({ connected: true, appliedRevision: 0 }),
    zoneSync: () => null,
    upstreams: () => [],
    priorityLevels: () => [],
    nowMs: () => 0,
    locationRequests: () => [],
  });
  return new Set((await registry.getMetricsAsJSON()).map((m) => m.name));
}
