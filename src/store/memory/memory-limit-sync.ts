/** The cluster-wide limits port in memory (one process: the demo, tests). */
import type { SyncedBucket } from '../../engine/limit-req/zone-sync.ts';
import {
  DRAINED,
  type LimitSyncBatch,
  type LimitSyncStore,
  SHARE_DECAY_MS,
  SYNC_IDLE_MS,
} from '../limit-sync-store.ts';
import type { MemoryBackend } from './memory-backend.ts';

interface Bucket {
  excessMilli: number;
  lastMs: number;
  /** Decayed arrivals of every replica, at `sumAtMs`. */
  sum: number;
  sumAtMs: number;
  /** replica → decayed arrivals at a time. */
  readonly weights: Map<string, { weight: number; atMs: number }>;
  rateMilli: number;
}

export class MemoryLimitSync implements LimitSyncStore {
  readonly #backend: MemoryBackend;
  /** zone → key → bucket, least recently touched first. */
  readonly #zones = new Map<string, Map<string, Bucket>>();

  constructor(backend: MemoryBackend) {
    this.#backend = backend;
  }

  async exchange(batch: LimitSyncBatch): Promise<SyncedBucket[]> {
    this.#backend.assertOpen();
    let zone = this.#zones.get(batch.zone);
    if (!zone) {
      zone = new Map();
      this.#zones.set(batch.zone, zone);
    }
    const now = batch.nowMs;
    const out: SyncedBucket[] = [];
    for (const entry of batch.entries) {
      let bucket = zone.get(entry.key);
      if (bucket === undefined) {
        bucket = {
          excessMilli: DRAINED,
          lastMs: now,
          sum: 0,
          sumAtMs: now,
          weights: new Map(),
          rateMilli: batch.rateMilli,
        };
      }
      const leakMilli = Math.floor((batch.rateMilli * Math.max(0, now - bucket.lastMs)) / 1000);
      bucket.excessMilli = Math.max(DRAINED, bucket.excessMilli + 1000 * entry.charged - leakMilli);
      bucket.lastMs = Math.max(bucket.lastMs, now);
      bucket.rateMilli = batch.rateMilli;
      bucket.sum = decayed(bucket.sum, bucket.sumAtMs, now) + entry.seen;
      bucket.sumAtMs = Math.max(bucket.sumAtMs, now);
      const mine = bucket.weights.get(batch.replicaId);
      const weight = (mine ? decayed(mine.weight, mine.atMs, now) : 0) + entry.seen;
      bucket.weights.set(batch.replicaId, { weight, atMs: Math.max(now, mine?.atMs ?? now) });
      const share = bucket.sum > 0 ? Math.min(1, weight / bucket.sum) : 1;
      // Touched last: to the end of the map's order.
      zone.delete(entry.key);
      zone.set(entry.key, bucket);
      out.push({ excessMilli: bucket.excessMilli, lastMs: bucket.lastMs, share });
    }
    forgetIdle(zone, now);
    return out;
  }

  async keys(zone: string): Promise<number> {
    this.#backend.assertOpen();
    return this.#zones.get(zone)?.size ?? 0;
  }
}

function decayed(value: number, atMs: number, nowMs: number): number {
  return nowMs > atMs ? value * Math.exp(-(nowMs - atMs) / SHARE_DECAY_MS) : value;
}

/** Keys idle for `SYNC_IDLE_MS` with a drained bucket, from the least recently touched. */
function forgetIdle(zone: Map<string, Bucket>, nowMs: number): void {
  for (const [key, bucket] of zone) {
    const idleMs = nowMs - bucket.lastMs;
    if (idleMs < SYNC_IDLE_MS) return;
    if (bucket.excessMilli - (bucket.rateMilli * idleMs) / 1000 > DRAINED) return;
    zone.delete(key);
  }
}
