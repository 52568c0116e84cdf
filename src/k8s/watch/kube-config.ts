import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';

/**
 * The API server connection: in a pod, its service account (`loadFromCluster`); otherwise
 * `--kubeconfig FILE` or the default kubeconfig (`$KUBECONFIG`, `~/.kube/config`); or a plain URL
 * (`--api-server http://127.0.0.1:8001`, e.g. behind `kubectl proxy`).
 */
export function loadKubeConfig(opts: { kubeconfig?: string; apiServer?: string } = {}): KubeConfig {
  const kc = new KubeConfig();
  if (opts.apiServer) {
    kc.loadFromOptions({
      // The client refuses plain http unless TLS verification is off; there is no TLS to verify then.
      clusters: [{ name: 'api', server: opts.apiServer, skipTLSVerify: opts.apiServer.startsWith('http:') }],
      users: [{ name: 'anonymous' }],
      contexts: [{ name: 'api', cluster: 'api', user: 'anonymous' }],
      currentContext: 'api',
    });
  } else if (opts.kubeconfig) {
    kc.loadFromFile(opts.kubeconfig);
  } else if (process.env.KUBERNETES_SERVICE_HOST) {
    kc.loadFromCluster();
  } else {
    kc.loadFromDefault();
  }
  return kc;
}

/**
 * Whether `loadKubeConfig` without options has anything to load: in a pod (KUBERNETES_SERVICE_HOST),
 * or a `$KUBECONFIG` file, or `~/.kube/config`. Without any, the client would fall back to
 * `http://localhost:8080` and fail there forever with a message about TLS.
 */
export function defaultKubeConfigFound(): boolean {
  if (process.env.KUBERNETES_SERVICE_HOST) return true;
  const fromEnv = (process.env.KUBECONFIG ?? '').split(delimiter).filter((f) => f !== '');
  if (fromEnv.length !== 0) return fromEnv.some((f) => existsSync(f));
  return existsSync(join(homedir(), '.kube', 'config'));
}
