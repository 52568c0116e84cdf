/**
 * `upstream` groups on the data path: keep-alive undici `Pool`s per server (one per distinct
 * `proxy_connect_timeout`, since undici applies a connect timeout per pool), servers chosen by nginx's
 * smooth weighted round robin (ngx_http_upstream_get_peer), a server that failed a request before its
 * response head (connect, send or read-header error or timeout, a rejected head) skipped for
 * `failTimeoutMs` (nginx's `max_fails=1 fail_timeout=10s`; a group of one server is never skipped).
 */

import { Pool } from 'undici';
import type { UpstreamServerSpec } from '../../config/model.ts';
import { type Clock, systemClock } from '../../shared/clock.ts';
import { LimitswitchError } from '../../shared/errors.ts';

/** Timeouts and pool sizes shared by every server (nginx's proxy_* defaults in parentheses). */
export interface UpstreamOptions {
  /** `proxy_connect_timeout` (60 s) → 504 when it passes. */
  readonly connectTimeoutMs: number;
  /** `proxy_read_timeout` (60 s): waiting for the response head, and between body reads. */
  readonly readTimeoutMs: number;
  /** `proxy_send_timeout` (60 s): the server accepting nothing more of a request body → 504. */
  readonly sendTimeoutMs: number;
  /** How long an idle upstream connection is kept (undici caps it by the server's Keep-Alive hint). */
  readonly keepAliveTimeoutMs: number;
  /** Most connections per server; null is unbounded, like nginx (which only caps the idle ones). */
  readonly connections: number | null;
  /** How long a server that failed a request (before its response head) is left out of the rotation. */
  readonly failTimeoutMs: number;
  /** The clock of `failTimeoutMs`. */
  readonly clock: Clock;
}

export const DEFAULT_UPSTREAM_OPTIONS: UpstreamOptions = Object.freeze({
  connectTimeoutMs: 60_000,
  readTimeoutMs: 60_000,
  sendTimeoutMs: 60_000,
  keepAliveTimeoutMs: 60_000,
  connections: null,
  failTimeoutMs: 10_000,
  clock: systemClock,
});

/** One server of a group with its pool and its round-robin state. */
export class UpstreamPeer {
  readonly host: string;
  readonly port: number;
  readonly origin: string;
  readonly pool: Pool;
  /** For connections made outside the pool (upgrades): `proxy_connect_timeout`, `proxy_read_timeout`. */
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly weight: number;
  currentWeight = 0;
  /** Epoch ms until which the server is skipped; 0 when it is up. */
  downUntilMs = 0;
  readonly #options: UpstreamOptions;
  /** Pools for connect timeouts other than the options' one, made on first use. */
  readonly #pools = new Map<number, Pool>();
  #closed = false;

  constructor(server: UpstreamServerSpec, options: UpstreamOptions) {
    const host = server.host.includes(':') ? `[${server.host}]` : server.host;
    this.host = server.host;
    this.port = server.port;
    this.origin = `http://${host}:${server.port}`;
    this.connectTimeoutMs = options.connectTimeoutMs;
    this.readTimeoutMs = options.readTimeoutMs;
    this.weight = server.weight;
    this.#options = options;
    this.pool = this.#newPool(options.connectTimeoutMs);
  }

  /**
   * The pool whose new connections must be established within `connectTimeoutMs` (a location's
   * `proxy_connect_timeout`); absent or the options' value: `pool`. Allocates only the first time a
   * value is seen; after `close()` every answer is the (closed) `pool`.
   */
  poolFor(connectTimeoutMs: number | undefined): Pool {
    if (
      connectTimeoutMs === undefined ||
      connectTimeoutMs === this.#options.connectTimeoutMs ||
      this.#closed
    ) {
      return this.pool;
    }
    let pool = this.#pools.get(connectTimeoutMs);
    if (pool === undefined) {
      pool = this.#newPool(connectTimeoutMs);
      this.#pools.set(connectTimeoutMs, pool);
    }
    return pool;
  }

  /** Closes every pool once its in-flight requests are done. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([this.pool, ...this.#pools.values()].map((pool) => pool.close()));
  }

  #newPool(connectTimeoutMs: number): Pool {
    const options = this.#options;
    return new Pool(this.origin, {
      connections: options.connections,
      pipelining: 1,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      keepAliveMaxTimeout: options.keepAliveTimeoutMs,
      headersTimeout: options.readTimeoutMs,
      bodyTimeout: options.readTimeoutMs,
      connect: { timeout: connectTimeoutMs },
    });
  }
}

/** A named set of servers; `pick` is called once per forwarded request (and again on a retry). */
export class UpstreamGroup {
  readonly name: string;
  readonly peers: readonly UpstreamPeer[];
  /** `proxy_send_timeout` for requests whose decision names none. */
  readonly sendTimeoutMs: number;
  readonly #single: UpstreamPeer | null;
  readonly #failTimeoutMs: number;
  readonly #clock: Clock;

  constructor(name: string, servers: readonly UpstreamServerSpec[], options: UpstreamOptions) {
    // The config refuses an empty upstream (nginx: `no servers are inside upstream`).
    if (servers.length === 0)
      throw new LimitswitchError('InternalError', `no servers are inside upstream "${name}"`);
    this.name = name;
    this.peers = servers.map((server) => new UpstreamPeer(server, options));
    this.#single = this.peers.length === 1 ? this.peers[0]! : null;
    this.#failTimeoutMs = options.failTimeoutMs;
    this.#clock = options.clock;
    this.sendTimeoutMs = options.sendTimeoutMs;
  }

  /**
   * The next server, skipping the ones in `tried` (already tried for this request) and those marked
   * down; null when none is left ("no live upstreams").
   */
  pick(tried: readonly UpstreamPeer[] | null = null): UpstreamPeer | null {
    if (this.#single !== null) return tried === null ? this.#single : null;
    let best: UpstreamPeer | null = null;
    let total = 0;
    let nowMs = 0;
    for (const peer of this.peers) {
      if (tried?.includes(peer)) continue;
      if (peer.downUntilMs !== 0) {
        nowMs ||= this.#clock.nowMs();
        if (peer.downUntilMs > nowMs) continue;
        peer.downUntilMs = 0;
      }
      peer.currentWeight += peer.weight;
      total += peer.weight;
      if (best === null || peer.currentWeight > best.currentWeight) best = peer;
    }
    if (best !== null) best.currentWeight -= total;
    return best;
  }

  /**
   * The server failed a request before its response head: leave it out for `failTimeoutMs` (never
   * the only server). True when it was left out (nginx then warns "upstream server temporarily
   * disabled").
   */
  markFailed(peer: UpstreamPeer): boolean {
    if (this.#single !== null) return false;
    peer.downUntilMs = this.#clock.nowMs() + this.#failTimeoutMs;
    return true;
  }

  async close(): Promise<void> {
    await Promise.all(this.peers.map((peer) => peer.close()));
  }
}

/** All upstream groups of a listener, by name. */
/** Finding a group by name (what a listener needs of the set; the set may be swapped by a reload). */
export interface UpstreamLookup {
  get(name: string): UpstreamGroup | undefined;
}

export class UpstreamSet implements UpstreamLookup {
  readonly #groups = new Map<string, UpstreamGroup>();
  #closed: Promise<void> | null = null;

  constructor(
    specs: readonly { readonly name: string; readonly servers: readonly UpstreamServerSpec[] }[],
    options: Partial<UpstreamOptions> = {},
  ) {
    const merged = { ...DEFAULT_UPSTREAM_OPTIONS, ...options };
    for (const spec of specs) this.#groups.set(spec.name, new UpstreamGroup(spec.name, spec.servers, merged));
  }

  get(name: string): UpstreamGroup | undefined {
    return this.#groups.get(name);
  }

  /** Closes every pool once its in-flight requests are done. Idempotent. */
  close(): Promise<void> {
    this.#closed ??= Promise.all([...this.#groups.values()].map((group) => group.close())).then(() => {});
    return this.#closed;
  }
}
