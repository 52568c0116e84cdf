/**
 * Every manifest under deploy/ is checked against the Kubernetes schemas (kubernetes-models), the
 * Prometheus Operator objects for their shape and with promtool, and each kustomization is built with
 * `kubectl kustomize` — the built output is validated again.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments, stringify } from 'yaml';

type Obj = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  [k: string]: unknown;
};

const root = fileURLToPath(new URL('../../', import.meta.url));
const deploy = join(root, 'deploy');
const KUSTOMIZATIONS = [
  'base',
  'monitoring',
  'overlays/external-redis',
  'overlays/sentinel',
  'examples/cafe',
];

function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(name) ? [p] : [];
  });
}

function parseDocs(text: string, source: string): Obj[] {
  return parseAllDocuments(text).flatMap((d) => {
    if (d.errors.length > 0) throw new Error(`${source}: ${d.errors[0]!.message}`);
    const v = d.toJS() as Obj | null;
    return v ? [v] : [];
  });
}

/** Schema validation with kubernetes-models 4.x; throws with the path of the first violation. */
async function validate(obj: Obj, where: string): Promise<void> {
  const { apiVersion, kind } = obj;
  assert.ok(
    apiVersion && kind && obj.metadata?.name,
    `${where}: apiVersion, kind and metadata.name are required`,
  );
  if (apiVersion === 'monitoring.coreos.com/v1') return checkMonitoringShape(obj, where);
  const mod = (await import(`kubernetes-models/${apiVersion}`)) as Record<
    string,
    new (
      o: unknown,
    ) => { validate(): void }
  >;
  const Model = mod[kind];
  assert.ok(Model, `${where}: kubernetes-models has no ${apiVersion} ${kind}`);
  try {
    new Model(obj).validate();
  } catch (err) {
    assert.fail(`${where}: ${kind} ${obj.metadata?.name}: ${(err as Error).message}`);
  }
}

/** The CRDs of the Prometheus Operator: no schema in kubernetes-models, so their basic shape. */
function checkMonitoringShape(obj: Obj, where: string): void {
  const spec = obj.spec as Record<string, unknown> | undefined;
  assert.ok(spec && typeof spec === 'object', `${where}: spec is required`);
  if (obj.kind === 'ServiceMonitor' || obj.kind === 'PodMonitor') {
    const selector = spec.selector as { matchLabels?: Record<string, string> } | undefined;
    assert.ok(
      selector?.matchLabels && Object.keys(selector.matchLabels).length > 0,
      `${where}: selector.matchLabels`,
    );
    const endpoints = (obj.kind === 'ServiceMonitor' ? spec.endpoints : spec.podMetricsEndpoints) as
      | { port?: string; path?: string }[]
      | undefined;
    assert.ok(Array.isArray(endpoints) && endpoints.length > 0, `${where}: endpoints`);
    for (const e of endpoints)
      assert.ok(typeof e.port === 'string' && e.path === '/metrics', `${where}: port and path`);
  } else if (obj.kind === 'PrometheusRule') {
    const groups = spec.groups as { name?: string; rules?: Record<string, unknown>[] }[];
    assert.ok(Array.isArray(groups) && groups.length > 0, `${where}: groups`);
    for (const g of groups) {
      assert.ok(
        typeof g.name === 'string' && Array.isArray(g.rules) && g.rules.length > 0,
        `${where}: group ${g.name}`,
      );
      for (const r of g.rules!) {
        assert.ok(typeof r.expr === 'string', `${where}: every rule has an expr`);
        assert.ok(
          (typeof r.alert === 'string') !== (typeof r.record === 'string'),
          `${where}: alert xor record`,
        );
        if (r.alert) {
          const labels = r.labels as Record<string, string> | undefined;
          const ann = r.annotations as Record<string, string> | undefined;
          assert.ok(
            ['warning', 'critical'].includes(labels?.severity ?? ''),
            `${where}: ${r.alert} severity`,
          );
          assert.ok(ann?.summary && ann.description, `${where}: ${r.alert} summary and description`);
        }
      }
    }
  } else {
    assert.fail(`${where}: unexpected monitoring.coreos.com kind ${obj.kind}`);
  }
}

function kubectl(args: string[]): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync('kubectl', args, { encoding: 'utf8', timeout: 120_000 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
    assert.fail(
      'the deploy tests need kubectl (with its built-in kustomize, kubectl 1.27 or newer) on PATH; ' +
        "it is not a Debian package (Debian's kubernetes-client is kubectl 1.20): install kubectl from the Kubernetes project's packages",
    );
  }
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

function promtool(args: string[], cwd: string): { out: string; status: number | null } {
  const r = spawnSync('promtool', args, { encoding: 'utf8', cwd, timeout: 60_000 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
    assert.fail('the deploy tests need promtool (Debian package: prometheus)');
  }
  return { out: `${r.stdout}${r.stderr}`, status: r.status };
}

function built(dir: string): Obj[] {
  const r = kubectl(['kustomize', join(deploy, dir)]);
  assert.equal(r.status, 0, `kubectl kustomize deploy/${dir}: ${r.stderr}`);
  return parseDocs(r.stdout, `kustomize ${dir}`);
}

type Container = {
  name: string;
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: { httpGet?: { path?: string } };
  livenessProbe?: { httpGet?: { path?: string } };
};

function podSpecOf(o: Obj): { securityContext?: Record<string, unknown>; containers: Container[] } | null {
  if (!['Deployment', 'StatefulSet'].includes(o.kind ?? '')) return null;
  return (
    o.spec as { template: { spec: { securityContext?: Record<string, unknown>; containers: Container[] } } }
  ).template.spec;
}

describe('deploy/ manifests', { timeout: 300_000 }, () => {
  it('every file validates against the Kubernetes schemas', async () => {
    const files = yamlFiles(deploy);
    assert.ok(files.length >= 12);
    for (const file of files) {
      const where = relative(root, file);
      for (const obj of parseDocs(readFileSync(file, 'utf8'), where)) {
        if (obj.apiVersion?.startsWith('kustomize.config.k8s.io/')) continue;
        // Other YAML living beside the manifests (rule files for the control plane, Alertmanager config).
        if (obj.apiVersion === undefined && obj.kind === undefined) continue;
        await validate(obj, where);
      }
    }
  });

  it('kubectl kustomize builds each kustomization, and the output validates', async () => {
    for (const dir of KUSTOMIZATIONS) {
      const objs = built(dir);
      assert.ok(objs.length > 0, dir);
      for (const o of objs) await validate(o, `kustomize ${dir}`);
    }
    const kinds = (dir: string) => built(dir).map((o) => `${o.kind}/${o.metadata?.name}`);
    assert.ok(kinds('base').includes('StatefulSet/limitswitch-redis'));
    for (const overlay of ['overlays/external-redis', 'overlays/sentinel']) {
      const objs = built(overlay);
      assert.ok(
        !objs.some((o) => o.kind === 'StatefulSet' || o.metadata?.name === 'limitswitch-redis'),
        overlay,
      );
      const store = objs.find(
        (o) => o.kind === 'ConfigMap' && o.metadata?.name === 'limitswitch-store',
      ) as Obj & {
        data: Record<string, string>;
      };
      assert.match(
        store.data['redis-url']!,
        overlay.endsWith('sentinel') ? /^redis\+sentinel:\/\// : /^rediss:\/\//,
      );
    }
    assert.deepEqual(kinds('monitoring').sort(), [
      'ConfigMap/limitswitch-grafana-dashboard',
      'PodMonitor/limitswitch-replica',
      'PrometheusRule/limitswitch',
      'ServiceMonitor/limitswitch-control-plane',
    ]);
  });

  it('RBAC: get/list/watch on exactly what the replicas read, events create, nothing else', () => {
    const objs = built('base');
    const rules = (kind: string, name: string) =>
      (objs.find((o) => o.kind === kind && o.metadata?.name === name) as Obj & { rules: unknown[] }).rules;
    assert.deepEqual(rules('ClusterRole', 'limitswitch-replica'), [
      { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
    ]);
    assert.deepEqual(rules('Role', 'limitswitch-replica-config'), [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
    ]);
    assert.deepEqual(
      objs.filter((o) => ['Role', 'ClusterRole'].includes(o.kind!)).map((o) => o.metadata?.name),
      ['limitswitch-replica-config', 'limitswitch-replica'],
    );
  });

  it('pods run non-root with read-only root filesystems, limits and probes', () => {
    const workloads = ['base', 'examples/cafe'].flatMap((d) => built(d)).filter((o) => podSpecOf(o));
    assert.ok(workloads.length >= 5);
    for (const w of workloads) {
      const pod = podSpecOf(w)!;
      assert.equal(pod.securityContext?.runAsNonRoot, true, `${w.metadata?.name} runAsNonRoot`);
      for (const c of pod.containers) {
        const where = `${w.metadata?.name}/${c.name}`;
        assert.equal(c.securityContext?.allowPrivilegeEscalation, false, where);
        assert.deepEqual((c.securityContext?.capabilities as { drop?: string[] })?.drop, ['ALL'], where);
        assert.ok(
          c.resources?.requests?.memory && c.resources.limits?.memory,
          `${where} memory request and limit`,
        );
        if (w.metadata?.name?.startsWith('limitswitch')) {
          assert.equal(c.securityContext?.readOnlyRootFilesystem, true, where);
        }
        if (w.metadata?.name === 'limitswitch-replica' || w.metadata?.name === 'limitswitch-control-plane') {
          assert.equal(c.readinessProbe?.httpGet?.path, '/readyz', where);
          assert.equal(c.livenessProbe?.httpGet?.path, '/healthz', where);
        }
      }
    }
  });

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

  it('the Grafana dashboard queries only metrics the replicas export, and promtool parses them', () => {
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
    const exported = readFileSync(join(root, 'src/metrics/replica-metrics.ts'), 'utf8');
    for (const m of metrics) {
      const known = m.startsWith('nginxplus_limit_request_')
        ? ['passed', 'delayed', 'rejected', 'delayed_dry_run', 'rejected_dry_run'].includes(m.slice(24))
        : exported.includes(`'${m}'`);
      assert.ok(known, `${m} is not exported by the replicas`);
    }
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text of a template literal
    assert.ok(exported.includes('nginxplus_limit_request_${field}'));
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
