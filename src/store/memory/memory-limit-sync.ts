/** The cluster-wide limits port in memory (one process: the demo, tests), as `lua/limit-sync-5.lua`. */
import type { SyncedBucket } from '../../engine/limit-req/zone-sync.ts';
import {
  DRAINED,
  type LimitSyncBatch,
  type LimitSyncStore,
  SHARE_DECAY_MS,
  SYNC_IDLE_MS,
  SYNC_LOST_AFTER_MS,
} from '../limit-sync-store.ts';
import type { MemoryBackend } from './memory-backend.ts';

interface Bucket {
  /** The level at `lastMs`, below DRAINED when it drained before then. */
  excessMilli: number;
  lastMs: number;
  /** replica → decayed arrivals at a time. */
  readonly weights: Map<string, { weight: number; atMs: number }>;
  rateMilli: number;
}

interface Zone {
  /** key → bucket, least recently touched first. */
  readonly buckets: Map<string, Bucket>;
  /** replica → its incarnation, last seq applied and when it was last heard. */
  readonly senders: Map<string, { incarnation: string; seq: number; heardMs: number }>;
}

export class MemoryLimitSync implements LimitSyncStore {
  readonly #backend: MemoryBackend;
  /** When a replica's heartbeat lapses (the registry's word). */
  readonly #liveUntilMs: (replicaId: string) => number;
  readonly #zones = new Map<string, Zone>();

  constructor(backend: MemoryBackend, liveUntilMs: (replicaId: string) => number) {
    this.#backend = backend;
    this.#liveUntilMs = liveUntilMs;
  }

  async exchange(batch: LimitSyncBatch): Promise<SyncedBucket[]> {
    this.#backend.assertOpen();
    let zone = this.#zones.get(batch.zone);
    if (!zone) {
      zone = { buckets: new Map(), senders: new Map() };
      this.#zones.set(batch.zone, zone);
    }
    const now = this.#backend.nowMs();
    const sender = zone.senders.get(batch.replicaId);
    const repeated =
      sender !== undefined && sender.incarnation === batch.incarnation && sender.seq >= batch.seq;
    zone.senders.set(batch.replicaId, {
      incarnation: batch.incarnation,
      seq: repeated ? sender.seq : batch.seq,
      heardMs: now,
    });
    const horizonMs = (other: string): number => {
      const heardMs = zone.senders.get(other)?.heardMs ?? Number.NEGATIVE_INFINITY;
      return this.#liveUntilMs(other) > now ? Math.min(now, heardMs + SYNC_LOST_AFTER_MS) : now;
    };
    const out: SyncedBucket[] = [];
    for (const entry of batch.entries) {
      const charged = repeated ? 0 : entry.charged;
      const seen = repeated ? 0 : entry.seen;
      let bucket = zone.buckets.get(entry.key);
      if (bucket === undefined) {
        bucket = {
          excessMilli: DRAINED,
          lastMs: now - entry.ageMs,
          weights: new Map(),
          rateMilli: batch.rateMilli,
        };
      }
      // GCRA: the level is kept below DRAINED too (how long ago it drained), and the charges count
      // from when their first request came (limit-sync-5.lua says why).
      let level = bucket.excessMilli;
      if (now > bucket.lastMs) level -= Math.floor((batch.rateMilli * (now - bucket.lastMs)) / 1000);
      level = Math.max(level, DRAINED - Math.floor((batch.rateMilli * entry.ageMs) / 1000));
      bucket.excessMilli = level + 1000 * charged;
      bucket.lastMs = Math.max(bucket.lastMs, now);
      bucket.rateMilli = batch.rateMilli;
      const mine = bucket.weights.get(batch.replicaId);
      const weight = (mine ? decayed(mine.weight, mine.atMs, now) : 0) + seen;
      bucket.weights.set(batch.replicaId, { weight, atMs: now });
      let sum = weight;
      for (const [other, v] of bucket.weights) {
        if (other === batch.replicaId) continue;
        const w = decayed(v.weight, v.atMs, horizonMs(other));
        if (w < 0.001) bucket.weights.delete(other);
        else sum += w;
      }
      const share = sum > 0 ? Math.min(1, weight / sum) : 1;
      // Touched last: to the end of the map's order.
      zone.buckets.delete(entry.key);
      zone.buckets.set(entry.key, bucket);
      out.push({ excessMilli: Math.max(DRAINED, bucket.excessMilli), share });
    }
    forgetIdle(zone.buckets, now);
    return out;
  }

  async keys(zone: string): Promise<number> {
    this.#backend.assertOpen();
    return this.#zones.get(zone)?.buckets.size ?? 0;
  }
}

function decayed(value: number, atMs: number, nowMs: number): number {
  return nowMs > atMs ? value * Math.exp(-(nowMs - atMs) / SHARE_DECAY_MS) : value;
}

/** Keys idle for `SYNC_IDLE_MS` with a drained bucket, from the least recently touched. */
function forgetIdle(buckets: Map<string, Bucket>, nowMs: number): void {
  for (const [key, bucket] of buckets) {
    const idleMs = nowMs - bucket.lastMs;
    if (idleMs < SYNC_IDLE_MS) return;
    if (bucket.excessMilli - (bucket.rateMilli * idleMs) / 1000 > DRAINED) return;
    buckets.delete(key);
  }
}
