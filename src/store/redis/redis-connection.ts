/**
 * Redis URLs → ioredis clients. Four topologies:
 * - `redis://[user:password@]host:port[/db]` and `rediss://…` (TLS): one server;
 * - `redis+sentinel://[user:password@]host:port,host:port/mastername[/db]` (and `rediss+sentinel://`):
 *   Sentinel finds the master; `?sentinelPassword=…` when the sentinels need one;
 * - `redis+cluster://[user:password@]host:port,host:port` (and `rediss+cluster://`): Redis Cluster.
 *
 * Every client is set up to fail fast instead of queueing: no offline queue, no replay of commands
 * whose reply was lost (a write must never be applied twice or late without its caller knowing),
 * a bounded command timeout, and quick reconnects so a returning Redis is used within a few hundred ms.
 * RESP2 (`protocol: 2`): ioredis 6 defaults to RESP3, whose decoder still had fixes pending.
 */
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import { LimitswitchError } from '../../shared/errors.ts';

export type RedisTarget =
  | { readonly kind: 'standalone'; readonly options: RedisOptions }
  | { readonly kind: 'sentinel'; readonly options: RedisOptions }
  | {
      readonly kind: 'cluster';
      readonly nodes: readonly { host: string; port: number }[];
      readonly options: RedisOptions;
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
  const segments = path.split('/').filter((s) => s !== '');
  const db = (segment: string | undefined) => {
    if (segment === undefined) return;
    if (!/^\d+$/.test(segment)) throw invalid(url, `database must be a number, not "${segment}"`);
    options.db = Number(segment);
  };

  if (topology === 'cluster') {
    if (segments.length > 0) throw invalid(url, 'a cluster URL has no path (Redis Cluster has one database)');
    return { kind: 'cluster', nodes: hosts, options };
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
    return { kind: 'sentinel', options };
  }
  if (hosts.length !== 1)
    throw invalid(url, 'one host:port expected (use redis+sentinel:// or redis+cluster://)');
  if (segments.length > 1) throw invalid(url, 'expected redis://host:port[/db]');
  db(segments[0]);
  return { kind: 'standalone', options: { ...options, ...hosts[0] } };
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
