/**
 * `limitswitch replica`: where the configuration comes from. `-c FILE` and `--kubernetes` exclude each
 * other, one is required, and the Kubernetes flags mean nothing without `--kubernetes`.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { checkConfigMode } from '../../src/cli/replica-kubernetes.ts';
import { freePorts, LimitswitchProcess, stopAll, TempDir } from '../helpers/limitswitch-process.ts';

const cli = fileURLToPath(new URL('../../bin/limitswitch.js', import.meta.url));

function run(args: string[]) {
  const r = spawnSync(process.execPath, [cli, 'replica', ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, REDIS_URL: '', KUBERNETES_SERVICE_HOST: '' },
  });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status };
}

function usageError(flags: Parameters<typeof checkConfigMode>[0]): string | null {
  try {
    checkConfigMode(flags);
    return null;
  } catch (err) {
    assert.equal((err as { code?: string }).code, 'RL_ERR_CLI_USAGE');
    return (err as Error).message;
  }
}

describe('limitswitch replica: -c FILE or --kubernetes', () => {
  it('exactly one source of configuration', () => {
    assert.equal(
      usageError({ config: 'nginx.conf', kubernetes: true }),
      'limitswitch replica: -c FILE and --kubernetes are mutually exclusive: the configuration comes from one of them',
    );
    assert.equal(
      usageError({}),
      'limitswitch replica: a configuration is required: -c FILE, or --kubernetes to build it from Ingress objects',
    );
    assert.equal(usageError({ config: 'nginx.conf' }), null);
    assert.equal(usageError({ kubernetes: true }), null);
  });

  it('Kubernetes flags need --kubernetes, and their values are checked', () => {
    assert.equal(
      usageError({ config: 'nginx.conf', ingressClass: 'limitswitch' }),
      'limitswitch replica: --ingress-class needs --kubernetes',
    );
    assert.equal(
      usageError({ config: 'nginx.conf', watchIngressWithoutClass: true }),
      'limitswitch replica: --watch-ingress-without-class needs --kubernetes',
    );
    assert.equal(
      usageError({ kubernetes: true, configmap: 'limitswitch-config' }),
      'limitswitch replica: --configmap limitswitch-config: expected NAMESPACE/NAME',
    );
    assert.equal(
      usageError({ kubernetes: true, configmap: 'a/b/c' }),
      'limitswitch replica: --configmap a/b/c: expected NAMESPACE/NAME',
    );
    assert.equal(
      usageError({ kubernetes: true, listenPort: '80x' }),
      'limitswitch replica: --listen-port 80x: not a port number',
    );
    assert.equal(
      usageError({ kubernetes: true, listenPort: '65536' }),
      'limitswitch replica: --listen-port 65536: not a port number',
    );
    assert.equal(
      usageError({
        kubernetes: true,
        configmap: 'limitswitch/limitswitch-config',
        listenPort: '8080',
        ingressClass: 'limitswitch',
      }),
      null,
    );
  });

  it('the command exits 1 with the usage error', () => {
    const both = run(['-c', 'nginx.conf', '--kubernetes']);
    assert.equal(both.status, 1);
    assert.equal(
      both.stderr,
      'limitswitch replica: -c FILE and --kubernetes are mutually exclusive: the configuration comes from one of them\n',
    );
    assert.equal(both.stdout, '');
    const missing = run(['--kubernetes', '--kubeconfig', '/nonexistent/kubeconfig']);
    assert.equal(missing.status, 1);
    assert.equal(
      missing.stderr,
      "limitswitch replica: --kubeconfig /nonexistent/kubeconfig: ENOENT: no such file or directory, open '/nonexistent/kubeconfig'\n",
    );
  });
});

describe('limitswitch replica --kubernetes without an API server (issue 18 §3.9)', () => {
  const dir = new TempDir();
  after(async () => {
    await stopAll();
    dir.remove();
  });

  it('no kubeconfig and not in a pod: says so and exits 1 (instead of retrying localhost:8080 forever)', () => {
    const r = spawnSync(process.execPath, [cli, 'replica', '--kubernetes'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, REDIS_URL: '', KUBERNETES_SERVICE_HOST: '', KUBECONFIG: '', HOME: dir.path },
    });
    assert.equal(r.status, 1);
    assert.equal(
      r.stderr,
      'limitswitch replica: --kubernetes: no kubeconfig found (--kubeconfig FILE, $KUBECONFIG, ~/.kube/config) and no in-cluster service account (KUBERNETES_SERVICE_HOST is not set)\n',
    );
  });

  it('API server unreachable: the status port answers /healthz 200 (the liveness probe) and /readyz 503', async () => {
    const [apiPort, statusPort] = await freePorts(2);
    const kubeconfig = dir.write(
      'kubeconfig.yaml',
      `apiVersion: v1
kind: Config
clusters: [{ name: gone, cluster: { server: 'http://127.0.0.1:${apiPort}' } }]
users: [{ name: gone, user: { token: t } }]
contexts: [{ name: gone, context: { cluster: gone, user: gone } }]
current-context: gone
`,
    );
    const replica = new LimitswitchProcess('replica', [
      '--kubernetes',
      '--kubeconfig',
      kubeconfig,
      '--status-listen',
      `127.0.0.1:${statusPort}`,
    ]);
    await replica.waitForLog('listing Ingresses, Services, EndpointSlices, Secrets and the ConfigMap');
    const healthz = await fetch(`http://127.0.0.1:${statusPort}/healthz`);
    assert.equal(healthz.status, 200);
    assert.deepEqual(await healthz.json(), { status: 'ok' });
    const readyz = await fetch(`http://127.0.0.1:${statusPort}/readyz`);
    assert.equal(readyz.status, 503);
    assert.deepEqual(await readyz.json(), { status: 'starting' });
    assert.equal(
      replica.lines.some((l) => l.msg === 'replica listening'),
      false,
    );
  });
});
