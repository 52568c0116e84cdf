/**
 * A replica's Prometheus metrics. The limit_req and limit_conn counters use nginx-prometheus-exporter's
 * names and help texts (`nginxplus_limit_request_passed{zone}`, `nginxplus_limit_connection_passed{zone}`
 * …, no `_total`), so dashboards built for NGINX Plus work unchanged; they are read from the engine at
 * scrape time.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { ApiLimiter, ApiLimiterValues } from '../engine/api-limiter/api-limiter.ts';
import {
  LIMIT_CONN_COUNTERS,
  type LimitConnCounter,
  type LimitConnCounters,
} from '../engine/limit-conn/limit-conn-zone.ts';
import {
  LIMIT_REQ_COUNTERS,
  type LimitReqCounter,
  type LimitReqCounters,
} from '../engine/limit-req/limit-req-zone.ts';
import type { ZoneSyncInfo } from '../engine/limit-req/zone-sync-info.ts';
import type { PriorityLevelInfo } from '../engine/priority/priority-level.ts';
import type { UpstreamInfo } from '../engine/upstream/upstream-info.ts';
import { priorityMetrics } from './priority-metrics.ts';
import { upstreamMetrics } from './upstream-metrics.ts';

export interface ZoneCounterSource {
  readonly name: string;
  readonly counters: Readonly<LimitReqCounters>;
}

export interface ConnZoneCounterSource {
  readonly name: string;
  readonly counters: Readonly<LimitConnCounters>;
  readonly requestsInProgress: number;
}

/** nginx-prometheus-exporter's help texts. */
const LIMIT_REQ_HELP: Record<LimitReqCounter, string> = {
  passed: 'Total number of requests that were neither limited nor accounted as limited',
  delayed: 'Total number of requests that were delayed',
  rejected: 'Total number of requests that were rejected',
  delayed_dry_run: 'Total number of requests accounted as delayed in the dry run mode',
  rejected_dry_run: 'Total number of requests accounted as rejected in the dry run mode',
};

/** nginx-prometheus-exporter's help texts for limit_conn. */
const LIMIT_CONN_HELP: Record<LimitConnCounter, string> = {
  passed: 'Total number of connections that were neither limited nor accounted as limited',
  rejected: 'Total number of connections that were rejected',
  rejected_dry_run: 'Total number of connections accounted as rejected in the dry run mode',
};

export interface SyncStateSource {
  readonly connected: boolean;
  readonly appliedRevision: number;
}

export interface ReplicaMetricsSources {
  zones(): Iterable<ZoneCounterSource>;
  /** The limit_conn zones. */
  connZones(): Iterable<ConnZoneCounterSource>;
  /** The `api_rate_limit_zone` limiters (Cilium's API limiter). */
  apiLimiters(): Iterable<ApiLimiter>;
  /** Store resets seen: switches written back by this replica, by another first, or dropped. */
  storeResets(): { readonly restored: number; readonly restoredElsewhere: number; readonly dropped: number };
  sync(): SyncStateSource;
  /** Cluster-wide limits (`limit_req_zone … sync`); null when no zone is synced. */
  zoneSync(): ZoneSyncInfo | null;
  /** The priority levels (API Priority and Fairness). */
  priorityLevels(): Iterable<PriorityLevelInfo>;
  /** The `upstream` blocks: servers' load and queues. */
  upstreams(): Iterable<UpstreamInfo>;
  /** The wall clock, for ages. */
  nowMs(): number;
  /** Requests routed so far, by server name and location name (limited ones included). */
  locationRequests(): Iterable<{
    readonly server: string;
    readonly location: string;
    readonly count: number;
  }>;
}

export class ReplicaMetrics {
  readonly #duration: Histogram<'code'>;
  readonly #clientClosed: Counter<'phase'>;
  readonly #faults: Counter<'callback'>;
  readonly #reloads: Counter<'result'>;

  constructor(registry: Registry, sources: ReplicaMetricsSources) {
    const registers = [registry];
    limiterCounters(registers, 'nginxplus_limit_request', LIMIT_REQ_COUNTERS, LIMIT_REQ_HELP, () =>
      sources.zones(),
    );
    limiterCounters(registers, 'nginxplus_limit_connection', LIMIT_CONN_COUNTERS, LIMIT_CONN_HELP, () =>
      sources.connZones(),
    );
    new Gauge({
      name: 'limitswitch_limit_conn_requests_in_progress',
      help: 'Requests a limit_conn zone counts now, every key together',
      labelNames: ['zone'],
      registers,
      collect() {
        this.reset();
        for (const zone of sources.connZones()) this.set({ zone: zone.name }, zone.requestsInProgress);
      },
    });
    const seenRequests = new Map<string, Map<string, number>>();
    new Counter({
      name: 'limitswitch_location_requests_total',
      help: 'Requests routed to each location (rejected and delayed ones included), by server and location',
      labelNames: ['server', 'location'],
      registers,
      collect() {
        for (const { server, location, count } of sources.locationRequests()) {
          let seen = seenRequests.get(server);
          if (seen === undefined) {
            seen = new Map();
            seenRequests.set(server, seen);
          }
          this.inc({ server, location }, count - (seen.get(location) ?? 0));
          seen.set(location, count);
        }
      },
    });
    const seenResets = { restored: 0, restoredElsewhere: 0, dropped: 0 };
    new Counter({
      name: 'limitswitch_store_resets_total',
      help: 'Times the keyval store came back empty while this replica held switches, by what it did (restored, restored_elsewhere, dropped)',
      labelNames: ['action'],
      registers,
      collect() {
        const now = sources.storeResets();
        const labels = {
          restored: 'restored',
          restoredElsewhere: 'restored_elsewhere',
          dropped: 'dropped',
        } as const;
        for (const field of Object.keys(labels) as (keyof typeof labels)[]) {
          this.inc({ action: labels[field] }, now[field] - seenResets[field]);
          seenResets[field] = now[field];
        }
      },
    });
    new Gauge({
      name: 'limitswitch_sync_connected',
      help: '1 while the replica is in contact with the keyval store, 0 while it serves the last known state',
      registers,
      collect() {
        this.set(sources.sync().connected ? 1 : 0);
      },
    });
    new Gauge({
      name: 'limitswitch_sync_applied_revision',
      help: 'The store revision whose keyval state this replica enforces',
      registers,
      collect() {
        this.set(sources.sync().appliedRevision);
      },
    });
    zoneSyncMetrics(registers, sources);
    apiLimiterMetrics(registers, sources);
    upstreamMetrics(registers, () => sources.upstreams());
    priorityMetrics(registers, () => sources.priorityLevels());
    this.#duration = new Histogram({
      name: 'limitswitch_request_duration_seconds',
      help: 'Time from request to the end of the response on the replica (delays included), by status code',
      labelNames: ['code'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.#clientClosed = new Counter({
      name: 'limitswitch_client_closed_total',
      help: 'Requests whose client went away before the response (nginx 499), by phase (delay, proxy)',
      labelNames: ['phase'],
      registers,
    });
    this.#faults = new Counter({
      name: 'limitswitch_data_path_faults_total',
      help: 'Exceptions caught in data path callbacks, each ending only its connection or stream, by callback kind',
      labelNames: ['callback'],
      registers,
    });
    this.#reloads = new Counter({
      name: 'limitswitch_config_reloads_total',
      help: 'Configuration reloads (SIGHUP), by result (ok, error: the old configuration is kept)',
      labelNames: ['result'],
      registers,
    });
  }

  observeRequest(code: number, seconds: number): void {
    this.#duration.observe({ code: String(code) }, seconds);
  }

  /** A data path callback threw; its connection was ended (callback: client, tls, h2, upstream, timer). */
  countDataPathFault(callback: string): void {
    this.#faults.inc({ callback });
  }

  countClientClosed(phase: string): void {
    this.#clientClosed.inc({ phase });
  }

  countReload(ok: boolean): void {
    this.#reloads.inc({ result: ok ? 'ok' : 'error' });
  }
}

/**
 * Cluster-wide limits: nginx-prometheus-exporter's zone_sync names (`nginxplus_stream_zone_sync_…`)
 * for what NGINX Plus reports, limitswitch's own for the fallback and the store's lag.
 */
function zoneSyncMetrics(registers: Registry[], sources: ReplicaMetricsSources): void {
  const perZone = (
    name: string,
    help: string,
    value: (zone: ZoneSyncInfo['zones'][string], nowMs: number) => number | null,
  ) =>
    new Gauge({
      name,
      help,
      labelNames: ['zone'],
      registers,
      collect() {
        this.reset();
        const info = sources.zoneSync();
        if (info === null) return;
        const nowMs = sources.nowMs();
        for (const [zone, state] of Object.entries(info.zones)) {
          const v = value(state, nowMs);
          if (v !== null) this.set({ zone }, v);
        }
      },
    });
  perZone(
    'nginxplus_stream_zone_sync_zone_records_pending',
    'The number of records that need to be sent to the cluster',
    (z) => z.recordsPending,
  );
  perZone(
    'nginxplus_stream_zone_sync_zone_records_total',
    'The total number of records stored in the shared memory zone',
    (z) => z.recordsTotal,
  );
  perZone(
    'limitswitch_zone_sync_fallback',
    '1 while the store cannot be reached and every key of the synced zone gets this replica’s default share (rate ÷ live replicas)',
    (z) => (z.mode === 'fallback' ? 1 : 0),
  );
  perZone(
    'limitswitch_zone_sync_last_sync_age_seconds',
    'Seconds since the store last answered an exchange of the synced zone',
    (z, nowMs) => (z.lastSyncAtMs === null ? null : Math.max(0, nowMs - z.lastSyncAtMs) / 1000),
  );
  perZone(
    'limitswitch_zone_sync_round_trip_seconds',
    'The last exchange of the synced zone with the store, from send to answer',
    (z) => (z.roundTripMs === null ? null : z.roundTripMs / 1000),
  );
  perZone(
    'limitswitch_zone_sync_live_replicas',
    'Live replicas running the synced zone, as last read from the registry (the default share is 1 / this)',
    (z) => z.liveReplicas,
  );
  const status = (name: string, help: string, value: (info: ZoneSyncInfo) => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.reset();
        const info = sources.zoneSync();
        if (info !== null) this.set(value(info));
      },
    });
  status(
    'nginxplus_stream_zone_sync_status_nodes_online',
    'Number of peers this node is connected to',
    (i) => i.nodesOnline,
  );
  status(
    'nginxplus_stream_zone_sync_status_msgs_in',
    'Total messages received by this node',
    (i) => i.msgsIn,
  );
  status('nginxplus_stream_zone_sync_status_msgs_out', 'Total messages sent by this node', (i) => i.msgsOut);
}

/**
 * One counter per field, `<prefix>_<field>{zone}`, mirroring the engine's totals: counters only grow,
 * so each scrape adds what is new since the last one.
 */
function limiterCounters<F extends string>(
  registers: Registry[],
  prefix: string,
  fields: readonly F[],
  help: Record<F, string>,
  zones: () => Iterable<{ readonly name: string; readonly counters: Readonly<Record<F, number>> }>,
): void {
  for (const field of fields) {
    const seen = new Map<string, number>();
    new Counter({
      name: `${prefix}_${field}`,
      help: help[field],
      labelNames: ['zone'],
      registers,
      collect() {
        for (const zone of zones()) {
          const total = zone.counters[field];
          const delta = total - (seen.get(zone.name) ?? 0);
          if (delta > 0) this.inc({ zone: zone.name }, delta);
          else if (!seen.has(zone.name)) this.inc({ zone: zone.name }, 0);
          seen.set(zone.name, total);
        }
      },
    });
  }
}

/**
 * Cilium's API limiter metrics (pkg/rate/metrics), under limitswitch's prefix: the adjustment
 * factor, processing duration (estimated, mean), rate limit (limit, burst), requests in flight
 * (in-flight, limit), wait duration (min, mean, max) and processed requests by outcome and code.
 */
function apiLimiterMetrics(registers: Registry[], sources: ReplicaMetricsSources): void {
  const gauge = (name: string, help: string, series: (v: ApiLimiterValues) => [string | null, number][]) =>
    new Gauge({
      name: `limitswitch_api_limiter_${name}`,
      help,
      labelNames: name === 'adjustment_factor' ? ['api_call'] : ['api_call', 'value'],
      registers,
      collect() {
        this.reset();
        for (const limiter of sources.apiLimiters()) {
          for (const [value, n] of series(limiter.values())) {
            if (value === null) this.set({ api_call: limiter.name }, n);
            else this.set({ api_call: limiter.name, value }, n);
          }
        }
      },
    });
  gauge('adjustment_factor', 'Current adjustment factor while auto adjusting', (v) => [
    [null, v.adjustmentFactor],
  ]);
  gauge('processing_duration_seconds', 'Current processing duration', (v) => [
    ['estimated', v.estimatedProcessingS],
    ['mean', v.meanProcessingS],
  ]);
  gauge('rate_limit', 'Current rate limiting configuration', (v) => [
    ['limit', v.limit],
    ['burst', v.burst],
  ]);
  gauge('requests_in_flight', 'Current requests in flight', (v) => [
    ['in-flight', v.requestsInFlight],
    ['limit', v.parallelRequests],
  ]);
  gauge('wait_duration_seconds', 'Current wait time for api calls', (v) => [
    ['min', v.minWaitS],
    ['mean', v.meanWaitS],
    ['max', v.maxWaitS],
  ]);
  const seen = new Map<string, number>();
  new Counter({
    name: 'limitswitch_api_limiter_processed_requests_total',
    help: 'Total number of API requests processed',
    labelNames: ['api_call', 'outcome', 'return_code'],
    registers,
    collect() {
      for (const limiter of sources.apiLimiters()) {
        for (const [label, count] of limiter.processed) {
          const key = `${limiter.name}\0${label}`;
          const [outcome, code] = label.split('\0') as [string, string];
          this.inc({ api_call: limiter.name, outcome, return_code: code }, count - (seen.get(key) ?? 0));
          seen.set(key, count);
        }
      }
    },
  });
}
