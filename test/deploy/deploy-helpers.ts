/** Shared by the deploy tests: YAML files, schema validation, and the kubectl and promtool runners. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { gatewayApiSchemaError, hasGatewayApiSchema } from '../helpers/gateway-api-schemas.ts';

export type Obj = {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  [k: string]: unknown;
};

export const root = fileURLToPath(new URL('../../', import.meta.url));
export const deploy = join(root, 'deploy');
export const KUSTOMIZATIONS = [
  'base',
  'monitoring',
  'overlays/external-redis',
  'overlays/sentinel',
  'overlays/gateway-api',
  'gateway-api',
  'examples/cafe',
];

export function yamlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return yamlFiles(p);
    return /\.ya?ml$/.test(name) ? [p] : [];
  });
}

export function parseDocs(text: string, source: string): Obj[] {
  return parseAllDocuments(text).flatMap((d) => {
    if (d.errors.length > 0) throw new Error(`${source}: ${d.errors[0]!.message}`);
    const v = d.toJS() as Obj | null;
    return v ? [v] : [];
  });
}

/** Schema validation with kubernetes-models 4.x; throws with the path of the first violation. */
export async function validate(obj: Obj, where: string): Promise<void> {
  const { apiVersion, kind } = obj;
  assert.ok(
    apiVersion && kind && obj.metadata?.name,
    `${where}: apiVersion, kind and metadata.name are required`,
  );
  if (apiVersion === 'monitoring.coreos.com/v1') return checkMonitoringShape(obj, where);
  if (hasGatewayApiSchema(apiVersion, kind)) {
    const error = gatewayApiSchemaError(obj);
    assert.equal(error, null, `${where}: ${kind} ${obj.metadata?.name}: ${error}`);
    return;
  }
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

export function kubectl(args: string[]): { stdout: string; stderr: string; status: number | null } {
  const r = spawnSync('kubectl', args, { encoding: 'utf8', timeout: 120_000 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
    assert.fail(
      'the deploy tests need kubectl (with its built-in kustomize, kubectl 1.27 or newer) on PATH; ' +
        "it is not a Debian package (Debian's kubernetes-client is kubectl 1.20): install kubectl from the Kubernetes project's packages",
    );
  }
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

export function promtool(args: string[], cwd: string): { out: string; status: number | null } {
  const r = spawnSync('promtool', args, { encoding: 'utf8', cwd, timeout: 60_000 });
  if (r.error && (r.error as NodeJS.ErrnoException).code === 'ENOENT') {
    assert.fail('the deploy tests need promtool (Debian package: prometheus)');
  }
  return { out: `${r.stdout}${r.stderr}`, status: r.status };
}

export function built(dir: string): Obj[] {
  const r = kubectl(['kustomize', join(deploy, dir)]);
  assert.equal(r.status, 0, `kubectl kustomize deploy/${dir}: ${r.stderr}`);
  return parseDocs(r.stdout, `kustomize ${dir}`);
}

export type Container = {
  name: string;
  securityContext?: Record<string, unknown>;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  readinessProbe?: { httpGet?: { path?: string } };
  livenessProbe?: { httpGet?: { path?: string } };
};

export function podSpecOf(
  o: Obj,
): { securityContext?: Record<string, unknown>; containers: Container[] } | null {
  if (!['Deployment', 'StatefulSet'].includes(o.kind ?? '')) return null;
  return (
    o.spec as { template: { spec: { securityContext?: Record<string, unknown>; containers: Container[] } } }
  ).template.spec;
}
