/**
 * The cluster-wide limits port: the one leaky bucket per key of every `limit_req_zone … sync`, kept in
 * the store and reconciled with each replica's local view (engine/limit-req/zone-sync.ts). A replica
 * sends, every sync interval, what each active key did on it since the last time — the requests that
 * raised the bucket and the requests it saw — and gets back the cluster's bucket for each and its share
 * of the key's recent arrivals. Every backend passes `test/store/contracts/limit-sync.contract.ts`.
 *
 * The bucket is nginx's (excess, last) for the merged stream, kept as its level: each batch adds 1000
 * per charged request and leaks at the zone's rate, the level never below `DRAINED` (one request's
 * credit: nginx's first request of a node is free, and so is a drained bucket's next). There is no
 * clamp at the burst: what the replicas admitted before they heard of each other stays above it as a
 * debt, and every replica refuses until it has leaked away. Shares are arrivals decayed with a
 * one-second time constant, per key and replica. A key idle for a minute with its bucket drained is
 * forgotten.
 *
 * Faults: time is the store's own clock (a replica's clock error moves nothing); each batch is
 * applied at most once (per replica incarnation and seq: one that times out is sent again unchanged,
 * and a copy the store runs late adds nothing); a new bucket starts when the batch's first request for
 * it came, so a store that lost its buckets credits the leak since; and a replica the store has not
 * heard from for `SYNC_LOST_AFTER_MS` while its heartbeat is live keeps its part of every key's
 * arrivals (the others' shares do not grow into it) until its heartbeat lapses.
 */
import type { SyncedBucket } from '../engine/limit-req/zone-sync.ts';

export interface LimitSyncEntry {
  readonly key: string;
  /** Requests that raised this replica's view of the bucket by 1000 each. */
  readonly charged: number;
  /** Requests this replica saw for the key (admitted, delayed, refused). */
  readonly seen: number;
  /**
   * How long before the batch was sent the first of them came, ms: a duration on the replica's
   * clock, which the adapter turns into a time on the store's (its error cancels out).
   */
  readonly ageMs: number;
}

export interface LimitSyncBatch {
  readonly zone: string;
  /** The zone's `rate=`, requests per second × 1000. */
  readonly rateMilli: number;
  readonly replicaId: string;
  /** This run of the replica: a new one numbers its batches from 1 again. */
  readonly incarnation: string;
  /**
   * 1, 2, 3, … per zone within the incarnation; a batch at or below the last one applied is a repeat
   * and is answered without being applied. An empty batch may repeat the last seq.
   */
  readonly seq: number;
  readonly entries: readonly LimitSyncEntry[];
}

export interface LimitSyncStore {
  /** Merge a batch into the cluster's buckets, atomically, once; the buckets after, in the batch's order. */
  exchange(batch: LimitSyncBatch): Promise<SyncedBucket[]>;
  /** How many keys a zone's cluster-wide buckets hold (`records_total`). */
  keys(zone: string): Promise<number>;
}

/** The level of a drained bucket (and a new one): the next request is free. */
export const DRAINED = -1000;
/** The time constant of the arrival rates shares are made of. */
export const SHARE_DECAY_MS = 1000;
/** A key idle this long, its bucket drained, is forgotten. */
export const SYNC_IDLE_MS = 60_000;
/**
 * A replica not heard from for this long (it exchanges at least once a second) is cut off: while its
 * heartbeat is live, its weights decay no further.
 */
export const SYNC_LOST_AFTER_MS = 1500;
/**
 * A replica silent this long is forgotten, its last seq too. Long: a frozen store may still hold
 * copies of its batches queued on a connection, run when it wakes.
 */
export const SYNC_SENDER_FORGET_MS = 3_600_000;
