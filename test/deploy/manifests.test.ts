/**
 * Every manifest under deploy/ is checked against the Kubernetes schemas (kubernetes-models; the
 * Prometheus Operator objects for their shape), and each kustomization is built with
 * `kubectl kustomize` — the built output is validated again.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, it } from 'node:test';
import {
  built,
  deploy,
  KUSTOMIZATIONS,
  type Obj,
  parseDocs,
  podSpecOf,
  root,
  validate,
  yamlFiles,
} from './deploy-helpers.ts';

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
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
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

  it('Gateway API overlay: the replicas get --gateway-api, and rights on exactly the objects it reads and the status it writes', () => {
    const objs = built('overlays/gateway-api');
    const role = objs.find(
      (o) => o.kind === 'ClusterRole' && o.metadata?.name === 'limitswitch-replica-gateway-api',
    ) as Obj & { rules: unknown[] };
    assert.deepEqual(role.rules, [
      {
        apiGroups: ['gateway.networking.k8s.io'],
        resources: ['gatewayclasses', 'gateways', 'httproutes'],
        verbs: ['get', 'list', 'watch'],
      },
      { apiGroups: ['gateway.nginx.org'], resources: ['ratelimitpolicies'], verbs: ['get', 'list', 'watch'] },
      {
        apiGroups: ['gateway.networking.k8s.io'],
        resources: ['gatewayclasses/status', 'gateways/status', 'httproutes/status'],
        verbs: ['update'],
      },
      { apiGroups: ['gateway.nginx.org'], resources: ['ratelimitpolicies/status'], verbs: ['update'] },
    ]);
    const replica = objs.find((o) => o.kind === 'Deployment' && o.metadata?.name === 'limitswitch-replica')!;
    const args = (replica.spec as { template: { spec: { containers: { args: string[] }[] } } }).template.spec
      .containers[0]!.args;
    assert.ok(args.includes('--gateway-api') && args.includes('--kubernetes'), args.join(' '));
    assert.ok(
      built('gateway-api').some(
        (o) =>
          o.kind === 'CustomResourceDefinition' && o.metadata?.name === 'ratelimitpolicies.gateway.nginx.org',
      ),
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
});
