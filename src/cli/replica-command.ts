/**
 * `limitswitch replica -c FILE | --kubernetes`: an ingress replica. SIGHUP reloads the file (a bad one
 * is logged and the old configuration kept); with `--kubernetes` the configuration follows the objects
 * (see replica-kubernetes.ts) and SIGHUP changes nothing. SIGTERM/SIGINT stop gracefully (in-flight
 * and held requests finish, counters are flushed, the replica deregisters).
 */
import { createWriteStream, type WriteStream } from 'node:fs';
import { hostname } from 'node:os';
import type { Command } from 'commander';
import { ConfigError, loadConfigFile } from '../config/index.ts';
import { parseHostPort } from '../engine/net/address-text.ts';
import { STORE_RESET_POLICIES, type StoreResetPolicy } from '../replica/cluster/store-reset.ts';
import { formatAccessLine } from '../replica/logs/access-log.ts';
import { ErrorLog, type ErrorLogLevel } from '../replica/logs/error-log.ts';
import { Replica } from '../replica/replica.ts';
import { hasCode, LimitswitchError } from '../shared/errors.ts';
import { openCliStore, type StoreFlags, storeOptions } from './open-store.ts';
import { type LogFlags, logOptions, processLogger } from './process-log.ts';
import { checkConfigMode, type KubernetesFlags, startKubernetesConfig } from './replica-kubernetes.ts';
import type { ReplicaStatus } from './replica-status.ts';

interface ReplicaFlags extends KubernetesFlags, StoreFlags, LogFlags {
  config?: string;
  kubernetes?: boolean;
  id?: string;
  statusListen?: string;
  stateFile?: string;
  storeReset: string;
  heartbeatTtl: string;
  errorLog: string;
  errorLogLevel: ErrorLogLevel;
  accessLog?: string;
}

export function registerReplicaCommand(program: Command): void {
  const command = program
    .command('replica')
    .description(
      'serve the server blocks of FILE, enforcing limit_req in process, following the keyval store',
    )
    .option('-c, --config <file>', 'nginx.conf-subset file')
    .option('--kubernetes', 'build the configuration from Ingress, Service, EndpointSlice, ConfigMap objects')
    .option(
      '--kubeconfig <file>',
      'with --kubernetes: API server credentials (default: in-cluster, else ~/.kube/config)',
    )
    .option(
      '--namespace <ns>',
      'with --kubernetes: watch Ingresses, Services, EndpointSlices here only (default: all)',
    )
    .option(
      '--ingress-class <name>',
      'with --kubernetes: serve Ingresses of this class (default: limitswitch)',
    )
    .option('--watch-ingress-without-class', 'with --kubernetes: also serve Ingresses that name no class')
    .option(
      '--configmap <namespace/name>',
      'with --kubernetes: the ConfigMap with http-snippets and settings',
    )
    .option('--listen-port <port>', 'with --kubernetes: the port Ingress traffic is served on (default: 80)')
    .option(
      '--tls-listen-port <port>',
      'with --kubernetes: the port hosts in Ingress tls: sections are served on with TLS (default: 443)',
    )
    .option(
      '--gateway-api',
      'with --kubernetes: also serve Gateway API Gateways and HTTPRoutes (GatewayClass controllerName limitswitch.io/gateway-controller) with NGINX Gateway Fabric RateLimitPolicies, and write their status',
    )
    .option(
      '--id <name>',
      'replica id in the cluster (default: POD_NAME, else hostname:port of the first listen)',
    )
    .option('--status-listen <host:port>', 'serve the read-only Plus API, /metrics, /healthz, /readyz here')
    .option(
      '--state-file <file>',
      'keep the applied keyval state here (loaded when the store is down at start)',
    )
    .option(
      '--store-reset <policy>',
      'when the store comes back empty: restore (write the switches held here back) or follow (drop them)',
      'restore',
    )
    .option(
      '--heartbeat-ttl <seconds>',
      'how long the cluster counts this replica live after its last heartbeat (one a second): cut off from the store, its synced zones shrink their shares to none within it',
      '5',
    )
    .option('--error-log <file>', 'nginx-format error log ("stderr" for the terminal)', 'stderr')
    .option('--error-log-level <level>', 'nginx error_log level: info, notice, warn, error', 'error')
    .option('--access-log <file>', 'access log in nginx "combined" format ("stdout" for the terminal)');
  storeOptions(command, 'shared store (default: REDIS_URL, else an in-process memory store)');
  logOptions(command).action(async (flags: ReplicaFlags) => {
    await runReplica(flags);
  });
}

async function runReplica(flags: ReplicaFlags): Promise<void> {
  const logger = processLogger('limitswitch-replica', flags);
  checkConfigMode(flags);
  const statusListen = flags.statusListen ? parseStatusListen(flags.statusListen) : null;
  const storeReset = parseStoreReset(flags.storeReset);
  const heartbeatTtlMs = parseHeartbeatTtl(flags.heartbeatTtl);
  const fileConfig = flags.config !== undefined ? loadConfigFile(flags.config) : null;
  // Bound first: a port in use stops the replica before it registers, and /healthz answers while a
  // --kubernetes replica waits for its API server.
  const statusPort = statusListen
    ? // Loaded only when asked for: the status server brings fastify and the API schema.
      await (await import('./replica-status.ts')).StatusPort.bind(statusListen.host, statusListen.port)
    : null;
  const store = openCliStore(flags, logger);
  const errorStream = openLog(flags.errorLog, process.stderr);
  const accessStream = flags.accessLog ? openLog(flags.accessLog, process.stdout) : null;
  // host:port of the first listener (two replicas on one host differ by port).
  const firstPort = fileConfig?.http.servers[0]?.listen[0]?.port ?? Number(flags.listenPort ?? 80);
  const id = flags.id ?? process.env.POD_NAME ?? `${hostname()}:${firstPort}`;
  let status: ReplicaStatus | null = null;
  const k8s = fileConfig
    ? null
    : await startKubernetesConfig(flags, { registry: store.registry, id, logger }).catch(
        async (err: unknown) => {
          await statusPort?.close();
          await store.close();
          throw err;
        },
      );
  const config = k8s?.config ?? fileConfig!;

  const errorLog = new ErrorLog((line) => errorStream.write(line), flags.errorLogLevel);
  const replica = new Replica({
    id,
    config,
    store,
    stateFile: flags.stateFile,
    storeReset,
    heartbeatTtlMs,
    errorLog,
    onCompleted: (req, facts) => {
      status?.metrics.observeRequest(facts.status, facts.seconds);
      accessStream?.write(formatAccessLine(req, facts));
    },
    onClientClosed: (phase) => status?.metrics.countClientClosed(phase),
    onDataPathFault: (kind) => status?.metrics.countDataPathFault(kind),
    log: (level, message, fields) => logger[level](fields ?? {}, message),
  });
  try {
    await replica.start();
    if (statusPort) status = await statusPort.serve(replica);
  } catch (err) {
    // A port it cannot bind: nginx's [emerg] in the error log, nothing left registered or open. On the
    // terminal the process's last word (`limitswitch: [emerg] …`) says it: once, as nginx does when
    // its error log is stderr.
    if (hasCode(err, 'RL_ERR_BIND') && errorStream !== process.stderr) errorLog.message('emerg', err.message);
    await replica.close();
    await k8s?.stop();
    await statusPort?.close();
    await store.close();
    throw err;
  }
  logger.info({ id, listen: replica.addresses(), status: status?.url ?? null }, 'replica listening');

  k8s?.follow(replica, (ok) => status?.metrics.countReload(ok));
  process.on('SIGHUP', () => {
    if (!flags.config) {
      logger.info('SIGHUP: the configuration follows the Kubernetes API; nothing to reload');
      return;
    }
    try {
      replica.reload(loadConfigFile(flags.config));
      status?.metrics.countReload(true);
      logger.info({ config: flags.config }, 'configuration reloaded');
    } catch (err) {
      status?.metrics.countReload(false);
      // nginx logs a refused reload as `[emerg] <text> in FILE:LINE` in its error log.
      const text =
        err instanceof ConfigError ? err.located : err instanceof Error ? err.message : String(err);
      errorLog.message('emerg', text);
      logger.error(
        { config: flags.config, err: text },
        'reload failed; the previous configuration stays in force',
      );
    }
  });
  const stop = async (signal: string): Promise<void> => {
    logger.info({ signal }, 'stopping: finishing in-flight requests');
    await k8s?.stop();
    await replica.close();
    await status?.close();
    await store.close();
    logger.info('stopped');
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

function parseStatusListen(value: string): { host: string; port: number } {
  const listen = parseHostPort(value, true);
  if (listen.error !== undefined || listen.port === null) {
    throw new LimitswitchError(
      'RL_ERR_CLI_USAGE',
      `--status-listen ${value}: ${listen.error ?? 'port required'}`,
    );
  }
  return { host: listen.host ?? '127.0.0.1', port: listen.port };
}

function parseStoreReset(value: string): StoreResetPolicy {
  const policy = STORE_RESET_POLICIES.find((p) => p === value);
  if (policy === undefined) {
    throw new LimitswitchError('RL_ERR_CLI_USAGE', `--store-reset ${value}: expected restore or follow`);
  }
  return policy;
}

/** Whole seconds, at least 2 (two heartbeats) and at most an hour. */
function parseHeartbeatTtl(value: string): number {
  if (!/^[0-9]{1,4}$/.test(value) || Number(value) < 2 || Number(value) > 3600) {
    throw new LimitswitchError(
      'RL_ERR_CLI_USAGE',
      `--heartbeat-ttl ${value}: expected whole seconds, 2 to 3600`,
    );
  }
  return Number(value) * 1000;
}

function openLog(target: string, fallback: NodeJS.WritableStream): NodeJS.WritableStream | WriteStream {
  if (target === 'stderr' || target === 'stdout') return target === 'stderr' ? process.stderr : fallback;
  return createWriteStream(target, { flags: 'a' });
}
