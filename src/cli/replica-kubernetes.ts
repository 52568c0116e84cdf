/**
 * `limitswitch replica --kubernetes`: the replica's configuration comes from Ingress, Service,
 * EndpointSlice and ConfigMap objects instead of a file. The first config text is awaited before the
 * replica listens; every later text is applied with `Replica.reload` (zones whose key and size are
 * unchanged keep their state). The live replica count is read from the store's registry every few
 * seconds and fed to `nginx.org/limit-req-scale`; a new count re-renders with the new rate.
 */

import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { ConfigError, loadConfigText } from '../config/index.ts';
import type { Config } from '../config/model.ts';
import type { Replica } from '../replica/replica.ts';
import { LimitswitchError } from '../shared/errors.ts';
import type { RegistryReader } from '../store/cluster-registry.ts';

/** The `replica` flags that only mean something with `--kubernetes`. */
export interface KubernetesFlags {
  readonly kubeconfig?: string;
  readonly namespace?: string;
  readonly ingressClass?: string;
  readonly watchIngressWithoutClass?: boolean;
  readonly configmap?: string;
  readonly listenPort?: string;
  readonly tlsListenPort?: string;
  readonly gatewayApi?: boolean;
}

/** Their option names, for "needs --kubernetes" usage errors. */
export const KUBERNETES_ONLY_FLAGS: Readonly<Record<keyof KubernetesFlags, string>> = {
  kubeconfig: '--kubeconfig',
  namespace: '--namespace',
  ingressClass: '--ingress-class',
  watchIngressWithoutClass: '--watch-ingress-without-class',
  configmap: '--configmap',
  listenPort: '--listen-port',
  tlsListenPort: '--tls-listen-port',
  gatewayApi: '--gateway-api',
};

/** The IngressClass the replicas serve unless told otherwise (the one `deploy/` creates). */
export const DEFAULT_INGRESS_CLASS = 'limitswitch';

/** How often the registry is read for the live replica count. */
const REPLICA_COUNT_INTERVAL_MS = 2000;

const SOURCE_NAME = 'kubernetes';

function usage(text: string): never {
  throw new LimitswitchError('RL_ERR_CLI_USAGE', `limitswitch replica: ${text}`);
}

function parseConfigMapRef(value: string): { namespace: string; name: string } {
  const [namespace, name, ...rest] = value.split('/');
  if (!namespace || !name || rest.length !== 0) usage(`--configmap ${value}: expected NAMESPACE/NAME`);
  return { namespace, name };
}

function parseListenPort(value: string | undefined, flag = '--listen-port', fallback = 80): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!/^\d+$/.test(value) || port < 1 || port > 65535) usage(`${flag} ${value}: not a port number`);
  return port;
}

const parseTlsListenPort = (value: string | undefined): number =>
  parseListenPort(value, '--tls-listen-port', 443);

/**
 * `-c FILE` or `--kubernetes`, exactly one; the Kubernetes flags only with `--kubernetes`; their values
 * well-formed. Throws a usage error before anything is opened.
 */
export function checkConfigMode(
  flags: KubernetesFlags & { readonly config?: string; readonly kubernetes?: boolean },
): void {
  if (flags.config !== undefined && flags.kubernetes) {
    usage('-c FILE and --kubernetes are mutually exclusive: the configuration comes from one of them');
  }
  if (flags.config === undefined && !flags.kubernetes) {
    usage('a configuration is required: -c FILE, or --kubernetes to build it from Ingress objects');
  }
  if (!flags.kubernetes) {
    for (const [key, option] of Object.entries(KUBERNETES_ONLY_FLAGS)) {
      if (flags[key as keyof KubernetesFlags] !== undefined) usage(`${option} needs --kubernetes`);
    }
    return;
  }
  if (flags.configmap !== undefined) parseConfigMapRef(flags.configmap);
  parseListenPort(flags.listenPort);
  parseTlsListenPort(flags.tlsListenPort);
}

/**
 * Live replicas in the registry, this one counted even before its first heartbeat; null when the
 * store cannot be read (the last count stays in force).
 */
async function liveReplicaCount(registry: RegistryReader, selfId: string): Promise<number | null> {
  try {
    const records = await registry.replicas();
    return 1 + records.filter((r) => r.live && r.id !== selfId).length;
  } catch {
    return null;
  }
}

export interface KubernetesConfigRun {
  /** The first configuration, built from the objects as listed at start. */
  readonly config: Config;
  /** Applies every later config text to `replica` (started) and follows the replica count. */
  follow(replica: Replica, onReload: (ok: boolean) => void): void;
  stop(): Promise<void>;
}

/**
 * Connects to the API server (`--kubeconfig`, else in-cluster with KUBERNETES_SERVICE_HOST, else the
 * default kubeconfig), lists everything and returns the first configuration.
 */
export async function startKubernetesConfig(
  flags: KubernetesFlags,
  ctx: { registry: RegistryReader; id: string; logger: Logger },
): Promise<KubernetesConfigRun> {
  const { registry, id, logger } = ctx;
  const configMap = flags.configmap ? parseConfigMapRef(flags.configmap) : null;
  const listenPort = parseListenPort(flags.listenPort);
  const tlsListenPort = parseTlsListenPort(flags.tlsListenPort);
  const ingressClass = flags.ingressClass ?? DEFAULT_INGRESS_CLASS;
  // The Kubernetes client is loaded only for --kubernetes replicas.
  const { defaultKubeConfigFound, loadKubeConfig } = await import('../k8s/watch/kube-config.ts');
  if (!flags.kubeconfig && !defaultKubeConfigFound()) {
    usage(
      '--kubernetes: no kubeconfig found (--kubeconfig FILE, $KUBECONFIG, ~/.kube/config) and no in-cluster service account (KUBERNETES_SERVICE_HOST is not set)',
    );
  }
  const { KubernetesConfigSource } = await import('../k8s/watch/kubernetes-config-source.ts');
  let kubeConfig: KubeConfig;
  try {
    kubeConfig = loadKubeConfig({ kubeconfig: flags.kubeconfig });
  } catch (err) {
    const what = flags.kubeconfig ? `--kubeconfig ${flags.kubeconfig}` : 'the kubeconfig';
    usage(`${what}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const source = new KubernetesConfigSource({
    kubeConfig,
    namespace: flags.namespace ?? null,
    ingressClass,
    watchIngressWithoutClass: flags.watchIngressWithoutClass === true,
    configMap,
    listenPort,
    tlsListenPort,
    gatewayApi: flags.gatewayApi === true,
    component: 'limitswitch-replica',
    logger,
  });
  source.on('watch-error', (path, err, delayMs) =>
    logger.warn({ path, err: String(err), delayMs }, 'watch stopped; restarting'),
  );
  let replicas = await liveReplicaCount(registry, id);
  if (replicas !== null) source.setReplicaCount(replicas);
  logger.info(
    { namespace: flags.namespace ?? null, ingressClass, configMap, listenPort },
    flags.gatewayApi === true
      ? 'listing Ingresses, Services, EndpointSlices, Secrets, the ConfigMap and the Gateway API objects'
      : 'listing Ingresses, Services, EndpointSlices, Secrets and the ConfigMap',
  );
  let appliedText: string;
  let config: Config;
  try {
    appliedText = await source.start();
    config = loadConfigText(appliedText, SOURCE_NAME, { files: secretFiles(source) });
  } catch (err) {
    await source.stop();
    throw err;
  }
  let timer: NodeJS.Timeout | null = null;

  return {
    config,
    follow(replica, onReload) {
      const apply = (text: string): void => {
        if (text === appliedText) return;
        let next: Config;
        try {
          next = loadConfigText(text, SOURCE_NAME, { files: secretFiles(source) });
          replica.reload(next);
        } catch (err) {
          // The translator checks every fragment, so this means a bug; keep serving the old config.
          onReload(false);
          const message = err instanceof ConfigError ? err.located : String(err);
          logger.error({ err: message }, 'configuration refused; the previous configuration stays in force');
          return;
        }
        appliedText = text;
        onReload(true);
        logger.info(
          { source: SOURCE_NAME, replicas, servers: next.http.servers.length },
          'configuration reloaded',
        );
      };
      source.on('config', apply);
      // A change that arrived while the replica was starting.
      const current = source.current();
      if (current !== null) apply(current);

      let polling = false;
      timer = setInterval(() => {
        if (polling) return;
        polling = true;
        void liveReplicaCount(registry, id).then((count) => {
          polling = false;
          if (count === null || count === replicas) return;
          logger.info({ replicas: count, was: replicas }, 'live replica count changed');
          replicas = count;
          source.setReplicaCount(count);
        });
      }, REPLICA_COUNT_INTERVAL_MS);
      timer.unref();
    },
    async stop() {
      if (timer) clearInterval(timer);
      await source.stop();
    },
  };
}

/** The TLS Secrets' files the last translation names (certificates and keys, never on disk). */
function secretFiles(source: {
  lastTranslation(): { files: (path: string) => string | undefined } | null;
}): (path: string) => string | undefined {
  const translation = source.lastTranslation();
  return translation === null ? () => undefined : translation.files;
}
