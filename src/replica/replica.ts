/**
 * An ingress replica: serves the `server` blocks of a configuration, enforces limit_req in process,
 * follows the keyval store without a reload, counts, and reports itself.
 *
 * Lifecycle: `start()` loads the keyval state (store, else the state file), registers, and listens;
 * `reload()` swaps the configuration (zones whose key and size are unchanged keep their state);
 * `close()` stops accepting, finishes in-flight and held requests, flushes counters, deregisters.
 */

import { createHash } from 'node:crypto';
import { buildSite } from '../config/build-site.ts';
import type { Config, RealIpConf, ServerConf } from '../config/model.ts';
import { NGINX_CLIENT_TIMERS } from '../engine/http/client-timers.ts';
import { servedPorts } from '../engine/http/served-ports.ts';
import type { Site } from '../engine/http/site.ts';
import { LIMIT_CONN, type LimitConnZone } from '../engine/limit-conn/limit-conn-zone.ts';
import { LIMIT_REQ, type LimitReqZone } from '../engine/limit-req/limit-req-zone.ts';
import { normalizePeerAddress } from '../engine/net/address-text.ts';
import type { UpstreamInfo } from '../engine/upstream/upstream-info.ts';
import { type Clock, systemClock } from '../shared/clock.ts';
import type { AuditTrail } from '../store/audit-trail.ts';
import type { RegistryReader, RegistryWriter, ReplicaInfo } from '../store/cluster-registry.ts';
import type { CounterStore } from '../store/counter-store.ts';
import type { KeyvalFeed, KeyvalHead, KeyvalWriter } from '../store/keyval-store.ts';
import { KeyvalSync, type Reload } from '../store/keyval-sync.ts';
import type { LeaseStore } from '../store/lease-store.ts';
import type { LimitSyncStore } from '../store/limit-sync-store.ts';
import { StateFile } from '../store/state-file.ts';
import { StoreTrouble } from '../store/store-trouble.ts';
import { CounterFlusher } from './cluster/counter-flusher.ts';
import { applyChange, applySnapshot } from './cluster/keyval-applier.ts';
import { LimitSync } from './cluster/limit-sync.ts';
import { type StoreResetCounts, type StoreResetPolicy, storeResetHandler } from './cluster/store-reset.ts';
import { engineHook, type RoutedDecision, upgradeHook } from './engine-hook.ts';
import type { ClientRequestHead, ExchangeOutcome } from './http/decision.ts';
import type { EdgeConf } from './http/edge-listener.ts';
import type { CallbackKind } from './http/fault-boundary.ts';
import { ProxyServer } from './http/proxy-server.ts';
import { UpstreamSet } from './http/upstream-group.ts';
import { reportFaults } from './logs/data-path-faults.ts';
import { connectionNumber, ErrorLog, requestLogContext } from './logs/error-log.ts';
import { type ProxyTargets, resolveProxyTargets } from './proxy-targets.ts';
import { RequestCounts } from './request-counts.ts';

export const REPLICA_VERSION = '0.1.0';

/**
 * The store ports a replica uses: it follows the switches (and writes them back after a store
 * reset), reports itself (and counts the live replicas for cluster-wide limits), adds its counters,
 * records a dropped reset once, and exchanges its synced zones' buckets.
 */
export interface ReplicaStore {
  readonly keyvals: KeyvalFeed & Pick<KeyvalWriter, 'restore'>;
  readonly registry: RegistryWriter & Pick<RegistryReader, 'replicas'>;
  readonly limitSync: Pick<LimitSyncStore, 'exchange'>;
  readonly counters: Pick<CounterStore, 'add' | 'resets'>;
  readonly audit: Pick<AuditTrail, 'append'>;
  readonly leases: Pick<LeaseStore, 'acquire'>;
}

export interface ReplicaOptions {
  readonly id: string;
  readonly config: Config;
  readonly store: ReplicaStore;
  /** Listen address for every port, instead of each `listen`'s own (default: the listen's, else all). */
  readonly host?: string;
  /** Replace the config's listen ports (tests, demo): config port → actual port (0 = any free one). */
  readonly portMap?: ReadonlyMap<number, number>;
  /** The state file: applied switches (fail-static start) and counter batches not yet flushed. */
  readonly stateFile?: string;
  /** What a store that came back empty does to the switches held here. Default `restore`. */
  readonly storeReset?: StoreResetPolicy;
  readonly errorLog?: ErrorLog;
  /** Wall clock of the engine, key expiry, heartbeats and the state file. Default the system's. */
  readonly clock?: Clock;
  readonly flushIntervalMs?: number;
  /** How often synced zones exchange with the store (default 100 ms). */
  readonly limitSyncIntervalMs?: number;
  readonly heartbeatIntervalMs?: number;
  readonly heartbeatTtlMs?: number;
  /** Called for every finished exchange (access log, latency metrics). */
  readonly onCompleted?: (req: ClientRequestHead, outcome: ResponseFacts) => void;
  /** A client went away while held or forwarded (nginx 499). */
  readonly onClientClosed?: (phase: string) => void;
  /** A data path callback threw and its connection was ended (http/fault-boundary.ts). */
  readonly onDataPathFault?: (kind: CallbackKind) => void;
  /** Structured events (reload errors, store trouble) for the process log. */
  readonly log?: (
    level: 'info' | 'warn' | 'error',
    message: string,
    fields?: Record<string, unknown>,
  ) => void;
}

/** What the access log and the latency histogram learn of a finished exchange, in nginx's terms. */
export interface ResponseFacts extends ExchangeOutcome {
  /** `$remote_addr`: the client, after realip. */
  readonly remoteAddr: string;
}

export class Replica {
  readonly id: string;
  readonly store: ReplicaStore;
  readonly sync: KeyvalSync;
  /** Cluster-wide limits: the synced zones' exchanges with the store. */
  readonly limitSync: LimitSync;
  #config: Config;
  #site: Site;
  #targets: ProxyTargets;
  #upstreams: UpstreamSet;
  #configHash: string;
  readonly #clock: Clock;
  readonly #startedAtMs: number;
  readonly locationRequests = new RequestCounts();
  readonly #listeners = new Map<
    number,
    { server: ProxyServer<RoutedDecision>; host: string; port: number; edge: string }
  >();
  readonly #flusher: CounterFlusher;
  readonly #stateFile: StateFile | null;
  /** The state file still holds counter batches of an earlier process (cleared once they are flushed). */
  #stateHoldsCounters = false;
  /** The state file's write that drops those batches, once they are flushed. */
  #countersCleared: Promise<void> = Promise.resolve();
  /** Cluster counter resets seen, by `kind\0zone`; and each zone's counters when the last one came. */
  readonly #resetsSeen = new Map<string, number>();
  readonly #counterBase = new WeakMap<object, Readonly<Record<string, number>>>();
  readonly storeResets: StoreResetCounts = { restored: 0, restoredElsewhere: 0, dropped: 0 };
  readonly #options: ReplicaOptions;
  #timers: NodeJS.Timeout[] = [];
  /** Listeners a reload dropped, still finishing their requests. */
  readonly #closing: Promise<void>[] = [];
  #closed: Promise<void> | null = null;
  #reportQueued = false;
  /** When the last heartbeat the store took was sent (this replica's clock), or null before any. */
  #heartbeatAcknowledgedSentAtMs: number | null = null;
  #stopFaultReports: () => void = () => {};
  /** Store failures of heartbeats and flushes, said once per outage (and every 30 s while it lasts). */
  readonly #storeTrouble: StoreTrouble;

  constructor(options: ReplicaOptions) {
    this.#options = options;
    this.#clock = options.clock ?? systemClock;
    this.#storeTrouble = new StoreTrouble(
      (level, message, fields) => this.#log(level, message, fields),
      this.#clock,
    );
    this.#startedAtMs = this.#clock.nowMs();
    this.id = options.id;
    this.store = options.store;
    this.#config = options.config;
    this.#configHash = hashConfig(options.config);
    this.#site = buildSite(options.config.http);
    this.#targets = resolveProxyTargets(this.#site, options.config.http.upstreams);
    this.#upstreams = new UpstreamSet(this.#targets.groups, { clock: this.#clock });
    this.#stateFile = options.stateFile ? new StateFile(options.stateFile, this.#clock) : null;
    this.sync = new KeyvalSync({
      store: options.store.keyvals,
      stateFile: this.#stateFile ?? undefined,
      onStoreReset: storeResetHandler({
        replicaId: options.id,
        policy: options.storeReset ?? 'restore',
        clock: this.#clock,
        store: options.store,
        counts: this.storeResets,
        log: (level, message, fields) => this.#log(level, message, fields),
      }),
      onReload: (reload) =>
        this.#log(reload.reason === 'log-trimmed' ? 'info' : 'warn', reloadText(reload), { ...reload }),
    });
    this.sync.onApply((update) => {
      if (update.kind === 'snapshot') applySnapshot(this.#site.keyvalZones, update.snapshot);
      else applyChange(this.#site.keyvalZones, update.change);
      this.#reportSoon();
    });
    this.#flusher = new CounterFlusher(options.store.counters, options.id, [
      { family: LIMIT_REQ, zones: () => this.#site.limitReqZones.values() },
      { family: LIMIT_CONN, zones: () => this.#site.limitConnZones.values() },
    ]);
    this.limitSync = new LimitSync({
      replicaId: options.id,
      store: options.store.limitSync,
      registry: options.store.registry,
      zones: () => this.#site.limitReqZones.values(),
      clock: this.#clock,
      heartbeat: () => ({
        acknowledgedSentAtMs: this.#heartbeatAcknowledgedSentAtMs,
        ttlMs: this.#heartbeatTtlMs,
      }),
      intervalMs: options.limitSyncIntervalMs,
      log: (level, message, fields) => this.#log(level, message, fields),
    });
  }

  get site(): Site {
    return this.#site;
  }

  get config(): Config {
    return this.#config;
  }

  /** Actual listen port per configured port. */
  get ports(): ReadonlyMap<number, number> {
    return new Map([...this.#listeners].map(([configured, listener]) => [configured, listener.port]));
  }

  /** `host:port` of every listener, as bound (`[::]:80` for IPv6). */
  addresses(): string[] {
    return [...this.#listeners.values()].map(({ host, port }) =>
      host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`,
    );
  }

  /** Ready once the keyval state came from the store or the state file. */
  head(): KeyvalHead | null {
    const state = this.sync.state();
    if (state.source === 'none') return null;
    return { revision: state.appliedRevision, epoch: state.epoch ?? '', commit: state.appliedCommit };
  }

  info(): ReplicaInfo {
    return {
      id: this.id,
      version: REPLICA_VERSION,
      configHash: this.#configHash,
      appliedRevision: this.sync.state().appliedRevision,
      appliedCommit: this.sync.state().appliedCommit,
      startedAtMs: this.#startedAtMs,
      keyvalZones: this.#config.http.keyvalZones.map((z) => ({
        name: z.name,
        type: z.type,
        timeoutMs: z.timeoutMs,
        sizeBytes: z.sizeBytes,
      })),
      limitReqZones: this.#config.http.limitReqZones.map((z) => z.name),
      limitConnZones: this.#config.http.limitConnZones.map((z) => z.name),
      zoneSync: this.limitSync.info(),
      upstreams: this.upstreamInfo(),
      priorityLevels: [...this.site.priorityLevels.values()].map((level) => level.info()),
    };
  }

  /** The config's `upstream` blocks as they are now (implicit `proxy_pass host:port` groups left out). */
  upstreamInfo(): UpstreamInfo[] {
    const out: UpstreamInfo[] = [];
    for (const upstream of this.#config.http.upstreams) {
      const group = this.#upstreams.get(upstream.name);
      if (group !== undefined) out.push(group.info());
    }
    return out;
  }

  /**
   * Throws `RL_ERR_BIND` (nothing left listening, never registered) when a port cannot be bound: a
   * replica without its port must not count as live.
   */
  async start(): Promise<void> {
    await this.#resendSavedCounters();
    await this.sync.start();
    const loaded = this.sync.state();
    if (loaded.source === 'state-file' && this.#stateFile) {
      const snapshot = this.sync.snapshot();
      const switches = Object.values(snapshot.zones).reduce((n, keys) => n + Object.keys(keys).length, 0);
      this.#log(
        'warn',
        `keyval store unreachable at start: enforcing the state file ${this.#stateFile.path} (revision ${loaded.appliedRevision}, ${switches} switches) until it answers`,
        {
          stateFile: this.#stateFile.path,
          revision: loaded.appliedRevision,
          switches,
          err: loaded.lastError,
        },
      );
    }
    // Before serving: a synced zone starts from the live replicas' count, not from a share of 1.
    await this.limitSync.refreshLive();
    this.#stopFaultReports = reportFaults(
      this.#options.errorLog ?? new ErrorLog((line) => process.stderr.write(line)),
      this.#options.onDataPathFault,
    );
    try {
      for (const port of this.#proxyPorts()) await this.#listen(port);
    } catch (err) {
      await Promise.all([...this.#listeners.values()].map(({ server }) => server.close({ forceAfterMs: 0 })));
      this.#listeners.clear();
      await this.#upstreams.close();
      await this.sync.stop();
      this.#closed = Promise.resolve();
      throw err;
    }
    // With the store away, the first heartbeat would only wait out its timeout.
    if (this.sync.state().connected) await this.#report();
    else void this.#report();
    const flushMs = this.#options.flushIntervalMs ?? 1000;
    const heartbeatMs = this.#options.heartbeatIntervalMs ?? 1000;
    this.#timers.push(
      setInterval(() => void this.#flush(), flushMs),
      setInterval(() => void this.#report(), heartbeatMs),
      // Keys expire locally at their time, whether or not the store's sweep has run yet.
      setInterval(() => this.#expireKeys(), 1000),
    );
    for (const timer of this.#timers) timer.unref();
    this.limitSync.start();
  }

  /** Swaps in a new configuration; throws (keeping the old one) when it cannot be built. */
  reload(config: Config): void {
    const site = buildSite(config.http, this.#site);
    const targets = resolveProxyTargets(site, config.http.upstreams);
    applySnapshot(site.keyvalZones, this.sync.snapshot());
    const kept = new Set(site.limitReqZones.values());
    this.#flusher.retire(
      LIMIT_REQ,
      [...this.#site.limitReqZones.values()].filter((zone: LimitReqZone) => !kept.has(zone)),
    );
    const keptConn = new Set(site.limitConnZones.values());
    this.#flusher.retire(
      LIMIT_CONN,
      [...this.#site.limitConnZones.values()].filter((zone: LimitConnZone) => !keptConn.has(zone)),
    );
    const oldUpstreams = this.#upstreams;
    this.#site = site;
    // A synced zone new with this configuration starts from the live replicas' count.
    this.limitSync.shareOut();
    this.#targets = targets;
    this.#upstreams = new UpstreamSet(targets.groups, { clock: this.#clock });
    this.#config = config;
    this.#configHash = hashConfig(config);
    void oldUpstreams.close();
    const ports = this.#proxyPorts();
    for (const [port, listener] of this.#listeners) {
      const edge = this.#edgeOf(port);
      if (ports.includes(port) && edgeKind(edge) === listener.edge) {
        listener.server.setRealIp(this.#realIpOf(port));
        if (edge !== null) listener.server.setEdge(edge);
        continue;
      }
      // A port the new configuration no longer listens on (or now with or without TLS/h2): stop
      // accepting, finish what it has.
      this.#listeners.delete(port);
      this.#closing.push(listener.server.close({ forceAfterMs: 30_000 }));
    }
    for (const port of ports) {
      if (this.#listeners.has(port)) continue;
      this.#listen(port).catch((err: unknown) =>
        this.#log('error', 'could not listen on a port added by the reload', { port, err: String(err) }),
      );
    }
    void this.#report();
  }

  close(): Promise<void> {
    this.#closed ??= this.#shutdown();
    return this.#closed;
  }

  async #shutdown(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    await Promise.all([
      ...[...this.#listeners.values()].map(({ server }) => server.close({ forceAfterMs: 30_000 })),
      ...this.#closing,
    ]);
    await this.#upstreams.close();
    this.#stopFaultReports();
    await this.limitSync.stop();
    if (!(await this.#flush())) await this.#keepUnsentCounters();
    try {
      await this.store.registry.deregister(this.id);
    } catch (err) {
      this.#log('warn', 'could not deregister from the store', { err: String(err) });
    }
    await this.sync.stop();
  }

  /** Ports to serve (servers holding only an `api` location are left to the control plane). */
  #proxyPorts(): number[] {
    return servedPorts(this.#site);
  }

  async #listen(configuredPort: number): Promise<void> {
    const port = this.#options.portMap?.get(configuredPort) ?? configuredPort;
    const server = this.#site.servers.find((s) => s.listen.some((l) => l.port === configuredPort));
    const listenHost = server?.listen.find((l) => l.port === configuredPort)?.host ?? null;
    const errorLog = this.#options.errorLog ?? new ErrorLog((line) => process.stderr.write(line));
    const edge = this.#edgeOf(configuredPort);
    const engine = engineHook({
      ssl: edge?.ssl ?? false,
      nowMs: () => this.#clock.nowMs(),
      site: () => this.#site,
      targets: () => this.#targets,
      errorLog,
      port: configuredPort,
      countRequest: (server, location) => this.locationRequests.count(server, location),
    });
    const onCompleted = this.#options.onCompleted;
    const proxy = new ProxyServer<RoutedDecision>({
      decide: engine,
      // the port's default server's (a reload swaps the configuration under the listener)
      clientTimers: () => this.#defaultServerOf(configuredPort)?.client ?? NGINX_CLIENT_TIMERS,
      ...(edge === null ? {} : { edge, scheme: edge.ssl ? 'https' : 'http' }),
      onConnectionInfo: (message, socket) => {
        if (!errorLog.enabled('info')) return;
        errorLog.request(
          { level: 'info', message },
          {
            connection: connectionNumber(socket),
            client: normalizePeerAddress(socket.remoteAddress),
            server: `${listenHost ?? '0.0.0.0'}:${configuredPort}`,
            requestLine: null,
            host: null,
          },
        );
      },
      canUpgrade: upgradeHook({ site: () => this.#site, port: configuredPort }),
      // Looked up per request: a reload swaps the set under open listeners.
      upstreams: { get: (name: string) => this.#upstreams.get(name) },
      realIp: this.#realIpOf(configuredPort),
      onClientClosed: (ctx, decision, phase) => {
        // nginx notices the EOF while the request waits out its delay, and says so at info.
        if (phase === 'delay') {
          errorLog.request(
            { level: 'info', message: 'client prematurely closed connection' },
            requestLogContext(ctx, decision.serverName ?? ''),
          );
        }
        this.#options.onClientClosed?.(phase);
      },
      onUpstreamError: (ctx, decision, error) => {
        if (!errorLog.enabled(error.level)) return;
        errorLog.request(error, requestLogContext(ctx, decision.serverName ?? '', error.upstream));
      },
      onHookError: (err) => this.#log('error', 'request failed in the engine', { err: String(err) }),
      onCompleted:
        onCompleted === undefined
          ? undefined
          : (ctx, _decision, outcome) => onCompleted(ctx.req, { ...outcome, remoteAddr: ctx.remoteAddr }),
    });
    const host = this.#options.host ?? listenHost ?? '0.0.0.0';
    const address = await proxy.listen(port, host);
    this.#listeners.set(configuredPort, { server: proxy, host, port: address.port, edge: edgeKind(edge) });
  }

  /** The port's TLS/h2 settings (ssl and http2 belong to the address), or null for plain HTTP/1. */
  #edgeOf(configuredPort: number): EdgeConf | null {
    const servers = this.#config.http.servers.filter((s) => s.listen.some((l) => l.port === configuredPort));
    const listens = servers.flatMap((s) => s.listen.filter((l) => l.port === configuredPort));
    const ssl = listens.some((l) => l.ssl);
    const http2 = listens.some((l) => l.http2);
    return ssl || http2 ? { port: configuredPort, ssl, http2, servers } : null;
  }

  /** The port's default server (`listen … default_server`, else the first on it). */
  #defaultServerOf(configuredPort: number): ServerConf | undefined {
    const servers = this.#config.http.servers.filter((s) => s.listen.some((l) => l.port === configuredPort));
    return (
      servers.find((s) => s.listen.some((l) => l.port === configuredPort && l.defaultServer)) ?? servers[0]
    );
  }

  /** realip is configured per listener on the data path: the first server on the port decides. */
  #realIpOf(configuredPort: number): RealIpConf | null {
    const server = this.#site.servers.find((s) => s.listen.some((l) => l.port === configuredPort));
    const realIp = server?.handler.realIp ?? null;
    return realIp && realIp.trustedFrom.length !== 0 ? realIp : null;
  }

  /** One counter flush; false when the store did not take it (the deltas stay for the next one). */
  async #flush(): Promise<boolean> {
    try {
      await this.#flusher.flush();
    } catch (err) {
      this.#storeTrouble.failed('counter flush', err, 'counter deltas kept for the next flush');
      return false;
    }
    if (this.#stateHoldsCounters && this.#stateFile) {
      this.#stateHoldsCounters = false;
      this.#countersCleared = this.#stateFile.save({ counters: [] }).catch(() => {});
    }
    // A flush that shared another's (a stop during the periodic one) waits for its write as well.
    await this.#countersCleared;
    await this.#followCounterResets();
    return true;
  }

  /**
   * A cluster `DELETE /limit_reqs/{zone}` zeroed the zone in the store: this replica's own status API
   * starts from zero too (its engine keeps counting; the view subtracts what it had at the reset).
   */
  async #followCounterResets(): Promise<void> {
    const families = [
      { kind: LIMIT_REQ.kind, zones: [...this.#site.limitReqZones.values()] },
      { kind: LIMIT_CONN.kind, zones: [...this.#site.limitConnZones.values()] },
    ];
    for (const { kind, zones } of families) {
      let resets: Record<string, number>;
      try {
        resets = await this.store.counters.resets(
          kind,
          zones.map((z) => z.name),
        );
      } catch {
        return; // the next flush asks again
      }
      for (const zone of zones) {
        const key = `${kind}\0${zone.name}`;
        const count = resets[zone.name] ?? 0;
        const seen = this.#resetsSeen.get(key);
        this.#resetsSeen.set(key, count);
        // The first look only learns the count: resets before this process are not its to follow.
        if (seen !== undefined && count > seen) this.#counterBase.set(zone, { ...zone.counters });
      }
    }
  }

  /** This replica's counters of `zone` as its status API shows them: since the last cluster reset. */
  statusCounters(zone: { readonly counters: Readonly<Record<string, number>> }): Record<string, number> {
    const base = this.#counterBase.get(zone);
    const out: Record<string, number> = { ...zone.counters };
    if (base) for (const field of Object.keys(out)) out[field] = out[field]! - (base[field] ?? 0);
    return out;
  }

  /** Counter batches an earlier process kept in the state file go out first. */
  async #resendSavedCounters(): Promise<void> {
    if (!this.#stateFile) return;
    try {
      const saved = (await this.#stateFile.load()).counters;
      this.#flusher.resend(saved);
      this.#stateHoldsCounters = saved.length !== 0;
      if (saved.length !== 0) {
        this.#log('info', 'counter batches of an earlier run found in the state file; flushing them first', {
          batches: saved.length,
        });
      }
    } catch (err) {
      // The sync reports a damaged state file as its last error; counters from it are lost.
      this.#log('warn', 'could not read counter batches from the state file', { err: String(err) });
    }
  }

  /** Stopping while the store is away: what it did not take goes to the state file, else is lost. */
  async #keepUnsentCounters(): Promise<void> {
    const unsent = this.#flusher.unsent();
    if (unsent.length === 0) return;
    if (!this.#stateFile) {
      this.#log('error', 'store unreachable at shutdown and no --state-file: counter deltas lost', {
        batches: unsent,
      });
      return;
    }
    try {
      await this.#stateFile.save({ counters: unsent });
      this.#log(
        'warn',
        'store unreachable at shutdown: counter deltas kept in the state file for the next start',
        {
          stateFile: this.#stateFile.path,
          batches: unsent.length,
        },
      );
    } catch (err) {
      this.#log(
        'error',
        'store unreachable at shutdown and the state file not writable: counter deltas lost',
        {
          err: String(err),
          batches: unsent,
        },
      );
    }
  }

  get #heartbeatTtlMs(): number {
    return this.#options.heartbeatTtlMs ?? 5000;
  }

  async #report(): Promise<void> {
    try {
      await this.store.registry.registerZones(this.info().keyvalZones);
      const sentAtMs = this.#clock.nowMs();
      await this.store.registry.heartbeat(this.info(), this.#heartbeatTtlMs);
      this.#heartbeatAcknowledgedSentAtMs = Math.max(
        this.#heartbeatAcknowledgedSentAtMs ?? sentAtMs,
        sentAtMs,
      );
      this.#storeTrouble.answered();
    } catch (err) {
      this.#storeTrouble.failed('heartbeat', err, 'enforcing the last known switches (fail-static)');
    }
  }

  /** Heartbeat right after applying changes, so `?wait=applied` writers hear of it at once. */
  #reportSoon(): void {
    if (this.#reportQueued || this.#timers.length === 0) return;
    this.#reportQueued = true;
    setImmediate(() => {
      this.#reportQueued = false;
      void this.#report();
    });
  }

  #expireKeys(): void {
    const nowMs = this.#clock.nowMs();
    for (const zone of this.#site.keyvalZones.values()) zone.expire(nowMs);
  }

  #log(level: 'info' | 'warn' | 'error', message: string, fields?: Record<string, unknown>): void {
    this.#options.log?.(level, message, fields);
  }
}

/** What a reload says in the log. */
function reloadText(reload: Reload): string {
  switch (reload.reason) {
    case 'epoch':
      return `keyval store has another history (epoch ${reload.fromEpoch ?? '(unknown)'} → ${reload.toEpoch}): reloading its state`;
    case 'went-back':
      return `keyval store went back from revision ${reload.fromRevision} to ${reload.toRevision} (restored from an older snapshot?): reloading its state`;
    case 'diverged':
      return `keyval store has another change at revision ${reload.fromRevision} than the one applied here (a failover lost writes?): reloading its state`;
    case 'log-trimmed':
      return `keyval change log no longer reaches revision ${reload.fromRevision + 1}: reloading the state at ${reload.toRevision}`;
  }
}

function hashConfig(config: Config): string {
  return createHash('sha256').update(JSON.stringify(config.http)).digest('hex').slice(0, 16);
}

/** What a listener was created for: a reload that changes it listens anew. */
function edgeKind(edge: EdgeConf | null): string {
  return edge === null ? 'plain' : `ssl=${edge.ssl} http2=${edge.http2}`;
}
