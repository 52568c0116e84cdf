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
 * A node's sync state, side by side in one array so a lookup touches one or two cache lines: the
 * share learned from the store (or UNKNOWN), the clock of its last word (its bucket's `last`, or
 * -Infinity), the cluster's excess it said, requests charged and seen since the last collect, and
 * whether the node is in the dirty list.
 */
const SHARE = 0;
const SYNCED_AT = 1;
const CLUSTER_EXCESS = 2;
const CHARGED = 3;
const SEEN = 4;
const MARKED = 5;
const STRIDE = 6;

/** What a node of a synced zone keeps beyond the table's own: six numbers. */
export const SYNC_NODE_BYTES = STRIDE * 8;

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
  #state: Float64Array;
  #dirty: number[] = [];

  constructor(capacity: number) {
    this.#state = new Float64Array(capacity * STRIDE);
  }

  /**
   * What a request for `node` raises this replica's view of the cluster's bucket by, in
   * milli-requests: 1000 / its share. The replica holds its share of the bucket — of the excess, the
   * burst and the leak — so each of its requests weighs 1 / share in the cluster's units; a replica
   * with all of a key's traffic pays 1000 per request, as one nginx does. The share is the store's
   * last word while it is fresh, else the default share.
   */
  costMilli(node: number, nowMs: number): number {
    const at = node * STRIDE;
    const share = this.#state[at + SHARE]!;
    if (share === UNKNOWN || nowMs - this.#state[at + SYNCED_AT]! > this.freshMs)
      return 1000 / this.defaultShare;
    return 1000 / Math.max(share, MIN_SHARE);
  }

  /**
   * The cluster's excess for `node` now, as the store last told it and leaked since at the zone's
   * rate; -Infinity before any word. Above the burst, the fleet has admitted more than one nginx
   * would (replicas that had not heard of each other yet) and every replica refuses until it drains.
   */
  clusterExcessMilli(node: number, nowMs: number, rateMilli: number): number {
    const at = node * STRIDE;
    const elapsed = Math.max(0, nowMs - this.#state[at + SYNCED_AT]!);
    return this.#state[at + CLUSTER_EXCESS]! - Math.floor((rateMilli * elapsed) / 1000);
  }

  /** A request for `node` was looked up (whatever came of it). */
  seen(node: number): void {
    this.#state[node * STRIDE + SEEN]!++;
    this.#mark(node);
  }

  /** A request `seen` already raised `node`'s bucket. */
  charged(node: number): void {
    this.#state[node * STRIDE + CHARGED]!++;
  }

  /** A node was created (possibly reusing a freed one): nothing known of it yet. */
  reset(node: number): void {
    this.#grow(node);
    const at = node * STRIDE;
    this.#state[at + SHARE] = UNKNOWN;
    this.#state[at + SYNCED_AT] = Number.NEGATIVE_INFINITY;
    this.#state[at + CLUSTER_EXCESS] = 0;
    this.#state[at + CHARGED] = 0;
    this.#state[at + SEEN] = 0;
    // MARKED stays: a freed node still in the dirty list is skipped by `collect` (not live) or
    // collected with its new key.
  }

  /** Nodes with activity since the last call, with their counts (which restart from zero). */
  collect(table: StateTable): SyncEntry[] {
    const entries: SyncEntry[] = [];
    const state = this.#state;
    for (const node of this.#dirty) {
      const at = node * STRIDE;
      state[at + MARKED] = 0;
      if (!table.isLive(node)) continue;
      entries.push({ node, key: table.keyOf(node), charged: state[at + CHARGED]!, seen: state[at + SEEN]! });
      state[at + CHARGED] = 0;
      state[at + SEEN] = 0;
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
      const at = entry.node * STRIDE;
      this.#state[at + SEEN]! += entry.seen;
      this.#state[at + CHARGED]! += entry.charged;
      this.#mark(entry.node);
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
    const at = node * STRIDE;
    this.#state[at + SHARE] = bucket.share;
    this.#state[at + SYNCED_AT] = bucket.lastMs;
    this.#state[at + CLUSTER_EXCESS] = bucket.excessMilli;
  }

  /** The store is away: every key falls back to the default share. */
  forgetShares(): void {
    const state = this.#state;
    for (let at = 0; at < state.length; at += STRIDE) {
      state[at + SHARE] = UNKNOWN;
      state[at + SYNCED_AT] = Number.NEGATIVE_INFINITY;
    }
  }

  /** Nodes whose activity the store has not heard of yet (`records_pending`). */
  get pending(): number {
    return this.#dirty.length;
  }

  #mark(node: number): void {
    const at = node * STRIDE + MARKED;
    if (this.#state[at] === 1) return;
    this.#state[at] = 1;
    this.#dirty.push(node);
  }

  #grow(node: number): void {
    if ((node + 1) * STRIDE <= this.#state.length) return;
    const nodes = Math.max(node + 1, (this.#state.length / STRIDE) * 2);
    const state = new Float64Array(nodes * STRIDE);
    state.set(this.#state);
    this.#state = state;
  }
}
