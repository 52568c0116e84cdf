/**
 * The cluster-wide limits port: the one leaky bucket per key of every `limit_req_zone … sync`, kept in
 * the store and reconciled with each replica's local view (engine/limit-req/zone-sync.ts). A replica
 * sends, every sync interval, what each active key did on it since the last time — the requests that
 * raised the bucket and the requests it saw — and gets back the cluster's bucket for each and its share
 * of the key's recent arrivals. Every backend passes `test/store/contracts/limit-sync.contract.ts`.
 *
 * The bucket is nginx's (excess, last) for the merged stream, kept as its level: each batch adds 1000
 * per charged request and leaks at the zone's rate to the sender's clock, the level never below
 * `DRAINED` (one request's credit: nginx's first request of a node is free, and so is a drained
 * bucket's next). There is no clamp at the burst: what the replicas admitted before they heard of
 * each other stays above it as a debt, and every replica refuses until it has leaked away. Shares
 * are arrivals decayed with a one-second time constant, per key and replica. A key idle for a minute
 * with its bucket drained is forgotten.
 */
import type { SyncedBucket } from '../engine/limit-req/zone-sync.ts';

export interface LimitSyncEntry {
  readonly key: string;
  /** Requests that raised this replica's view of the bucket by 1000 each. */
  readonly charged: number;
  /** Requests this replica saw for the key (admitted, delayed, refused). */
  readonly seen: number;
}

export interface LimitSyncBatch {
  readonly zone: string;
  /** The zone's `rate=`, requests per second × 1000. */
  readonly rateMilli: number;
  readonly replicaId: string;
  /** The sender's clock when the batch left: the buckets are leaked to it. */
  readonly nowMs: number;
  readonly entries: readonly LimitSyncEntry[];
}

export interface LimitSyncStore {
  /** Merge a batch into the cluster's buckets, atomically; the buckets after, in the batch's order. */
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
