/**
 * One `limit_req_zone`: the leaky bucket of ngx_http_limit_req_module.c, in milli-requests, with nginx's
 * integer arithmetic, clock clamp, LRU expiry and allocation failure. Pure: time is `nowMs`.
 * A `sync` zone is one bucket per key for the whole cluster (zone-sync.ts): each node is this
 * replica's view of the cluster's bucket, a request costing 1000 / the replica's share, and the
 * replica's sync loop reconciles it with the store.
 * Workers share a zone as nginx's do: each builds its own zone on the buffer one of them
 * {@link LimitReqZone.share}d, and everything that reads or writes the state runs under the zone's
 * lock; a node a non-last limit left pending is pinned meanwhile, so that no worker evicts it.
 */
import type { ComplexValue } from '../complex-value.ts';
import { CounterSlices } from '../counter-slices.ts';
import type { CounterFamily, Counters } from '../counters.ts';
import type { SharedZoneMemory, ZoneAttachment } from '../shared-zone.ts';
import { StateTable } from './state-table.ts';
import { MIN_ZONE_BYTES } from './zone-size.ts';
import { SYNC_NODE_BYTES, ZoneSync } from './zone-sync.ts';

/** nginx's NGX_OK / NGX_AGAIN / NGX_BUSY / NGX_ERROR from `ngx_http_limit_req_lookup`. */
export const LOOKUP_OK = 0;
export const LOOKUP_AGAIN = 1;
export const LOOKUP_BUSY = 2;
export const LOOKUP_ERROR = 3;
export type LookupCode = typeof LOOKUP_OK | typeof LOOKUP_AGAIN | typeof LOOKUP_BUSY | typeof LOOKUP_ERROR;

/** A node created or touched by a non-last limit, committed later by {@link LimitReqZone.commit}. */
const NONE = -1;
/** Stale nodes must be idle this long before `expire` reclaims them. */
const EXPIRE_IDLE_MS = 60000;

/** The five NGINX Plus counters of a limit_req zone, in the API's order. */
export const LIMIT_REQ_COUNTERS = [
  'passed',
  'delayed',
  'rejected',
  'delayed_dry_run',
  'rejected_dry_run',
] as const;
export type LimitReqCounter = (typeof LIMIT_REQ_COUNTERS)[number];
export type LimitReqCounters = Counters<LimitReqCounter>;
export const LIMIT_REQ: CounterFamily<LimitReqCounter> = { kind: 'limit_req', fields: LIMIT_REQ_COUNTERS };
/** Each counter's place in a zone's {@link LimitReqZone.counts}. */
export const PASSED = 0;
export const DELAYED = 1;
export const REJECTED = 2;
export const DELAYED_DRY_RUN = 3;
export const REJECTED_DRY_RUN = 4;

export class LimitReqZone {
  readonly name: string;
  readonly key: ComplexValue;
  readonly sizeBytes: number;
  /** Requests per second × 1000 (`1r/m` → 16). Mutable: a reload with a new `rate=` keeps the state. */
  rateMilli: number;
  readonly table: StateTable;
  /** The zone's counters, every thread's counts summed (read-only). */
  readonly counters: Readonly<LimitReqCounters>;
  /** This thread's counts, in the order of {@link LIMIT_REQ_COUNTERS}: `counts[PASSED]++`. */
  readonly counts: Float64Array;
  readonly #counterSlices: CounterSlices<LimitReqCounter>;
  /** The node a non-last lookup left pending for `commit` (nginx's `ctx->node`). */
  pending = NONE;
  /** Would-be excess of the last lookup (nginx's `*ep`), milli-requests. */
  lastExcessMilli = 0;
  /** The cluster-wide state of a `sync` zone; null for a zone of this replica alone. */
  readonly sync: ZoneSync | null;

  /**
   * `shared`: the memory another worker's zone {@link share}d (the same zone, as configured
   * there): this zone works on that state, and counts in the attachment's counter slice.
   */
  constructor(
    name: string,
    key: ComplexValue,
    sizeBytes: number,
    rateMilli: number,
    sync = false,
    shared?: ZoneAttachment,
  ) {
    if (sizeBytes < MIN_ZONE_BYTES) throw new RangeError(`zone "${name}" is too small`);
    this.name = name;
    this.key = key;
    this.sizeBytes = sizeBytes;
    this.rateMilli = rateMilli;
    this.table =
      shared === undefined
        ? new StateTable(sizeBytes, sync ? SYNC_NODE_BYTES : 0)
        : StateTable.attach(shared.memory.state, shared.slice + 1);
    if (this.table.sizeBytes !== sizeBytes) {
      throw new RangeError(`zone "${name}": the shared state is of a zone of another size`);
    }
    if (sync !== (shared?.memory.sync !== undefined) && shared !== undefined) {
      throw new RangeError(`zone "${name}": the shared state is of a zone ${sync ? 'without' : 'with'} sync`);
    }
    this.sync = sync ? new ZoneSync(this.table.maxNodes, shared?.memory.sync) : null;
    this.#counterSlices = new CounterSlices(LIMIT_REQ_COUNTERS, shared?.memory.counters, shared?.slice);
    this.counters = this.#counterSlices.counters;
    this.counts = this.#counterSlices.own;
  }

  /**
   * The zone's state and counters, for the zones of other workers to attach to (postMessage it);
   * from now on this zone takes the lock too.
   */
  share(): SharedZoneMemory {
    const memory = { state: this.table.share(), counters: this.#counterSlices.memory };
    return this.sync === null ? memory : { ...memory, sync: this.sync.memory };
  }

  /**
   * The thread that counted in `slice` is gone: opens the zone's lock if it died holding it (nginx's
   * master does so for a worker that exits holding a zone's mutex). Whether it did.
   */
  forceUnlock(slice: number): boolean {
    return this.table.forceUnlock(slice + 1);
  }

  /**
   * `ngx_http_limit_req_lookup`: check `key` against `burstMilli`; the last limit of a location
   * (`account`) commits, earlier ones leave the node pending (and pinned). Sets {@link lastExcessMilli}.
   */
  lookup(key: string, nowMs: number, burstMilli: number, account: boolean): LookupCode {
    const table = this.table;
    if (!table.shared) return this.lookupLocked(key, nowMs, burstMilli, account);
    table.lock();
    try {
      return this.lookupLocked(key, nowMs, burstMilli, account);
    } finally {
      table.unlock();
    }
  }

  private lookupLocked(key: string, nowMs: number, burstMilli: number, account: boolean): LookupCode {
    const table = this.table;
    const sync = this.sync;
    const node = table.find(key);
    table.touch(node);
    if (node !== NONE) {
      if (sync !== null) sync.seen(node, nowMs);
      // elapsedMs written out: a call here is not inlined when the zone was optimized while it mostly
      // created nodes (the found path had no weight then), and a decision pays for the call.
      let ms = nowMs - table.records[node * 4 + 1]!;
      if (ms < 0) ms = ms < -60000 ? 1 : 0;
      const cost = sync === null ? 1000 : sync.costMilli(node, nowMs);
      let excess = table.records[node * 4]! - Math.floor((this.rateMilli * ms) / 1000) + cost;
      if (excess < 0) excess = 0;
      this.lastExcessMilli = excess;
      if (excess > burstMilli) {
        // A synced zone cut off from the store long enough holds no share: the log says what the
        // node holds.
        if (cost === Number.POSITIVE_INFINITY)
          this.lastExcessMilli = Math.max(
            0,
            table.records[node * 4]! - Math.floor((this.rateMilli * ms) / 1000),
          );
        return LOOKUP_BUSY;
      }
      if (sync !== null) {
        const cluster = sync.clusterExcessMilli(node, nowMs, this.rateMilli);
        if (cluster > burstMilli) {
          // The fleet is in debt: refuse, and take the cluster's excess as this node's own, so its
          // part of the bucket does not drain while the debt does (and admit a burst when it is gone).
          table.records[node * 4] = cluster;
          table.records[node * 4 + 1] = nowMs;
          this.lastExcessMilli = cluster;
          return LOOKUP_BUSY;
        }
      }
      if (account) {
        table.records[node * 4] = excess;
        if (ms !== 0) table.records[node * 4 + 1] = nowMs;
        if (sync !== null) sync.charged(node);
        return LOOKUP_OK;
      }
      table.pin(node);
      this.pending = node;
      return LOOKUP_AGAIN;
    }

    this.lastExcessMilli = 0;
    this.expireLocked(nowMs, 1);
    // A node first seen by a non-last limit is "never accounted" (nginx stores last = 0).
    const lastMs = account ? nowMs : Number.NEGATIVE_INFINITY;
    let created = table.insert(key, 0, lastMs);
    if (created === NONE) {
      this.expireLocked(nowMs, 0);
      created = table.insert(key, 0, lastMs);
      if (created === NONE) return LOOKUP_ERROR;
    }
    if (sync !== null) {
      // A node's first request is free, as in nginx; the store decides whether it is the cluster's
      // first too, and charges it otherwise.
      sync.reset(created);
      sync.seen(created, nowMs);
      if (account) sync.charged(created);
    }
    if (account) return LOOKUP_OK;
    table.pin(created);
    this.pending = created;
    return LOOKUP_AGAIN;
  }

  /**
   * The per-zone step of `ngx_http_limit_req_account`: commit the pending node with a fresh excess and
   * return it (milli-requests), or -1 when this zone has nothing pending.
   */
  commit(nowMs: number): number {
    const node = this.pending;
    if (node === NONE) return -1;
    this.pending = NONE;
    const table = this.table;
    if (!table.shared) return this.commitLocked(node, nowMs);
    table.lock();
    try {
      return this.commitLocked(node, nowMs);
    } finally {
      table.unlock();
    }
  }

  private commitLocked(node: number, nowMs: number): number {
    const table = this.table;
    const sync = this.sync;
    const ms = elapsedMs(nowMs, table.records[node * 4 + 1]!);
    const cost = sync === null ? 1000 : sync.costMilli(node, nowMs);
    let excess = table.records[node * 4]! - Math.floor((this.rateMilli * ms) / 1000) + cost;
    if (excess < 0) excess = 0;
    if (ms !== 0) table.records[node * 4 + 1] = nowMs;
    table.records[node * 4] = excess;
    table.unpin(node);
    if (sync !== null) sync.charged(node);
    return excess;
  }

  /** Releases a pending node without committing (nginx's `ngx_http_limit_req_unlock`). */
  release(): void {
    const node = this.pending;
    if (node === NONE) return;
    this.pending = NONE;
    const table = this.table;
    if (!table.shared) {
      table.unpin(node);
      return;
    }
    table.lock();
    table.unpin(node);
    table.unlock();
  }

  /**
   * `ngx_http_limit_req_expire`: `n = 1` removes up to two LRU-tail nodes idle ≥ 60 s and drained;
   * `n = 0` first evicts the tail unconditionally, then up to two stale ones. A pinned tail stops it:
   * nodes are bumped on lookup, so the ones before are pinned or newer too.
   */
  expire(nowMs: number, n: number): void {
    const table = this.table;
    if (!table.shared) {
      this.expireLocked(nowMs, n);
      return;
    }
    table.lock();
    try {
      this.expireLocked(nowMs, n);
    } finally {
      table.unlock();
    }
  }

  private expireLocked(nowMs: number, n: number): void {
    const table = this.table;
    while (n < 3) {
      const node = table.tail;
      if (node === NONE) return;
      if (table.pinsOf(node) !== 0) return;
      if (n++ !== 0) {
        const last = table.records[node * 4 + 1]!;
        const ms = last === Number.NEGATIVE_INFINITY ? Number.POSITIVE_INFINITY : Math.abs(nowMs - last);
        if (ms < EXPIRE_IDLE_MS) return;
        if (table.records[node * 4]! - (this.rateMilli * ms) / 1000 > 0) return;
      }
      table.remove(node);
    }
  }
}

/** nginx's clamp of `now - last` (1.15.0+): far in the past counts as 1 ms, slightly future as 0. */
function elapsedMs(nowMs: number, lastMs: number): number {
  const ms = nowMs - lastMs;
  if (ms < -60000) return 1;
  if (ms < 0) return 0;
  return ms;
}
