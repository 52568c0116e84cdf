/**
 * The counters port: each replica's per-zone counters, summed in the store, for the cluster-wide
 * `/limit_reqs` (and every later limiter: a limiter's counters are a `CounterFamily` of the engine,
 * kept here under its `kind`). Every backend passes `test/store/contracts/counters.contract.ts`.
 *
 * Exactly once: a replica sends its deltas as numbered batches and resends a batch unchanged until
 * the store accepts it; the store applies each (replica, incarnation, seq) at most once, so a batch
 * whose answer was lost (a timeout while the store ran it anyway) is not counted twice.
 */

/** zone → counter field → value. */
export type ZoneCounterTable = Readonly<Record<string, Readonly<Record<string, number>>>>;

export interface CounterBatch {
  readonly replicaId: string;
  /** One per process run of the replica (a random id): `seq` restarts with it. */
  readonly incarnation: string;
  /** 1, 2, 3, … within the incarnation; a batch at or below the last accepted one is a repeat. */
  readonly seq: number;
  /** kind (`limit_req`, …) → zone → field → delta. A zero delta still makes the zone known. */
  readonly deltas: Readonly<Record<string, ZoneCounterTable>>;
}

export interface CounterStore {
  /** Add a batch atomically; `false` when this batch was applied before (nothing changes). */
  add(batch: CounterBatch): Promise<boolean>;
  /** replica id → zone → field → total, for one kind. */
  read(kind: string): Promise<Record<string, Record<string, Record<string, number>>>>;
  /** Zero one zone's counters of one kind on every replica record (`DELETE /limit_reqs/{zone}`). */
  reset(kind: string, zone: string): Promise<void>;
  /**
   * How many times each of `zones` was reset (0 when never): a replica that sees the number grow
   * zeroes its own status view of the zone.
   */
  resets(kind: string, zones: readonly string[]): Promise<Record<string, number>>;
}
