/**
 * Redis URLs → ioredis clients. Four topologies:
 * - `redis://[user:password@]host:port[/db]` and `rediss://…` (TLS): one server;
 * - `redis+sentinel://[user:password@]host:port,host:port/mastername[/db]` (and `rediss+sentinel://`):
 *   Sentinel finds the master; `?sentinelPassword=…` when the sentinels need one;
 * - `redis+cluster://[user:password@]host:port,host:port` (and `rediss+cluster://`): Redis Cluster.
 *
 * `?wait=N[&waitTimeoutMs=T]` (any topology) makes writes durable: each keyval mutation and counter
 * batch is followed by `WAIT N T` on the same connection, and answered as failed unless N replicas have
 * it (see docs/operations.md for what each setting can lose). A client whose server turned replica
 * (`READONLY`: a failover demoted it) reconnects at once, and Sentinel names it the new master.
 *
 * Every client is set up to fail fast instead of queueing: no offline queue, no replay of commands
 * whose reply was lost (a write must never be applied twice or late without its caller knowing),
 * a bounded command timeout, and quick reconnects so a returning Redis is used within a few hundred ms.
 * RESP2 (`protocol: 2`): ioredis 6 defaults to RESP3, whose decoder still had fixes pending.
 */
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import { LimitswitchError } from '../../shared/errors.ts';

/** `?wait=N&waitTimeoutMs=T`: a write counts once N replicas have it (Redis `WAIT`). */
export interface Durability {
  readonly replicas: number;
  readonly timeoutMs: number;
}

export type RedisTarget = (
  | { readonly kind: 'standalone'; readonly options: RedisOptions }
  | { readonly kind: 'sentinel'; readonly options: RedisOptions }
  | {
      readonly kind: 'cluster';
      readonly nodes: readonly { host: string; port: number }[];
      readonly options: RedisOptions;
    }
) & { readonly durability: Durability | null };

const QUERY_PARAMETERS: Record<string, readonly string[]> = {
  standalone: ['wait', 'waitTimeoutMs'],
  sentinel: ['wait', 'waitTimeoutMs', 'sentinelPassword'],
  cluster: ['wait', 'waitTimeoutMs'],
};

export interface RedisConnectionOptions {
  /** A command without a reply within this time fails (`StoreUnavailable`). Default 2000. */
  readonly commandTimeoutMs?: number;
  /** Connection attempt timeout. Default 2000. */
  readonly connectTimeoutMs?: number;
  /** Longest pause between reconnect attempts. Default 200. */
  readonly maxReconnectDelayMs?: number;
}

/** Parse a store URL into an ioredis target; `RL_ERR_CONFIG_INVALID` on anything else. */
export function parseRedisUrl(url: string): RedisTarget {
  const match =
    /^(rediss?)(?:\+(sentinel|cluster))?:\/\/(?:([^@/]*)@)?([^/?#]+)(\/[^?#]*)?(?:\?([^#]*))?$/.exec(url);
  if (!match) throw invalid(url, 'expected redis://, rediss://, redis+sentinel:// or redis+cluster://');
  const [, scheme, topology, userinfo, hostList, path = '', query = ''] = match;
  const options: RedisOptions = { protocol: 2 };
  if (scheme === 'rediss') options.tls = {};
  if (userinfo) {
    const cut = userinfo.indexOf(':');
    const user = decodeURIComponent(cut < 0 ? userinfo : userinfo.slice(0, cut));
    if (cut >= 0) options.password = decodeURIComponent(userinfo.slice(cut + 1));
    if (user) options.username = user;
  }
  const defaultPort = topology === 'sentinel' ? 26379 : 6379;
  const hosts = hostList!.split(',').map((h) => parseHost(url, h, defaultPort));
  const params = new URLSearchParams(query);
  const kind = topology ?? 'standalone';
  for (const name of params.keys()) {
    if (!QUERY_PARAMETERS[kind]!.includes(name)) {
      throw invalid(url, `unknown parameter "${name}" (known: ${QUERY_PARAMETERS[kind]!.join(', ')})`);
    }
  }
  const durability = parseDurability(url, params);
  const segments = path.split('/').filter((s) => s !== '');
  const db = (segment: string | undefined) => {
    if (segment === undefined) return;
    if (!/^\d+$/.test(segment)) throw invalid(url, `database must be a number, not "${segment}"`);
    options.db = Number(segment);
  };

  if (topology === 'cluster') {
    if (segments.length > 0) throw invalid(url, 'a cluster URL has no path (Redis Cluster has one database)');
    return { kind: 'cluster', nodes: hosts, options, durability };
  }
  if (topology === 'sentinel') {
    const [name, dbSegment, ...rest] = segments;
    if (!name || rest.length > 0) throw invalid(url, 'expected redis+sentinel://host:port,…/mastername[/db]');
    db(dbSegment);
    options.name = decodeURIComponent(name);
    options.sentinels = hosts;
    const sentinelPassword = params.get('sentinelPassword');
    if (sentinelPassword) options.sentinelPassword = sentinelPassword;
    if (scheme === 'rediss') options.enableTLSForSentinelMode = true;
    return { kind: 'sentinel', options, durability };
  }
  if (hosts.length !== 1)
    throw invalid(url, 'one host:port expected (use redis+sentinel:// or redis+cluster://)');
  if (segments.length > 1) throw invalid(url, 'expected redis://host:port[/db]');
  db(segments[0]);
  return { kind: 'standalone', options: { ...options, ...hosts[0] }, durability };
}

/**
 * A client for `url`, connecting in the background; see the module comment for its behaviour.
 * A `subscriber` client does not resubscribe by itself (ioredis leaves that promise unhandled when the
 * connection drops again at once): `RedisSubscriber` resubscribes on every `ready`.
 */
export function createRedisClient(
  url: string,
  options: RedisConnectionOptions = {},
  role: 'commands' | 'subscriber' = 'commands',
): Redis | Cluster {
  const target = parseRedisUrl(url);
  const maxDelayMs = options.maxReconnectDelayMs ?? 200;
  const retry = (times: number) => Math.min(times * 50, maxDelayMs);
  const common: RedisOptions = {
    ...target.options,
    commandTimeout: options.commandTimeoutMs ?? 2000,
    connectTimeout: options.connectTimeoutMs ?? 2000,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    autoResubscribe: role !== 'subscriber',
    // A demoted master answers writes with READONLY: reconnect (Sentinel resolves the new master, a
    // Cluster refreshes its slots), without resending the failed command.
    reconnectOnError: (err) => /\bREADONLY\b/.test(err.message),
  };
  if (target.kind === 'cluster') {
    const clusterOptions: ClusterOptions = {
      enableOfflineQueue: false,
      clusterRetryStrategy: retry,
      retryDelayOnFailover: 50,
      retryDelayOnClusterDown: 50,
      retryDelayOnTryAgain: 50,
      maxRedirections: 8,
      slotsRefreshTimeout: common.connectTimeout ?? 2000,
      redisOptions: { ...common, maxRetriesPerRequest: 0 },
    };
    return new Cluster([...target.nodes], clusterOptions);
  }
  return new Redis({
    ...common,
    enableOfflineQueue: false,
    retryStrategy: retry,
    sentinelRetryStrategy: retry,
  });
}

function parseDurability(url: string, params: URLSearchParams): Durability | null {
  const wait = params.get('wait');
  const timeout = params.get('waitTimeoutMs');
  if (wait === null) {
    if (timeout !== null) throw invalid(url, '"waitTimeoutMs" needs "wait"');
    return null;
  }
  if (!/^[1-9][0-9]{0,2}$/.test(wait))
    throw invalid(url, `"wait" must be a number of replicas (1-999), not "${wait}"`);
  if (timeout !== null && !/^[1-9][0-9]{0,5}$/.test(timeout)) {
    throw invalid(url, `"waitTimeoutMs" must be milliseconds (1-999999), not "${timeout}"`);
  }
  return { replicas: Number(wait), timeoutMs: timeout === null ? 1000 : Number(timeout) };
}

function parseHost(url: string, hostPort: string, defaultPort: number): { host: string; port: number } {
  const match = /^(\[[^\]]+\]|[^:[\]]+)(?::(\d+))?$/.exec(hostPort);
  if (!match) throw invalid(url, `bad host "${hostPort}"`);
  const host = match[1]!.replace(/^\[(.*)\]$/, '$1');
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port < 1 || port > 65535) throw invalid(url, `bad port in "${hostPort}"`);
  return { host, port };
}

/** The URL as it may be shown (logs, errors, banners): never with its password. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, '//***@');
}

function invalid(url: string, why: string): LimitswitchError {
  return new LimitswitchError('RL_ERR_CONFIG_INVALID', `invalid store URL "${redactUrl(url)}": ${why}`);
}
