/**
 * The leases port: short exclusive leases between control planes (who handles this alert's key now)
 * and the small records their holders keep (alert automation's hold state). Neither goes through the
 * keyval feed, so replicas never see them. Every backend passes
 * `test/store/contracts/lease.contract.ts`.
 *
 * A lease is a name taken with a random token for a bounded time (Redis `SET NX PX`); it is given
 * back only by the holder of that token (compare-and-delete), and a record is written only while its
 * writer's lease is still held (the lease fences the write), so a holder whose lease lapsed — paused,
 * slow store — cannot undo what the next holder did.
 */

export interface Lease {
  readonly name: string;
  readonly token: string;
}

export interface LeaseRecord {
  readonly value: string;
  /** Epoch ms (the writer's clock); `null` never expires. */
  readonly expireAtMs: number | null;
}

export interface LeaseStore {
  /** Take the lease `name` for `ttlMs` if nobody holds it; `null` while somebody does. */
  acquire(name: string, ttlMs: number): Promise<Lease | null>;
  /** Give the lease back if it is still this one; `false` when it had lapsed (and may be another's now). */
  release(lease: Lease): Promise<boolean>;
  /** The live records whose name starts with `prefix`. */
  records(prefix: string, nowMs: number): Promise<Record<string, LeaseRecord>>;
  /** Write (`null`: delete) record `name` if `lease` is still held; `false`, writing nothing, if not. */
  putRecord(lease: Lease, name: string, record: LeaseRecord | null): Promise<boolean>;
}
