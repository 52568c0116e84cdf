/**
 * The replica's side of cluster-wide limits: every sync interval, each `limit_req_zone … sync`
 * sends what its active keys did since the last time and takes back the cluster's bucket and this
 * replica's share of each (engine/limit-req/zone-sync.ts). Requests never wait for it: the engine
 * decides on what the last answer said. Store traffic is one exchange per synced zone with active
 * keys per interval, whatever the request rate.
 *
 * Each batch is numbered (this run's incarnation, a seq per zone) and sent until the store answers
 * it, unchanged: the store applies it once, however many copies reach it (one timed out and
 * resent, or run late by a store that was frozen). What the zone does meanwhile waits for the next
 * batch. Keys without a fresh word take the default share: 1 / the live replicas that run the zone
 * synced (their heartbeats say so). Cut off from the store (an exchange failed, or has had no answer
 * for two intervals), each key keeps the share it had, shrinking to nothing by the time this
 * replica's heartbeat lapses in the store (its last acknowledged heartbeat + the TTL): until then the
 * store holds that part for it, after that the others take it. Never unlimited, never N times; the
 * first answer after the store returns brings the shares and buckets back.
 */

import { randomBytes } from 'node:crypto';
import type { LimitReqZone } from '../../engine/limit-req/limit-req-zone.ts';
import type { SyncEntry } from '../../engine/limit-req/zone-sync.ts';
import type { ZoneSyncInfo, ZoneSyncZoneInfo } from '../../engine/limit-req/zone-sync-info.ts';
import type { Clock } from '../../shared/clock.ts';
import type { RegistryReader, ReplicaRecord } from '../../store/cluster-registry.ts';
import type { LimitSyncStore } from '../../store/limit-sync-store.ts';

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
  /**
   * This replica's heartbeats: when the last one the store acknowledged was sent (this replica's
   * clock; null before any) and their TTL. Past the sum, the store may count this replica gone.
   */
  heartbeat(): { readonly acknowledgedSentAtMs: number | null; readonly ttlMs: number };
  readonly intervalMs?: number;
  readonly log?: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
}

/** A batch sent and not answered yet: sent again, unchanged, until it is. */
interface PendingBatch {
  readonly seq: number;
  readonly entries: readonly SyncEntry[];
}

interface ZoneState {
  lastSentAtMs: number;
  lastSyncAtMs: number | null;
  roundTripMs: number | null;
  failing: boolean;
  liveReplicas: number;
  /** The last seq given to a batch of the zone. */
  seq: number;
  /** Batches the store has not answered, oldest first. */
  pending: PendingBatch[];
  /** When the exchange under way was sent (this replica's clock), or null. */
  inFlightSinceMs: number | null;
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
  /** This run: the store applies each (incarnation, zone, seq) once. */
  readonly #incarnation = randomBytes(6).toString('base64url');

  constructor(options: LimitSyncOptions) {
    this.#options = options;
    this.#intervalMs = options.intervalMs ?? LIMIT_SYNC_INTERVAL_MS;
  }

  start(): void {
    this.#timers.push(
      setInterval(() => {
        this.holdShares();
        void this.tick();
      }, this.#intervalMs),
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
      replicas = await this.#options.registry.replicas();
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

  /**
   * Whether each synced zone is cut off from the store (its last exchange failed, or has gone
   * unanswered for two intervals) and, if so, how much of the shares it had it still holds: all of
   * them at first, nothing once its heartbeat may have lapsed in the store.
   */
  holdShares(): void {
    const nowMs = this.#options.clock.nowMs();
    const { acknowledgedSentAtMs, ttlMs } = this.#options.heartbeat();
    for (const zone of this.#options.zones()) {
      if (zone.sync === null) continue;
      const state = this.#state(zone.name);
      const unanswered =
        state.inFlightSinceMs !== null && nowMs - state.inFlightSinceMs > 2 * this.#intervalMs;
      if (!state.failing && !unanswered) {
        zone.sync.lostSinceMs = null;
        zone.sync.heldFraction = 1;
        continue;
      }
      zone.sync.lostSinceMs ??= state.lastSyncAtMs ?? state.inFlightSinceMs ?? nowMs;
      const lapseAtMs = (acknowledgedSentAtMs ?? zone.sync.lostSinceMs) + ttlMs;
      zone.sync.heldFraction = Math.min(1, Math.max(0, (lapseAtMs - nowMs) / ttlMs));
    }
  }

  /** What the heartbeat and `/api/9/stream/zone_sync` report. */
  info(): ZoneSyncInfo | null {
    const zones: Record<string, ZoneSyncZoneInfo> = {};
    for (const zone of this.#options.zones()) {
      if (zone.sync === null) continue;
      const state = this.#state(zone.name);
      let unanswered = 0;
      for (const batch of state.pending) unanswered += batch.entries.length;
      zones[zone.name] = {
        recordsPending: zone.sync.pending + unanswered,
        recordsTotal: zone.table.count,
        mode: state.failing || zone.sync.lostSinceMs !== null ? 'fallback' : 'synced',
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
      const state = this.#state(zone.name);
      if (state.pending.length === 0) {
        const entries = zone.sync.collect(zone.table);
        for (let i = 0; i < entries.length; i += BATCH_KEYS) {
          state.pending.push({ seq: ++state.seq, entries: entries.slice(i, i + BATCH_KEYS) });
        }
      }
      // With nothing to send, an empty exchange (the last seq again: nothing to apply) still says
      // whether the store is there: each interval while it is away (to notice its return at once),
      // else once a second.
      if (state.pending.length === 0) {
        const idleMs = this.#options.clock.nowMs() - state.lastSentAtMs;
        if (state.failing || idleMs >= IDLE_PROBE_MS)
          await this.#exchange(zone, state, { seq: state.seq, entries: [] });
        continue;
      }
      while (state.pending.length > 0) {
        if (!(await this.#exchange(zone, state, state.pending[0]!))) break;
        state.pending.shift();
      }
    }
  }

  /** Sends one batch; true once the store answered it. */
  async #exchange(zone: LimitReqZone, state: ZoneState, batch: PendingBatch): Promise<boolean> {
    const sync = zone.sync!;
    const sentAtMs = this.#options.clock.nowMs();
    state.lastSentAtMs = sentAtMs;
    state.inFlightSinceMs = sentAtMs;
    this.#msgsOut++;
    try {
      const buckets = await this.#options.store.exchange({
        zone: zone.name,
        rateMilli: zone.rateMilli,
        replicaId: this.#options.replicaId,
        incarnation: this.#incarnation,
        seq: batch.seq,
        entries: batch.entries.map((e) => ({
          key: e.key,
          charged: e.charged,
          seen: e.seen,
          ageMs: sentAtMs - e.firstSeenMs,
        })),
      });
      this.#msgsIn++;
      const nowMs = this.#options.clock.nowMs();
      for (const [i, entry] of batch.entries.entries()) sync.apply(zone.table, entry, buckets[i]!, nowMs);
      state.lastSyncAtMs = nowMs;
      state.roundTripMs = nowMs - sentAtMs;
      state.inFlightSinceMs = null;
      state.failing = false;
      sync.lostSinceMs = null;
      sync.heldFraction = 1;
      if (this.#storeAway) {
        this.#storeAway = false;
        this.#options.log?.('info', 'cluster-wide limits: the store answers again; shares restored');
      }
      return true;
    } catch (err) {
      state.inFlightSinceMs = null;
      state.failing = true;
      this.holdShares();
      if (!this.#storeAway) {
        this.#storeAway = true;
        this.#options.log?.(
          'warn',
          'cluster-wide limits: the store cannot be reached; each synced zone keeps the shares it had, shrinking to none by the time this replica’s heartbeat lapses',
          { zone: zone.name, heldFraction: sync.heldFraction, err: String(err) },
        );
      }
      return false;
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
        seq: 0,
        pending: [],
        inFlightSinceMs: null,
      };
      this.#zones.set(zone, state);
    }
    return state;
  }
}
