/**
 * The keepalive cache of an upstream group, as ngx_http_upstream_keepalive_module keeps one per
 * `upstream` block and worker: after a response, its connection goes back to the cache unless it has
 * carried `keepalive_requests` requests, is older than `keepalive_time`, was closed by the server or
 * failed; the cache holds at most `keepalive` idle connections for all the group's servers, and closes
 * the least recently used one to make room; an idle connection closes after `keepalive_timeout`. A
 * request takes the most recently used idle connection to the server round robin picked, else a new
 * one.
 *
 * Without `keepalive` nginx keeps nothing (a connection per request); the replica keeps up to
 * `REPLICA_DEFAULT_KEEPALIVE`, because a connection per request costs it ~5× the CPU of a kept one
 * (see docs/replica-http.md).
 */

/** What the cache needs of a connection (upstream-connection.ts): its server, its use, its links. */
export interface CachedConnection<C extends CachedConnection<C>> {
  readonly peer: object;
  /** Who may reuse it: requests with the same key (TLS settings and name; '' for plain connections). */
  readonly poolKey: string;
  /** Requests it carried. */
  readonly requests: number;
  /** When it was made. */
  readonly startedMs: number;
  /** The cache's list links (most recently used first); null when not cached. */
  newer: C | null;
  older: C | null;
  cached: boolean;
  /** Closes it (and takes it out of the cache: `forget`). */
  close(): void;
  closeAndWait(): Promise<void>;
}

/** `keepalive`, `keepalive_requests`, `keepalive_time`, `keepalive_timeout` of one group. */
export interface KeepaliveSettings {
  /** Idle connections kept for the whole group. */
  readonly connections: number;
  /** Requests a connection carries; the last one is sent with `Connection: close`. */
  readonly requests: number;
  /** How long after its connect a connection may go back to the cache. */
  readonly timeMs: number;
  /** How long an idle connection is kept. */
  readonly timeoutMs: number;
}

/**
 * Idle connections kept for a group without `keepalive`: ingress-nginx's default
 * (`upstream-keepalive-connections: 320`), above what a replica's bursts leave idle, so connections
 * are not closed and opened again under load.
 */
export const REPLICA_DEFAULT_KEEPALIVE = 320;

/** nginx's defaults for the keepalive module's settings (and the replica's cache size). */
export const DEFAULT_KEEPALIVE: KeepaliveSettings = Object.freeze({
  connections: REPLICA_DEFAULT_KEEPALIVE,
  requests: 1000,
  timeMs: 3_600_000,
  timeoutMs: 60_000,
});

export class KeepaliveCache<C extends CachedConnection<C>> {
  readonly settings: KeepaliveSettings;
  /** Most recently used first. */
  #newest: C | null = null;
  #oldest: C | null = null;
  #size = 0;
  #closed = false;

  constructor(settings: KeepaliveSettings) {
    this.settings = settings;
  }

  /** Idle connections now. */
  get size(): number {
    return this.#size;
  }

  /** The most recently used idle connection to `peer` made for `poolKey`, taken out of the cache; null when none. */
  take(peer: object, poolKey = ''): C | null {
    for (let connection = this.#newest; connection !== null; connection = connection.older) {
      if (connection.peer === peer && connection.poolKey === poolKey) {
        this.#unlink(connection);
        return connection;
      }
    }
    return null;
  }

  /**
   * A connection that carried its response and may carry another (its socket is open): cached, or
   * closed when it has had its requests or its time. Makes room by closing the least recently used.
   */
  keep(connection: C, nowMs: number): void {
    const settings = this.settings;
    if (
      this.#closed ||
      connection.requests >= settings.requests ||
      nowMs - connection.startedMs > settings.timeMs
    ) {
      connection.close();
      return;
    }
    if (this.#size >= settings.connections) {
      const oldest = this.#oldest!;
      this.#unlink(oldest);
      oldest.close();
    }
    connection.older = this.#newest;
    connection.newer = null;
    if (this.#newest !== null) this.#newest.newer = connection;
    else this.#oldest = connection;
    this.#newest = connection;
    connection.cached = true;
    this.#size++;
  }

  /** A connection that closed: out of the cache, if it was in it. */
  forget(connection: C): void {
    if (connection.cached) this.#unlink(connection);
  }

  /** Closes the idle connections to `peer` (its connections are not to be reused). */
  closeTo(peer: object): void {
    for (let connection = this.#newest; connection !== null; ) {
      const older = connection.older;
      if (connection.peer === peer) {
        this.#unlink(connection);
        connection.close();
      }
      connection = older;
    }
  }

  /** Closes every idle connection; connections still busy close after their response. */
  async close(): Promise<void> {
    this.#closed = true;
    const closing: Promise<void>[] = [];
    while (this.#newest !== null) {
      const connection = this.#newest;
      this.#unlink(connection);
      closing.push(connection.closeAndWait());
    }
    await Promise.all(closing);
  }

  get closed(): boolean {
    return this.#closed;
  }

  #unlink(connection: C): void {
    if (connection.newer !== null) connection.newer.older = connection.older;
    else this.#newest = connection.older;
    if (connection.older !== null) connection.older.newer = connection.newer;
    else this.#oldest = connection.newer;
    connection.newer = null;
    connection.older = null;
    connection.cached = false;
    this.#size--;
  }
}
