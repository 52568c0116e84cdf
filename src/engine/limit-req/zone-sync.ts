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
  /** When the first of them was seen (this replica's clock): its age goes with the batch. */
  readonly firstSeenMs: number;
}

/** The cluster's bucket for a key, as the store answered. */
export interface SyncedBucket {
  /** The bucket's excess when the store answered (leaked to the store's own clock). */
  readonly excessMilli: number;
  /** This replica's part of the key's recent arrivals, 0..1. */
  readonly share: number;
}

const UNKNOWN = -1;

/**
 * A node's sync state, side by side in one array so a lookup touches one or two cache lines: the
 * share learned from the store (or UNKNOWN), when its last word came (this replica's clock, or
 * -Infinity), the cluster's excess it said, requests charged and seen since the last collect, and
 * when the first of those was seen (UNMARKED: none, the node is not in the dirty list).
 */
const SHARE = 0;
const SYNCED_AT = 1;
const CLUSTER_EXCESS = 2;
const CHARGED = 3;
const SEEN = 4;
const FIRST_SEEN = 5;
const STRIDE = 6;
const UNMARKED = Number.NEGATIVE_INFINITY;

/** The zone's own numbers, ahead of the nodes': what the sync loop sets and every lookup reads. */
const DEFAULT_SHARE = 0;
const LOST_SINCE = 1;
const HELD_FRACTION = 2;
const FRESH_MS = 3;
const ZONE_F64S = 4;
/** `lostSinceMs` null, stored. */
const NOT_LOST = Number.NaN;

/** What a node of a synced zone keeps beyond the table's own: six numbers. */
export const SYNC_NODE_BYTES = STRIDE * 8;

/** The least share a replica is given: one hundredth, so a request never costs more than 100. */
const MIN_SHARE = 0.01;

/** 1000 / share rounded up, the float error of shares such as 1/3 (1000 / 0.333… = 3000.0000000000005) aside. */
function wholeCost(share: number): number {
  return Math.ceil(1000 / share - 1e-9);
}

/** Bytes of a zone's sync state for `capacity` nodes: its numbers, the nodes', the dirty list. */
function syncBytes(capacity: number): number {
  return (ZONE_F64S + capacity * STRIDE) * 8 + (1 + capacity) * 4;
}

/**
 * All of it lives in one SharedArrayBuffer sized for the table's most nodes (whose `size` accounting
 * charges each node SYNC_NODE_BYTES already): the zone's worker threads read and write it under the
 * zone's lock, as they do the table; the thread that syncs sets the zone's numbers between rounds.
 */
export class ZoneSync {
  readonly memory: SharedArrayBuffer;
  readonly #zone: Float64Array;
  readonly #state: Float64Array;
  /** Nodes with activity since the last collect: `[count, node…]`. */
  readonly #dirty: Int32Array;

  /** A new zone's sync state for nodes 0..capacity-1; given `memory` ({@link memory} of one), that one. */
  constructor(capacity: number, memory?: SharedArrayBuffer) {
    this.memory = memory ?? new SharedArrayBuffer(syncBytes(capacity));
    if (this.memory.byteLength !== syncBytes(capacity))
      throw new RangeError('not the sync state of this zone');
    this.#zone = new Float64Array(this.memory, 0, ZONE_F64S);
    this.#state = new Float64Array(this.memory, ZONE_F64S * 8, capacity * STRIDE);
    this.#dirty = new Int32Array(this.memory, (ZONE_F64S + capacity * STRIDE) * 8, 1 + capacity);
    if (memory !== undefined) return;
    this.defaultShare = 1;
    this.lostSinceMs = null;
    this.heldFraction = 1;
    this.freshMs = 200;
    for (let at = FIRST_SEEN; at < this.#state.length; at += STRIDE) this.#state[at] = UNMARKED;
  }

  /** The share of a key this replica has no word of from the store: 1 / live replicas. */
  get defaultShare(): number {
    return this.#zone[DEFAULT_SHARE]!;
  }

  set defaultShare(share: number) {
    this.#zone[DEFAULT_SHARE] = share;
  }

  /**
   * Cut off from the store since this time (this replica's clock; the last answer it had), or null.
   * Meanwhile each key keeps the share it had then — the part the store holds for this replica
   * while its heartbeat is live — times {@link heldFraction}.
   */
  get lostSinceMs(): number | null {
    const since = this.#zone[LOST_SINCE]!;
    return Number.isNaN(since) ? null : since;
  }

  set lostSinceMs(since: number | null) {
    this.#zone[LOST_SINCE] = since ?? NOT_LOST;
  }

  /**
   * While cut off: 1 at first, down to 0 by the time this replica's heartbeat lapses in the store,
   * when the others take its part (the sync loop sets it).
   */
  get heldFraction(): number {
    return this.#zone[HELD_FRACTION]!;
  }

  set heldFraction(fraction: number) {
    this.#zone[HELD_FRACTION] = fraction;
  }

  /**
   * How long the store's word on a key holds: past it (the replica did not sync the key since, or
   * could not), the other replicas' use of the bucket is unknown and the key falls back to the
   * default share. Two sync intervals.
   */
  get freshMs(): number {
    return this.#zone[FRESH_MS]!;
  }

  set freshMs(ms: number) {
    this.#zone[FRESH_MS] = ms;
  }
  /**
   * What a request for `node` raises this replica's view of the cluster's bucket by, in
   * milli-requests: 1000 / its share, rounded up (a node's excess stays whole milli-requests, as
   * nginx's). The replica holds its share of the bucket — of the excess, the burst and the leak —
   * so each of its requests weighs 1 / share in the cluster's units; a replica with all of a key's
   * traffic pays 1000 per request, as one nginx does. The share is the store's last word while it is
   * fresh, else the default share; cut off from the store, the share held then, shrinking
   * (Infinity once nothing is held: every request refused).
   */
  costMilli(node: number, nowMs: number): number {
    const at = node * STRIDE;
    const share = this.#state[at + SHARE]!;
    const syncedAtMs = this.#state[at + SYNCED_AT]!;
    if (share !== UNKNOWN && nowMs - syncedAtMs <= this.freshMs) return wholeCost(Math.max(share, MIN_SHARE));
    if (this.lostSinceMs === null) return wholeCost(this.defaultShare);
    const held =
      share !== UNKNOWN && this.lostSinceMs - syncedAtMs <= this.freshMs
        ? Math.max(share, MIN_SHARE)
        : this.defaultShare;
    return this.heldFraction > 0 ? wholeCost(held * this.heldFraction) : Number.POSITIVE_INFINITY;
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
  seen(node: number, nowMs: number): void {
    const at = node * STRIDE;
    this.#state[at + SEEN]!++;
    if (this.#state[at + FIRST_SEEN] !== UNMARKED) return;
    this.#state[at + FIRST_SEEN] = nowMs;
    const dirty = this.#dirty;
    dirty[++dirty[0]!] = node;
  }

  /** A request `seen` already raised `node`'s bucket. */
  charged(node: number): void {
    this.#state[node * STRIDE + CHARGED]!++;
  }

  /** A node was created (possibly reusing a freed one): nothing known of it yet. */
  reset(node: number): void {
    const at = node * STRIDE;
    this.#state[at + SHARE] = UNKNOWN;
    this.#state[at + SYNCED_AT] = Number.NEGATIVE_INFINITY;
    this.#state[at + CLUSTER_EXCESS] = 0;
    this.#state[at + CHARGED] = 0;
    this.#state[at + SEEN] = 0;
    // FIRST_SEEN stays: a freed node still in the dirty list is skipped by `collect` (not live) or
    // collected with its new key; every node's slot starts UNMARKED.
  }

  /**
   * Nodes with activity since the last call, with their counts (which restart from zero). Each
   * batch made of them is sent until the store answers it, and never again after: the store applies
   * it once.
   */
  collect(table: StateTable): SyncEntry[] {
    if (!table.shared) return this.#collectLocked(table);
    table.lock();
    try {
      return this.#collectLocked(table);
    } finally {
      table.unlock();
    }
  }

  #collectLocked(table: StateTable): SyncEntry[] {
    const entries: SyncEntry[] = [];
    const state = this.#state;
    const dirty = this.#dirty;
    for (let i = 1; i <= dirty[0]!; i++) {
      const node = dirty[i]!;
      const at = node * STRIDE;
      const firstSeenMs = state[at + FIRST_SEEN]!;
      state[at + FIRST_SEEN] = UNMARKED;
      if (!table.isLive(node)) continue;
      const charged = state[at + CHARGED]!;
      const seen = state[at + SEEN]!;
      entries.push({ node, key: table.keyOf(node), charged, seen, firstSeenMs });
      state[at + CHARGED] = 0;
      state[at + SEEN] = 0;
    }
    dirty[0] = 0;
    return entries;
  }

  /**
   * The store's answer for a batch, received at `nowMs`: the node's share and the cluster's excess.
   * The node's own (excess, last) stays as it is: it is this replica's part of the bucket. Skipped
   * when the node now holds another key.
   */
  apply(table: StateTable, entry: SyncEntry, bucket: SyncedBucket, nowMs: number): void {
    if (!table.shared) {
      this.#applyLocked(table, entry, bucket, nowMs);
      return;
    }
    table.lock();
    try {
      this.#applyLocked(table, entry, bucket, nowMs);
    } finally {
      table.unlock();
    }
  }

  #applyLocked(table: StateTable, entry: SyncEntry, bucket: SyncedBucket, nowMs: number): void {
    const node = entry.node;
    if (!table.isLive(node) || table.keyOf(node) !== entry.key) return;
    const at = node * STRIDE;
    this.#state[at + SHARE] = bucket.share;
    this.#state[at + SYNCED_AT] = nowMs;
    this.#state[at + CLUSTER_EXCESS] = bucket.excessMilli;
  }

  /** Nodes whose activity the store has not heard of yet (`records_pending`). */
  get pending(): number {
    return Atomics.load(this.#dirty, 0);
  }
}
