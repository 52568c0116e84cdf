/**
 * The engine's side of a cluster-wide `limit_req_zone … sync`: one leaky bucket per key for the whole
 * fleet, decided locally on every replica. Pure: the replica's sync loop carries the numbers to and
 * from the store.
 *
 * Each replica holds its share of every key's bucket — the part of the key's recent arrivals that
 * came to it, as the store last said (1 / live replicas before it has said anything). The node keeps
 * nginx's (excess, last) in the cluster's units, leaking at the zone's rate, and each request costs
 * 1000 / share: so the replica has its share of the burst and of the rate, and the shares together
 * make one bucket. Every sync interval the replica sends what each active key did (requests charged,
 * requests seen); the store adds the charges to the one bucket of the merged stream and answers with
 * it and the new share. That bucket is the check on the shares: above the burst, the fleet has
 * admitted more than one nginx would have (a key's traffic reached replicas with no word of it yet),
 * and every replica refuses until the debt has leaked away. docs/cluster-limits.md derives the bound.
 */
import type { StateTable } from './state-table.ts';

/** What a node did since the last sync, for the store. */
export interface SyncEntry {
  readonly node: number;
  /** The node's key (a byte string). */
  readonly key: string;
  /** Requests that raised the bucket (1000 each). */
  readonly charged: number;
  /** Requests seen (admitted, delayed or refused), for the share. */
  readonly seen: number;
}

/** The cluster's bucket for a key, as the store answered. */
export interface SyncedBucket {
  readonly excessMilli: number;
  readonly lastMs: number;
  /** This replica's part of the key's recent arrivals, 0..1. */
  readonly share: number;
}

const UNKNOWN = -1;

/**
 * What a node of a synced zone keeps beyond the table's own: share, synced-at and the cluster's
 * excess 8 each, charged 4, seen 4, marked 1.
 */
export const SYNC_NODE_BYTES = 33;

/** The least share a replica is given: one hundredth, so a request never costs more than 100. */
const MIN_SHARE = 0.01;

export class ZoneSync {
  /** The share of a key this replica has no word of from the store: 1 / live replicas. */
  defaultShare = 1;
  /**
   * How long the store's word on a key holds: past it (the replica did not sync the key since, or
   * could not), the other replicas' use of the bucket is unknown and the key falls back to the
   * default share. Two sync intervals.
   */
  freshMs = 200;
  /** Per node: the share learned from the store, or UNKNOWN. */
  #share: Float64Array;
  /** Per node: the clock of the store's last word (its bucket's `last`), or -Infinity. */
  #syncedAt: Float64Array;
  /** Per node: the cluster's excess in the store's last word. */
  #clusterExcess: Float64Array;
  #charged: Uint32Array;
  #seen: Uint32Array;
  /** Per node: in `#dirty` already. */
  #marked: Uint8Array;
  #dirty: number[] = [];

  constructor(capacity: number) {
    this.#share = new Float64Array(capacity).fill(UNKNOWN);
    this.#syncedAt = new Float64Array(capacity).fill(Number.NEGATIVE_INFINITY);
    this.#clusterExcess = new Float64Array(capacity);
    this.#charged = new Uint32Array(capacity);
    this.#seen = new Uint32Array(capacity);
    this.#marked = new Uint8Array(capacity);
  }

  /**
   * What a request for `node` raises this replica's view of the cluster's bucket by, in
   * milli-requests: 1000 / its share. The replica holds its share of the bucket — of the excess, the
   * burst and the leak — so each of its requests weighs 1 / share in the cluster's units; a replica
   * with all of a key's traffic pays 1000 per request, as one nginx does.
   */
  costMilli(node: number, nowMs: number): number {
    return 1000 / this.#shareOf(node, nowMs);
  }

  /**
   * The cluster's excess for `node` now, as the store last told it and leaked since at the zone's
   * rate; -Infinity before any word. Above the burst, the fleet has admitted more than one nginx
   * would (replicas that had not heard of each other yet) and every replica refuses until it drains.
   */
  clusterExcessMilli(node: number, nowMs: number, rateMilli: number): number {
    const elapsed = Math.max(0, nowMs - this.#syncedAt[node]!);
    return this.#clusterExcess[node]! - Math.floor((rateMilli * elapsed) / 1000);
  }

  /** The share the store last gave, while its word is fresh; else the default share. */
  #shareOf(node: number, nowMs: number): number {
    const share = this.#share[node]!;
    if (share === UNKNOWN || nowMs - this.#syncedAt[node]! > this.freshMs) return this.defaultShare;
    return Math.max(MIN_SHARE, share);
  }

  /** A request for `node` was looked up (whatever came of it). */
  seen(node: number): void {
    this.#mark(node);
    this.#seen[node]!++;
  }

  /** A request raised `node`'s bucket by 1000. */
  charged(node: number): void {
    this.#mark(node);
    this.#charged[node]!++;
  }

  /** A node was created (possibly reusing a freed one): nothing known of it yet. */
  reset(node: number): void {
    this.#grow(node);
    this.#share[node] = UNKNOWN;
    this.#syncedAt[node] = Number.NEGATIVE_INFINITY;
    this.#charged[node] = 0;
    this.#seen[node] = 0;
  }

  /** Nodes with activity since the last call, with their counts (which restart from zero). */
  collect(table: StateTable): SyncEntry[] {
    const entries: SyncEntry[] = [];
    for (const node of this.#dirty) {
      this.#marked[node] = 0;
      if (!table.isLive(node)) continue;
      entries.push({ node, key: table.keyOf(node), charged: this.#charged[node]!, seen: this.#seen[node]! });
      this.#charged[node] = 0;
      this.#seen[node] = 0;
    }
    this.#dirty = [];
    return entries;
  }

  /**
   * Counts of a batch the store did not take (it could not be reached): they go out with the next
   * batch, so the cluster's bucket still learns of them.
   */
  giveBack(table: StateTable, entries: readonly SyncEntry[]): void {
    for (const entry of entries) {
      if (!table.isLive(entry.node) || table.keyOf(entry.node) !== entry.key) continue;
      this.#mark(entry.node);
      this.#charged[entry.node]! += entry.charged;
      this.#seen[entry.node]! += entry.seen;
    }
  }

  /**
   * The store's answer for a batch: the node's share and the cluster's excess. The node's own
   * (excess, last) stays as it is: it is this replica's part of the bucket. Skipped when the node now
   * holds another key.
   */
  apply(table: StateTable, entry: SyncEntry, bucket: SyncedBucket): void {
    const node = entry.node;
    if (!table.isLive(node) || table.keyOf(node) !== entry.key) return;
    this.#share[node] = bucket.share;
    this.#syncedAt[node] = bucket.lastMs;
    this.#clusterExcess[node] = bucket.excessMilli;
  }

  /** The store is away: every key falls back to the default share. */
  forgetShares(): void {
    this.#share.fill(UNKNOWN);
    this.#syncedAt.fill(Number.NEGATIVE_INFINITY);
  }

  /** Nodes whose activity the store has not heard of yet (`records_pending`). */
  get pending(): number {
    return this.#dirty.length;
  }

  #mark(node: number): void {
    this.#grow(node);
    if (this.#marked[node] === 1) return;
    this.#marked[node] = 1;
    this.#dirty.push(node);
  }

  #grow(node: number): void {
    if (node < this.#share.length) return;
    const length = Math.max(node + 1, this.#share.length * 2);
    const share = new Float64Array(length).fill(UNKNOWN);
    share.set(this.#share);
    this.#share = share;
    const syncedAt = new Float64Array(length).fill(Number.NEGATIVE_INFINITY);
    syncedAt.set(this.#syncedAt);
    this.#syncedAt = syncedAt;
    this.#clusterExcess = grown(this.#clusterExcess, new Float64Array(length));
    this.#charged = grown(this.#charged, new Uint32Array(length));
    this.#seen = grown(this.#seen, new Uint32Array(length));
    this.#marked = grown(this.#marked, new Uint8Array(length));
  }
}

function grown<T extends Float64Array | Uint32Array | Uint8Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
