/**
 * The replica's side of cluster-wide limits: every sync interval, each `limit_req_zone … sync` sends
 * what its active keys did since the last time and takes back the cluster's bucket and this
 * replica's share of each (engine/limit-req/zone-sync.ts). Requests never wait for it: the engine
 * decides on what the last answer said. Store traffic is one exchange per synced zone with active
 * keys per interval, whatever the request rate.
 *
 * When the store cannot be reached, the counts of the failed exchange go out with the next one, and
 * every key of the zone falls back to this replica's default share: 1 / the live replicas that run
 * the zone synced (their heartbeats say so), as last read from the registry (never unlimited, never N ×). The first answer after the
 * store returns brings the shares and buckets back.
 */
import type { LimitReqZone } from '../engine/limit-req/limit-req-zone.ts';
import type { SyncEntry } from '../engine/limit-req/zone-sync.ts';
import type { ZoneSyncInfo, ZoneSyncZoneInfo } from '../engine/limit-req/zone-sync-info.ts';
import type { Clock } from '../shared/clock.ts';
import type { RegistryReader, ReplicaRecord } from '../store/cluster-registry.ts';
import type { LimitSyncStore } from '../store/limit-sync-store.ts';

/** nginx Plus's zone_sync default `zone_sync_interval` is 1 s; a rate limit needs a shorter one. */
export const LIMIT_SYNC_INTERVAL_MS = 100;
/** How often the live replicas are counted for the default share. */
const LIVE_REFRESH_MS = 1000;
/**
 * A replica missing from the registry (not marked gone) still counts this long after the first read
 * that missed it: a heartbeat's TTL.
 */
const UNLISTED_GRACE_MS = 5000;
/** How often a synced zone without activity still checks that the store answers. */
const IDLE_PROBE_MS = 1000;
/** Keys per exchange: a zone with more active keys sends several. */
const BATCH_KEYS = 500;

export interface LimitSyncOptions {
  readonly replicaId: string;
  readonly store: Pick<LimitSyncStore, 'exchange'>;
  readonly registry: Pick<RegistryReader, 'replicas'>;
  /** The zones of the configuration running now (a reload swaps them). */
  zones(): Iterable<LimitReqZone>;
  readonly clock: Clock;
  readonly intervalMs?: number;
  readonly log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
}

interface ZoneState {
  lastSentAtMs: number;
  lastSyncAtMs: number | null;
  roundTripMs: number | null;
  failing: boolean;
  liveReplicas: number;
}

export class LimitSync {
  readonly #options: LimitSyncOptions;
  readonly #intervalMs: number;
  readonly #zones = new Map<string, ZoneState>();
  #timers: NodeJS.Timeout[] = [];
  #running: Promise<void> | null = null;
  #msgsOut = 0;
  #msgsIn = 0;
  /** The other live replicas at last sight, by id. */
  readonly #others = new Map<
    string,
    { zoneSync: ReplicaRecord['zoneSync']; unlistedSinceMs: number | null }
  >();
  #storeAway = false;

  constructor(options: LimitSyncOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs ?? LIMIT_SYNC_INTERVAL_MS;
  }

  start(): void {
    this.#timers.push(
      setInterval(() => void this.tick(), this.#intervalMs),
      setInterval(() => void this.refreshLive(), LIVE_REFRESH_MS),
    );
    for (const timer of this.#timers) timer.unref();
  }

  /** Stops the timers after one last exchange, so the cluster's buckets hear of the last requests. */
  async stop(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    this.#timers = [];
    await this.tick();
  }

  /** One round over the synced zones; rounds never overlap (a slow store skips ticks). */
  tick(): Promise<void> {
    this.#running ??= this.#round().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  /** Counts the live replicas running each synced zone: the default share is 1 / that. */
  async refreshLive(): Promise<void> {
    if (!this.#anySynced()) return;
    let replicas: Awaited<ReturnType<RegistryReader['replicas']>>;
    try {
      replicas = await this.#options.registry.replicas(this.#options.clock.nowMs());
    } catch {
      return; // the store is away: the count at last sight stands
    }
    const nowMs = this.#options.clock.nowMs();
    const listed = new Set<string>();
    for (const replica of replicas) {
      if (replica.id === this.#options.replicaId) continue;
      listed.add(replica.id);
      // Gone by the registry's word (deregistered, or its heartbeat expired): not counted any more.
      if (!replica.live) this.#others.delete(replica.id);
      else this.#others.set(replica.id, { zoneSync: replica.zoneSync, unlistedSinceMs: null });
    }
    // Not listed at all (a store that came back empty): counted until its heartbeat could have told.
    for (const [id, other] of this.#others) {
      if (listed.has(id)) continue;
      other.unlistedSinceMs ??= nowMs;
      if (nowMs - other.unlistedSinceMs > UNLISTED_GRACE_MS) this.#others.delete(id);
    }
    this.shareOut();
  }

  /** Sets every synced zone's default share from the live replicas last read (a reload's new zones too). */
  shareOut(): void {
    for (const zone of this.#options.zones()) {
      if (zone.sync === null) continue;
      let count = 1;
      for (const other of this.#others.values()) if (other.zoneSync?.zones[zone.name] !== undefined) count++;
      zone.sync.defaultShare = 1 / count;
      this.#state(zone.name).liveReplicas = count;
    }
  }

  /** What the heartbeat and `/api/9/stream/zone_sync` report. */
  info(): ZoneSyncInfo | null {
    const zones: Record<string, ZoneSyncZoneInfo> = {};
    for (const zone of this.#options.zones()) {
      if (zone.sync === null) continue;
      const state = this.#state(zone.name);
      zones[zone.name] = {
        recordsPending: zone.sync.pending,
        recordsTotal: zone.table.count,
        mode: state.failing ? 'fallback' : 'synced',
        lastSyncAtMs: state.lastSyncAtMs,
        roundTripMs: state.roundTripMs,
        defaultShare: zone.sync.defaultShare,
        liveReplicas: state.liveReplicas,
      };
    }
    if (Object.keys(zones).length === 0) return null;
    return { nodesOnline: 1 + this.#others.size, msgsOut: this.#msgsOut, msgsIn: this.#msgsIn, zones };
  }

  async #round(): Promise<void> {
    for (const zone of this.#options.zones()) {
      if (zone.sync === null) continue;
      const entries = zone.sync.collect(zone.table);
      const state = this.#state(zone.name);
      // With nothing to send, an empty exchange still says whether the store is there: each interval
      // while it is away (to notice its return at once), else once a second.
      if (entries.length === 0) {
        const idleMs = this.#options.clock.nowMs() - state.lastSentAtMs;
        if (state.failing || idleMs >= IDLE_PROBE_MS) await this.#exchange(zone, state, []);
        continue;
      }
      for (let i = 0; i < entries.length; i += BATCH_KEYS) {
        await this.#exchange(zone, state, entries.slice(i, i + BATCH_KEYS));
      }
    }
  }

  async #exchange(zone: LimitReqZone, state: ZoneState, entries: SyncEntry[]): Promise<void> {
    const sync = zone.sync!;
    const sentAtMs = this.#options.clock.nowMs();
    state.lastSentAtMs = sentAtMs;
    this.#msgsOut++;
    try {
      const buckets = await this.#options.store.exchange({
        zone: zone.name,
        rateMilli: zone.rateMilli,
        replicaId: this.#options.replicaId,
        nowMs: sentAtMs,
        entries: entries.map((e) => ({ key: e.key, charged: e.charged, seen: e.seen })),
      });
      this.#msgsIn++;
      for (const [i, entry] of entries.entries()) sync.apply(zone.table, entry, buckets[i]!);
      const nowMs = this.#options.clock.nowMs();
      state.lastSyncAtMs = nowMs;
      state.roundTripMs = nowMs - sentAtMs;
      state.failing = false;
      if (this.#storeAway) {
        this.#storeAway = false;
        this.#options.log?.('info', 'cluster-wide limits: the store answers again; shares restored');
      }
    } catch (err) {
      sync.giveBack(zone.table, entries);
      sync.forgetShares();
      state.failing = true;
      if (!this.#storeAway) {
        this.#storeAway = true;
        this.#options.log?.(
          'warn',
          'cluster-wide limits: the store cannot be reached; each synced zone falls back to this replica’s share (rate ÷ live replicas)',
          { zone: zone.name, defaultShare: sync.defaultShare, err: String(err) },
        );
      }
    }
  }

  #anySynced(): boolean {
    for (const zone of this.#options.zones()) if (zone.sync !== null) return true;
    return false;
  }

  #state(zone: string): ZoneState {
    let state = this.#zones.get(zone);
    if (state === undefined) {
      state = {
        lastSentAtMs: Number.NEGATIVE_INFINITY,
        lastSyncAtMs: null,
        roundTripMs: null,
        failing: false,
        liveReplicas: 1,
      };
      this.#zones.set(zone, state);
    }
    return state;
  }
}
