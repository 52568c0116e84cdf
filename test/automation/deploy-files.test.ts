/**
 * deploy/automation/ checked by the real tools and against each other: the PrometheusRule's rules by
 * `promtool` (syntax, and a unit test of what fires on which series), the Alertmanager config by
 * `amtool`, and the chain alert → Alertmanager route → control-plane rule → keyval key.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { parseAlertRules } from '../../src/automation/alert-rules.ts';
import { matchesAll, parseLabelMatcher } from '../../src/automation/label-matcher.ts';
import { OwnHosts } from '../../src/control-plane/own-hosts.ts';

const run = promisify(execFile);
const DEPLOY = new URL('../../deploy/automation/', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, DEPLOY), 'utf8');

interface K8sObject {
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  spec?: {
    template: {
      spec: {
        containers: { name: string; args: string[]; volumeMounts: { name: string }[] }[];
        volumes: { name: string; configMap?: { name: string } }[];
      };
    };
  };
}

interface PromRule {
  alert: string;
  expr: string;
  labels?: Record<string, string>;
}

const prometheusRule = parse(read('prometheus-rules.yaml')) as {
  apiVersion: string;
  kind: string;
  spec: { groups: { name: string; rules: PromRule[] }[] };
};
const alertmanager = parse(read('alertmanager.yaml')) as {
  route: { routes: { receiver: string; matchers: string[]; repeat_interval: string }[] };
  receivers: { name: string; webhook_configs?: Record<string, unknown>[] }[];
};
const rules = parseAlertRules(read('alert-rules.yaml'), 'deploy/automation/alert-rules.yaml');

const dir = mkdtempSync(join(tmpdir(), 'limitswitch-deploy-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** 1 sample a minute for 10 minutes, growing by `perMinute`. */
const counter = (series: string, perMinute: number) => ({ series, values: `0+${perMinute}x10` });

describe('deploy/automation', () => {
  it('the PrometheusRule passes promtool check rules', async () => {
    assert.equal(prometheusRule.apiVersion, 'monitoring.coreos.com/v1');
    assert.equal(prometheusRule.kind, 'PrometheusRule');
    writeFileSync(join(dir, 'rules.yml'), stringify(prometheusRule.spec));
    const { stdout } = await run('promtool', ['check', 'rules', join(dir, 'rules.yml')]);
    assert.match(stdout, /SUCCESS: 3 rules found/);
  });

  it('its alerts fire on a path under load, a failing upstream and a limit rejecting most requests, with the labels the rules need', async () => {
    writeFileSync(join(dir, 'rules.yml'), stringify(prometheusRule.spec));
    const busy = {
      interval: '1m',
      input_series: [
        // /coffee over two replicas: 6000 + 6000 requests a minute = 200/s, limited ones included.
        ...['replica-1', 'replica-2'].map((instance) =>
          counter(
            `limitswitch_location_requests_total{job="limitswitch-replica",server="cafe.example.com",location="location /coffee",instance="${instance}"}`,
            6000,
          ),
        ),
        counter(
          'limitswitch_location_requests_total{job="limitswitch-replica",server="cafe.example.com",location="location /tea",instance="replica-1"}',
          600,
        ),
        // Busy, but not a prefix location: no path to switch, no alert.
        counter(
          'limitswitch_location_requests_total{job="limitswitch-replica",server="cafe.example.com",location="location = /healthz",instance="replica-1"}',
          12_000,
        ),
        counter(
          'nginxplus_upstream_server_requests{job="limitswitch-replica",upstream="coffee",server="10.0.0.1:80",instance="replica-1"}',
          12_000,
        ),
        counter(
          'nginxplus_upstream_server_requests{job="limitswitch-replica",upstream="tea",server="10.0.0.2:80",instance="replica-1"}',
          600,
        ),
        counter(
          'nginxplus_upstream_server_responses{job="limitswitch-replica",upstream="coffee",server="10.0.0.1:80",code="5xx",instance="replica-1"}',
          1200,
        ),
        counter(
          'nginxplus_upstream_server_responses{job="limitswitch-replica",upstream="tea",server="10.0.0.2:80",code="5xx",instance="replica-1"}',
          0,
        ),
        counter('nginxplus_limit_request_rejected{job="limitswitch-replica",zone="req_zone_10"}', 600),
        counter('nginxplus_limit_request_passed{job="limitswitch-replica",zone="req_zone_10"}', 300),
        counter('nginxplus_limit_request_delayed{job="limitswitch-replica",zone="req_zone_10"}', 0),
        counter('nginxplus_limit_request_rejected{job="limitswitch-replica",zone="perserver"}', 600),
        counter('nginxplus_limit_request_passed{job="limitswitch-replica",zone="perserver"}', 0),
      ],
      alert_rule_test: [
        {
          eval_time: '8m',
          alertname: 'UpstreamOverloaded',
          exp_alerts: [
            {
              exp_labels: { severity: 'warning', location: 'location /coffee', path: '/coffee' },
              exp_annotations: {
                summary: '/coffee receives 200 requests/s',
                description:
                  'limitswitch switches per-client limiting on for this path while the alert fires.',
              },
            },
          ],
        },
        {
          eval_time: '8m',
          alertname: 'UpstreamErrorRatioHigh',
          exp_alerts: [
            {
              exp_labels: { severity: 'warning', upstream: 'coffee', path: '/coffee' },
              exp_annotations: {
                summary: '/coffee: 10% of responses are 5xx',
                description:
                  'limitswitch switches per-client limiting on for this path while the alert fires.',
              },
            },
          ],
        },
        {
          eval_time: '8m',
          alertname: 'LimitRejectionRatioHigh',
          exp_alerts: [
            {
              exp_labels: { severity: 'warning', zone: 'req_zone_10', server_name: 'cafe.example.com' },
              exp_annotations: {
                summary: 'limit_req zone req_zone_10 rejects 66.67% of requests',
                description: 'limitswitch switches the whole-server limit (limitper_server) on.',
              },
            },
          ],
        },
        // `for:` holds them back at first.
        { eval_time: '1m', alertname: 'UpstreamOverloaded', exp_alerts: [] },
        { eval_time: '2m', alertname: 'LimitRejectionRatioHigh', exp_alerts: [] },
      ],
    };
    const quiet = {
      interval: '1m',
      input_series: [
        counter(
          'limitswitch_location_requests_total{job="limitswitch-replica",server="cafe.example.com",location="location /coffee"}',
          1200,
        ),
        counter('nginxplus_upstream_server_requests{job="limitswitch-replica",upstream="coffee"}', 1200),
        counter(
          'nginxplus_upstream_server_responses{job="limitswitch-replica",upstream="coffee",code="5xx"}',
          12,
        ),
        counter('nginxplus_limit_request_rejected{job="limitswitch-replica",zone="req_zone_10"}', 10),
        counter('nginxplus_limit_request_passed{job="limitswitch-replica",zone="req_zone_10"}', 1000),
        counter('nginxplus_limit_request_delayed{job="limitswitch-replica",zone="req_zone_10"}', 0),
      ],
      alert_rule_test: ['UpstreamOverloaded', 'UpstreamErrorRatioHigh', 'LimitRejectionRatioHigh'].map(
        (alertname) => ({
          eval_time: '9m',
          alertname,
          exp_alerts: [],
        }),
      ),
    };
    const testFile = join(dir, 'rules.test.yml');
    writeFileSync(
      testFile,
      stringify({ rule_files: ['rules.yml'], evaluation_interval: '1m', tests: [busy, quiet] }),
    );
    const result = await run('promtool', ['test', 'rules', testFile]).catch(
      (err: { stdout?: string; stderr?: string }) => {
        assert.fail(`promtool test rules failed:\n${err.stdout ?? ''}${err.stderr ?? ''}`);
      },
    );
    assert.match(result.stdout, /SUCCESS/);
  });

  it('as a kustomize Component on the base: rules ConfigMap mounted, --alert-rules passed, PrometheusRule added', () => {
    const overlay = mkdtempSync(join(tmpdir(), 'limitswitch-overlay-'));
    try {
      const deploy = relative(overlay, new URL('..', DEPLOY).pathname);
      writeFileSync(
        join(overlay, 'kustomization.yaml'),
        stringify({
          apiVersion: 'kustomize.config.k8s.io/v1beta1',
          kind: 'Kustomization',
          resources: [`${deploy}/base`],
          components: [`${deploy}/automation`],
        }),
      );
      const result = spawnSync('kubectl', ['kustomize', overlay], { encoding: 'utf8' });
      assert.equal(
        result.error,
        undefined,
        'the deploy tests need kubectl (with its built-in kustomize) on PATH',
      );
      assert.equal(result.status, 0, result.stderr);
      const objects = parseAllDocuments(result.stdout).map((d) => d.toJS() as K8sObject);
      const configMap = objects.find(
        (o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('limitswitch-alert-rules-'),
      );
      assert.ok(configMap, 'the rules ConfigMap');
      assert.equal(configMap.metadata.namespace, 'limitswitch');
      assert.equal(
        parseAlertRules(configMap.data!['alert-rules.yaml']!, 'configmap').rules.length,
        rules.rules.length,
      );
      const deployment = objects.find(
        (o) => o.kind === 'Deployment' && o.metadata.name === 'limitswitch-control-plane',
      )!;
      const pod = deployment.spec!.template.spec;
      const container = pod.containers.find((c) => c.name === 'control-plane')!;
      assert.ok(container.args.includes('--alert-rules=/etc/limitswitch/automation/alert-rules.yaml'));
      assert.deepEqual(
        container.volumeMounts.find((m) => m.name === 'alert-rules'),
        { name: 'alert-rules', mountPath: '/etc/limitswitch/automation', readOnly: true },
      );
      assert.equal(
        pod.volumes.find((v) => v.name === 'alert-rules')?.configMap?.name,
        configMap.metadata.name,
      );
      const rule = objects.find(
        (o) => o.kind === 'PrometheusRule' && o.metadata.name === 'limitswitch-automation',
      );
      assert.equal(rule?.metadata.namespace, 'limitswitch');
    } finally {
      rmSync(overlay, { recursive: true, force: true });
    }
  });

  it('the Alertmanager config passes amtool check-config and calls the webhook with a bearer token', async () => {
    const { stdout } = await run('amtool', ['check-config', new URL('alertmanager.yaml', DEPLOY).pathname]);
    assert.match(stdout, /SUCCESS/);
    const webhook = alertmanager.receivers.find((r) => r.name === 'limitswitch')?.webhook_configs?.[0];
    assert.ok(webhook);
    assert.match(String(webhook.url), /\/hooks\/alertmanager$/);
    assert.equal(webhook.send_resolved, true);
    assert.equal((webhook.http_config as { authorization: { type: string } }).authorization.type, 'Bearer');
  });

  it("the webhook's host is one of the control plane's names (its writes name the API's own host)", () => {
    const deployment = parseAllDocuments(readFileSync(new URL('../base/control-plane.yaml', DEPLOY), 'utf8'))
      .map((d) => d.toJS() as K8sObject)
      .find((o) => o.kind === 'Deployment')!;
    const args = deployment.spec!.template.spec.containers[0]!.args;
    const names = args
      .filter((a) => a.startsWith('--server-name='))
      .map((a) => a.slice('--server-name='.length));
    for (const name of names) assert.equal(OwnHosts.invalid(name), null, name);
    const webhook = alertmanager.receivers.find((r) => r.name === 'limitswitch')!.webhook_configs![0]!;
    const host = new URL(String(webhook.url)).host;
    assert.ok(new OwnHosts(names).allows(host), `${host} is not among ${names.join(', ')}`);
  });

  it('every alert is routed to the webhook and switches a key by some rule; repeats come before the TTL ends', () => {
    const route = alertmanager.route.routes.find((r) => r.receiver === 'limitswitch')!;
    const routeMatchers = route.matchers.map(parseLabelMatcher);
    const switched: string[] = [];
    for (const rule of prometheusRule.spec.groups.flatMap((g) => g.rules)) {
      // The labels Prometheus attaches: the static ones, the alert name, and what the expression keeps.
      const labels = {
        ...rule.labels,
        alertname: rule.alert,
        path: '/coffee',
        location: 'location /coffee',
        upstream: 'coffee',
        zone: 'req_zone_10',
      };
      assert.ok(matchesAll(routeMatchers, labels), `${rule.alert} is not routed to limitswitch`);
      const matching = rules.rules.filter((r) => matchesAll(r.matchers, labels));
      assert.ok(matching.length > 0, `no control-plane rule matches ${rule.alert}`);
      for (const r of matching) {
        const key = r.key.render(labels);
        assert.ok('value' in key, `${r.name}: ${JSON.stringify(key)}`);
        switched.push(`${rule.alert} → ${r.zone}[${key.value}]${r.dryRun ? ' (dry run)' : ''}`);
        assert.ok(
          r.ttlMs > 10 * 60_000,
          `${r.name}: ttl must exceed repeat_interval ${route.repeat_interval}`,
        );
      }
    }
    assert.deepEqual(switched, [
      'UpstreamOverloaded → limitreq_uri[/coffee]',
      'UpstreamErrorRatioHigh → limitreq_uri[/coffee]',
      'LimitRejectionRatioHigh → limitper_server[cafe.example.com] (dry run)',
    ]);
  });
});
