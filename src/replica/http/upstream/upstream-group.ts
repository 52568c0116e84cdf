/**
 * `upstream` groups on the data path: servers chosen by nginx's round robin (the engine's
 * round-robin.ts: smooth weights, `max_conns`, `down` and `backup` servers, a server's failures before
 * its response head — connect, send or read-header error or timeout, a rejected head — counted to its
 * `max_fails` within `fail_timeout`, nginx's 1 and 10s by default), on this clock; the group's keepalive cache of idle
 * connections (upstream-keepalive.ts), each connection an undici `Client` (upstream-connection.ts), and
 * NGINX Plus's queue of requests waiting for a server (upstream-queue.ts).
 */

import type { UpstreamQueueSpec, UpstreamServerSpec } from '../../../config/model.ts';
import { socketAddressText } from '../../../engine/net/address-text.ts';
import { PeerStateSlot, PeerStates } from '../../../engine/upstream/peer-states.ts';
import { RoundRobin, type RoundRobinPeer } from '../../../engine/upstream/round-robin.ts';
import type { UpstreamInfo } from '../../../engine/upstream/upstream-info.ts';
import { type Clock, systemClock } from '../../../shared/clock.ts';
import { LimitswitchError } from '../../../shared/errors.ts';
import type { Http1Request } from '../wire/http1-request.ts';
import type { SavedSession } from '../wire/upstream-tls.ts';
import type { PeerTls } from './peer-tls.ts';
import { type ConnectionOptions, type ExchangeHandler, UpstreamConnection } from './upstream-connection.ts';
import { DEFAULT_KEEPALIVE, KeepaliveCache, type KeepaliveSettings } from './upstream-keepalive.ts';
import { type QueuedRequest, UpstreamQueue } from './upstream-queue.ts';

/** Timeouts shared by every server (nginx's proxy_* defaults in parentheses). */
export interface UpstreamOptions {
  /** `proxy_connect_timeout` (60 s) → 504 when it passes. */
  readonly connectTimeoutMs: number;
  /** `proxy_read_timeout` (60 s): waiting for the response head, and between body reads. */
  readonly readTimeoutMs: number;
  /** `proxy_send_timeout` (60 s): the server accepting nothing more of a request body → 504. */
  readonly sendTimeoutMs: number;
  /** `fail_timeout` of a server that names none (nginx's 10s): how long its failures count. */
  readonly failTimeoutMs: number;
  /**
   * How long a server seen writing a response head alone, then its body (see upstream-connection.ts),
   * gets a connection per request.
   */
  readonly headAloneMemoryMs: number;
  /** The clock of `failTimeoutMs`, `headAloneMemoryMs` and `keepalive_time`. */
  readonly clock: Clock;
}

export const DEFAULT_UPSTREAM_OPTIONS: UpstreamOptions = Object.freeze({
  connectTimeoutMs: 60_000,
  readTimeoutMs: 60_000,
  sendTimeoutMs: 60_000,
  failTimeoutMs: 10_000,
  headAloneMemoryMs: 60_000,
  clock: systemClock,
});

/** One server of a group: its round-robin state, and how its connections are made. */
export class UpstreamPeer extends PeerStateSlot implements RoundRobinPeer {
  readonly host: string;
  readonly port: number;
  readonly origin: string;
  /** `host:port` as the config names it (IPv6 in brackets), or `unix:/path`. */
  readonly server: string;
  /** For connections made outside the cache (upgrades): `proxy_connect_timeout`, `proxy_read_timeout`. */
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly weight: number;
  /** `max_conns` (0: no limit): requests it carries at once, counted in `active`. */
  readonly maxConns: number;
  /** `max_fails` (1), `fail_timeout` in seconds (10). */
  readonly maxFails: number;
  readonly failTimeoutS: number;
  readonly backup: boolean;
  readonly down: boolean;
  /** Epoch ms until which each request gets a connection of its own; 0 when connections are kept. */
  headAloneUntilMs = 0;
  /** The last TLS session saved with it, for the next connection to resume (`proxy_ssl_session_reuse`). */
  tlsSession: SavedSession | undefined = undefined;
  readonly #options: UpstreamOptions;
  readonly #cache: KeepaliveCache<UpstreamConnection>;
  /** How new connections are made, per `proxy_connect_timeout` (made on first use). */
  readonly #connections = new Map<number, ConnectionOptions>();

  constructor(
    server: UpstreamServerSpec,
    options: UpstreamOptions,
    cache: KeepaliveCache<UpstreamConnection>,
    states: PeerStates,
    index: number,
  ) {
    // its balancer state is its group's (shared with other workers when the group has a `zone`)
    super(states, index);
    this.host = server.host;
    this.port = server.port;
    this.server = socketAddressText(server.host, server.port);
    this.origin = `http://${this.server}`;
    this.connectTimeoutMs = options.connectTimeoutMs;
    this.readTimeoutMs = options.readTimeoutMs;
    this.weight = server.weight;
    this.maxConns = server.maxConns ?? 0;
    this.maxFails = server.maxFails ?? 1;
    this.failTimeoutS = Math.floor((server.failTimeoutMs ?? options.failTimeoutMs) / 1000);
    this.backup = server.backup === true;
    this.down = server.down === true;
    this.#options = options;
    this.#cache = cache;
  }

  /**
   * Sends a request to this server: on the most recently used idle connection to it made alike (plain,
   * or with the same TLS settings and name: `tls`), else on a new one, which must be established
   * within `connectTimeoutMs` (a location's `proxy_connect_timeout`; absent: the options' value). A
   * connection's last request (its `keepalive_requests`, a server marked head-alone, a closing group,
   * a request that says so) is sent with `Connection: close`.
   */
  dispatch(
    request: Http1Request,
    handler: ExchangeHandler,
    connectTimeoutMs: number | undefined,
    tls: PeerTls | null = null,
  ): void {
    const cache = this.#cache;
    const ownConnection = this.#ownConnection();
    const connection =
      (ownConnection ? null : cache.take(this, tls?.poolKey)) ??
      new UpstreamConnection(this, cache, this.#connectionOptions(connectTimeoutMs), tls);
    const last =
      request.reset === true ||
      ownConnection ||
      cache.closed ||
      connection.requests + 1 >= cache.settings.requests;
    connection.dispatch(request, handler, last);
  }

  /** @internal a response's head came in a read of its own and its body in the next one. */
  sawHeadAlone(): void {
    const first = this.headAloneUntilMs === 0;
    this.headAloneUntilMs = this.#options.clock.nowMs() + this.#options.headAloneMemoryMs;
    // connections kept before are the ones that would wait
    if (first) this.#cache.closeTo(this);
  }

  /** @internal a short answer: a marked server stays marked (its fresh connections hide the pattern). */
  answeredShort(): void {
    if (this.headAloneUntilMs !== 0)
      this.headAloneUntilMs = this.#options.clock.nowMs() + this.#options.headAloneMemoryMs;
  }

  #ownConnection(): boolean {
    if (this.headAloneUntilMs === 0) return false;
    if (this.#options.clock.nowMs() < this.headAloneUntilMs) return true;
    this.headAloneUntilMs = 0;
    return false;
  }

  #connectionOptions(connectTimeoutMs: number | undefined): ConnectionOptions {
    const timeoutMs = connectTimeoutMs ?? this.#options.connectTimeoutMs;
    let options = this.#connections.get(timeoutMs);
    if (options === undefined) {
      options = {
        connectTimeoutMs: timeoutMs,
        idleTimeoutMs: this.#cache.settings.timeoutMs,
        readTimeoutMs: this.#options.readTimeoutMs,
        clock: this.#options.clock,
      };
      this.#connections.set(timeoutMs, options);
    }
    return options;
  }
}

/** A named set of servers; `pick` is called once per forwarded request (and again on a retry). */
export class UpstreamGroup {
  readonly name: string;
  readonly peers: readonly UpstreamPeer[];
  /** `proxy_send_timeout` for requests whose decision names none. */
  readonly sendTimeoutMs: number;
  /** Idle connections to the group's servers. */
  readonly keepalive: KeepaliveCache<UpstreamConnection>;
  /** `queue`: requests waiting for a server; null without it. */
  readonly queue: UpstreamQueue | null;
  readonly #balancer: RoundRobin<UpstreamPeer>;
  readonly #clock: Clock;
  /** The servers' balancer state: this thread's, or shared through the group's `zone`. */
  readonly #states: PeerStates;
  /** Whether this worker waits for the zone's next free (its queue holds requests). */
  #watchingFrees = false;

  /** `shared`: the state of the same group another worker {@link share}d, and this thread's lock holder. */
  constructor(
    name: string,
    servers: readonly UpstreamServerSpec[],
    options: UpstreamOptions,
    keepalive: KeepaliveSettings = DEFAULT_KEEPALIVE,
    queue: UpstreamQueueSpec | null = null,
    shared?: { readonly memory: SharedArrayBuffer; readonly holder: number },
  ) {
    // The config refuses an empty upstream (nginx: `no servers are inside upstream`).
    if (servers.length === 0)
      throw new LimitswitchError('InternalError', `no servers are inside upstream "${name}"`);
    this.name = name;
    this.keepalive = new KeepaliveCache<UpstreamConnection>(keepalive);
    this.#states = new PeerStates(servers.length, shared);
    this.peers = servers.map(
      (server, i) => new UpstreamPeer(server, options, this.keepalive, this.#states, i),
    );
    // a new state starts from the configured weights; an attached one is another worker's already
    if (shared === undefined) for (const peer of this.peers) peer.effectiveWeight = peer.weight;
    this.#balancer = new RoundRobin(this.peers);
    this.#clock = options.clock;
    this.sendTimeoutMs = options.sendTimeoutMs;
    this.queue = queue === null ? null : new UpstreamQueue(queue, options.clock);
  }

  /**
   * The next server, skipping the ones in `tried` (already tried for this request), those marked
   * down and those at their `max_conns`, and the request counted on it (`max_conns`) until `free`;
   * null when none is left ("no live upstreams"). One step, so that workers sharing the group's
   * state never both take a server's last connection.
   */
  pick(tried: readonly UpstreamPeer[] | null = null): UpstreamPeer | null {
    const states = this.#states;
    return states.shared ? states.locked(() => this.#pickAndCount(tried)) : this.#pickAndCount(tried);
  }

  #pickAndCount(tried: readonly UpstreamPeer[] | null): UpstreamPeer | null {
    const peer = this.#balancer.pick(tried, this.#clock);
    if (peer !== null) peer.active++;
    return peer;
  }

  /**
   * A request's exchange with `peer` ended: a request waiting in the queue may take it; an answer after
   * a check clears the server's failures (after a failure, nothing changes).
   */
  free(peer: UpstreamPeer): void {
    const states = this.#states;
    if (states.shared) {
      states.locked(() => {
        peer.active--;
        this.#balancer.answered(peer);
      });
      if (this.queue !== null) states.announceFree();
    } else {
      peer.active--;
      this.#balancer.answered(peer);
    }
    this.queue?.drain();
  }

  /**
   * Puts `request` last in the group's queue (false: the queue is full). Each worker has a queue of its
   * own, as each of Plus's workers has; with a `zone`, it also waits for servers other workers free.
   */
  enqueue(request: QueuedRequest): boolean {
    if (!this.queue!.enqueue(request)) return false;
    if (this.#states.shared) this.#watchFrees();
    return true;
  }

  /**
   * While this worker's queue holds requests: drains it after every free announced in the zone. The
   * drain after arming catches a free between the failed pick and the arming.
   */
  #watchFrees(): void {
    const queue = this.queue!;
    if (this.#watchingFrees || queue.size === 0) return;
    this.#watchingFrees = true;
    this.#states.afterNextFree(() => {
      this.#watchingFrees = false;
      this.#watchFrees();
    });
    queueMicrotask(() => queue.drain());
  }

  /** The servers' state, for the other workers' groups to attach to (a group with a `zone`). */
  share(): SharedArrayBuffer {
    return this.#states.share();
  }

  /** The thread that locked as `holder` is gone: opens the group's lock if it held it. */
  forceUnlock(holder: number): boolean {
    return this.#states.forceUnlock(holder);
  }

  /**
   * The server failed a request before its response head: a failure counted (never for the only
   * server). True when that leaves it out (nginx then warns "upstream server temporarily disabled").
   */
  markFailed(peer: UpstreamPeer): boolean {
    return this.#states.locked(() => this.#balancer.markFailed(peer, this.#clock.nowMs()));
  }

  /** How many servers a request may try: those not `down`, backups included (nginx's tries). */
  get tries(): number {
    return this.#balancer.tries;
  }

  /** The group's state now, for heartbeats, the status API and metrics. */
  info(): UpstreamInfo {
    const nowMs = this.#clock.nowMs();
    const queue = this.queue;
    return {
      name: this.name,
      peers: this.peers.map((peer) => ({
        server: peer.server,
        weight: peer.weight,
        backup: peer.backup,
        state: peer.down ? 'down' : this.#balancer.isDown(peer, nowMs) ? 'unavail' : 'up',
        active: peer.active,
        maxConns: peer.maxConns,
      })),
      keepalive: this.keepalive.size,
      queue: queue === null ? null : { size: queue.size, maxSize: queue.maxSize, ...queue.counters },
    };
  }

  /**
   * Closes the idle connections; those still carrying a request close after their response (and
   * requests still queued for the group take its servers as those free up, on new connections).
   */
  close(): Promise<void> {
    return this.keepalive.close();
  }
}

/** An upstream group to build: its servers and its keepalive settings (absent: the replica's default). */
export interface UpstreamGroupSpec {
  readonly name: string;
  readonly servers: readonly UpstreamServerSpec[];
  readonly keepalive?: KeepaliveSettings;
  /** `queue` (absent: none). */
  readonly queue?: UpstreamQueueSpec | null;
}

/** Finding a group by name (what a listener needs of the set; the set may be swapped by a reload). */
export interface UpstreamLookup {
  get(name: string): UpstreamGroup | undefined;
  /** The group of one server at an address a `proxy_pass` with variables came to. */
  addressed(server: { readonly host: string; readonly port: number }): UpstreamGroup;
}

/** The listener's upstream groups, which every exchange of it shares. */
export interface UpstreamHost {
  readonly upstreams: UpstreamLookup;
  readonly defaultGroup: UpstreamGroup | null;
}
