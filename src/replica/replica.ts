/**
 * An ingress replica: serves the `server` blocks of a configuration, enforces limit_req in process,
 * follows the keyval store without a reload, counts, and reports itself.
 *
 * Lifecycle: `start()` loads the keyval state (store, else the state file), registers, and listens;
 * `reload()` swaps the configuration (zones whose key and size are unchanged keep their state);
 * `close()` stops accepting, finishes in-flight and held requests, flushes counters, deregisters.
 */

import { buildSite } from '../config/build-site.ts';
import { configError } from '../config/config-error.ts';
import type { Config } from '../config/model.ts';
import type { Site } from '../engine/http/site.ts';
import type { UpstreamInfo } from '../engine/upstream/upstream-info.ts';
import { type Clock, systemClock } from '../shared/clock.ts';
import type { ReplicaInfo } from '../store/cluster-registry.ts';
import type { KeyvalHead } from '../store/keyval-store.ts';
import type { KeyvalSync } from '../store/keyval-sync.ts';
import { StateFile } from '../store/state-file.ts';
import { StoreTrouble } from '../store/store-trouble.ts';
import { CounterReporting } from './cluster/counter-reporting.ts';
import { Heartbeat } from './cluster/heartbeat.ts';
import { applySnapshot } from './cluster/keyval-applier.ts';
import { followKeyvals, warnIfStartedFromStateFile } from './cluster/keyval-following.ts';
import { LimitSync } from './cluster/limit-sync.ts';
import type { StoreResetCounts } from './cluster/store-reset.ts';
import { hashConfig, hashConfigWithoutListen } from './config-hash.ts';
import type { CallbackKind } from './http/contract/fault-boundary.ts';
import { UpstreamSet } from './http/upstream/upstream-set.ts';
import { KeyExpiry } from './key-expiry.ts';
import { Listeners } from './listening/listeners.ts';
import { RequestCounts } from './listening/request-counts.ts';
import { reportFaults } from './logs/data-path-faults.ts';
import { ErrorLog } from './logs/error-log.ts';
import type { ProcessLog } from './logs/process-log.ts';
import { type ProxyTargets, resolveProxyTargets } from './policy/proxy-targets.ts';
import type { ReplicaOptions, ReplicaStore } from './replica-options.ts';
import { WorkerPool } from './workers/worker-pool.ts';
import {
  oneWorkerNotice,
  refuseUnixListenWithWorkers,
  reusePortSupported,
  workerCount,
} from './workers/worker-runtime.ts';

/** What serves the ports: listeners on this thread, or `worker_processes` worker threads. */
type Serving = Pick<Listeners, 'start' | 'reload' | 'stop' | 'ports' | 'addresses'>;

export const REPLICA_VERSION = '0.1.0';

export class Replica {
  readonly id: string;
  readonly store: ReplicaStore;
  /** The keyval state followed from the store (cluster/keyval-following.ts). */
  readonly sync: KeyvalSync;
  /** Cluster-wide limits: the synced zones' exchanges with the store. */
  readonly limitSync: LimitSync;
  /** Counters to the store, and this replica's own view of them (after a cluster reset: since it). */
  readonly counters: CounterReporting;
  readonly locationRequests = new RequestCounts();
  readonly storeResets: StoreResetCounts = { restored: 0, restoredElsewhere: 0, dropped: 0 };
  #config: Config;
  #site: Site;
  #targets: ProxyTargets;
  #upstreams: UpstreamSet;
  #configHash: string;
  #configHashWithoutListen: string;
  readonly #clock: Clock;
  readonly #startedAtMs: number;
  readonly #stateFile: StateFile | null;
  readonly #errorLog: ErrorLog;
  readonly #onDataPathFault: ((kind: CallbackKind) => void) | undefined;
  readonly #log: ProcessLog;
  readonly #serving: Serving;
  /** With `worker_processes` above 1 (where this Node.js can run them): the worker threads. */
  readonly workerPool: WorkerPool | null;
  readonly #heartbeat: Heartbeat;
  readonly #keyExpiry: KeyExpiry;
  #closed: Promise<void> | null = null;
  #stopFaultReports: () => void = () => {};

  constructor(options: ReplicaOptions) {
    const clock = options.clock ?? systemClock;
    const log: ProcessLog = (level, message, fields) => options.log?.(level, message, fields);
    const site = () => this.#site;
    this.#clock = clock;
    this.#log = log;
    this.#startedAtMs = clock.nowMs();
    this.#errorLog = options.errorLog ?? new ErrorLog((line) => process.stderr.write(line));
    this.#onDataPathFault = options.onDataPathFault;
    this.id = options.id;
    this.store = options.store;
    this.#config = options.config;
    this.#configHash = hashConfig(options.config);
    this.#configHashWithoutListen = hashConfigWithoutListen(options.config);
    this.#site = buildSite(options.config.http);
    this.#targets = resolveProxyTargets(this.#site, options.config.http.upstreams);
    this.#upstreams = new UpstreamSet(this.#targets.groups, { clock });
    const stateFile = options.stateFile ? new StateFile(options.stateFile, clock) : null;
    this.#stateFile = stateFile;
    // Store failures of heartbeats and flushes, said once per outage (and every 30 s while it lasts).
    const storeTrouble = new StoreTrouble(log, clock);
    this.#heartbeat = new Heartbeat({
      registry: options.store.registry,
      info: () => this.info(),
      clock,
      intervalMs: options.heartbeatIntervalMs,
      ttlMs: options.heartbeatTtlMs,
      storeTrouble,
    });
    this.sync = followKeyvals({
      replicaId: options.id,
      store: options.store,
      stateFile,
      storeReset: options.storeReset ?? 'restore',
      storeResets: this.storeResets,
      clock,
      site,
      onApplied: () => this.#heartbeat.reportSoon(),
      log,
    });
    this.counters = new CounterReporting({
      replicaId: options.id,
      store: options.store.counters,
      site,
      stateFile,
      intervalMs: options.flushIntervalMs,
      storeTrouble,
      log,
    });
    this.limitSync = new LimitSync({
      replicaId: options.id,
      store: options.store.limitSync,
      registry: options.store.registry,
      zones: () => this.#site.limitReqZones.values(),
      clock,
      heartbeat: () => ({
        acknowledgedSentAtMs: this.#heartbeat.acknowledgedSentAtMs,
        ttlMs: this.#heartbeat.ttlMs,
      }),
      intervalMs: options.limitSyncIntervalMs,
      log,
    });
    this.#keyExpiry = new KeyExpiry(site, clock);
    const workers = workerCount(options.config.workerProcesses);
    this.workerPool = workers > 1 ? this.#workerPool(options, workers) : null;
    this.#serving =
      this.workerPool ??
      new Listeners({
        config: () => this.#config,
        site,
        targets: () => this.#targets,
        upstreams: () => this.#upstreams,
        clock,
        errorLog: this.#errorLog,
        host: options.host,
        portMap: options.portMap,
        countRequest: (server, location) => this.locationRequests.count(server, location),
        onCompleted: options.onCompleted,
        onClientClosed: options.onClientClosed,
        log,
      });
  }

  /** The worker threads, or null (and a notice) where this Node.js cannot listen from several. */
  #workerPool(options: ReplicaOptions, workers: number): WorkerPool | null {
    if (!reusePortSupported()) {
      this.#log('warn', oneWorkerNotice(workers));
      return null;
    }
    refuseUnixListenWithWorkers(options.config, workers);
    return new WorkerPool({
      config: () => this.#config,
      site: () => this.#site,
      upstreams: () => this.#upstreams,
      count: () => workerCount(this.#config.workerProcesses),
      errorLog: this.#errorLog,
      host: options.host,
      portMap: options.portMap,
      countRequests: (server, location, count) => this.locationRequests.count(server, location, count),
      onCompleted: options.onCompleted,
      onClientClosed: options.onClientClosed,
      onDataPathFault: options.onDataPathFault,
      log: this.#log,
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
    return this.#serving.ports;
  }

  /** `host:port` of every listener, as bound (`[::]:80` for IPv6). */
  addresses(): string[] {
    return this.#serving.addresses();
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
      configHashWithoutListen: this.#configHashWithoutListen,
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
    if (this.workerPool !== null) return this.workerPool.upstreamInfo();
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
    await this.counters.resendSaved();
    await this.sync.start();
    warnIfStartedFromStateFile(this.sync, this.#stateFile, this.#log);
    // Before serving: a synced zone starts from the live replicas' count, not from a share of 1.
    await this.limitSync.refreshLive();
    this.#stopFaultReports = reportFaults(this.#errorLog, this.#onDataPathFault);
    try {
      await this.#serving.start();
    } catch (err) {
      await this.#upstreams.close();
      await this.sync.stop();
      this.#closed = Promise.resolve();
      throw err;
    }
    // With the store away, the first heartbeat would only wait out its timeout.
    if (this.sync.state().connected) await this.#heartbeat.report();
    else void this.#heartbeat.report();
    this.counters.start();
    this.#heartbeat.start();
    this.#keyExpiry.start();
    this.limitSync.start();
  }

  /** Swaps in a new configuration; throws (keeping the old one) when it cannot be built. */
  reload(config: Config): void {
    const workers = workerCount(config.workerProcesses);
    if (
      this.workerPool === null &&
      workers > 1 &&
      reusePortSupported() &&
      config.workerProcesses !== undefined
    ) {
      throw configError(
        `"worker_processes" ${workers}: this replica started with one worker, serving on its main thread; worker threads start with the process (restart it)`,
        config.workerProcesses.source,
      );
    }
    if (this.workerPool !== null) refuseUnixListenWithWorkers(config, workers);
    const site = buildSite(config.http, this.#site);
    const targets = resolveProxyTargets(site, config.http.upstreams);
    applySnapshot(site.keyvalZones, this.sync.snapshot());
    this.counters.retireDropped(this.#site, site);
    const oldUpstreams = this.#upstreams;
    this.#site = site;
    // A synced zone new with this configuration starts from the live replicas' count.
    this.limitSync.shareOut();
    this.#targets = targets;
    this.#upstreams = new UpstreamSet(targets.groups, { clock: this.#clock });
    this.#config = config;
    this.#configHash = hashConfig(config);
    this.#configHashWithoutListen = hashConfigWithoutListen(config);
    void oldUpstreams.close();
    this.#serving.reload();
    void this.#heartbeat.report();
  }

  close(): Promise<void> {
    this.#closed ??= this.#shutdown();
    return this.#closed;
  }

  async #shutdown(): Promise<void> {
    this.counters.stop();
    this.#heartbeat.stop();
    this.#keyExpiry.stop();
    await this.#serving.stop();
    await this.#upstreams.close();
    this.#stopFaultReports();
    await this.limitSync.stop();
    await this.counters.flushLast();
    try {
      await this.store.registry.deregister(this.id);
    } catch (err) {
      this.#log('warn', 'could not deregister from the store', { err: String(err) });
    }
    await this.sync.stop();
  }
}
