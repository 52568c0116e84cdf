/**
 * One `limit_conn_zone`: per key, the requests in progress (ngx_http_limit_conn_module.c). A key's
 * node lives while its count is above zero and is charged against the zone's `size` as nginx's slab
 * allocator charges it: the tree node's 32 bytes up to `color`, 4 of count and length, the key, rounded
 * up to a power of two — out of the pages a slab pool leaves after its bookkeeping.
 *
 * The zone's state lives in one SharedArrayBuffer (zone-memory.ts), its counters in another
 * (counter-slices.ts): zone objects of other threads built on the memory it shares see one zone, as
 * nginx's workers do, and take its lock (zone-lock.ts) around what nginx does under `shpool->mutex`:
 * the lookup, the count's check and change, the node's allocation and its freeing. The header's
 * totals are written under the lock too and read without it (a 32-bit word of a SharedArrayBuffer
 * never tears: a reader sees it before or after). Pure.
 */
import type { ComplexValue } from '../complex-value.ts';
import { CounterSlices } from '../counter-slices.ts';
import type { CounterFamily, Counters } from '../counters.ts';
import type { SharedZoneMemory, ZoneAttachment } from '../shared-zone.ts';
import { forceUnlockZone, lockZone, unlockZone } from '../zone-lock.ts';
import { type ConnNode, ConnTable, hashConnKey, MAX_KEY_BYTES } from './conn-table.ts';
import {
  CHARGE_UNIT_BYTES,
  fitsLayout,
  IN_PROGRESS_WORD,
  KEYS_WORD,
  LOCK_WORD,
  mapZoneMemory,
  USED_UNITS_WORD,
  zoneLayout,
} from './zone-memory.ts';

export type { ConnNode } from './conn-table.ts';

/** NGINX Plus's `/api/9/http/limit_conns/{zone}` fields, in the API's order. */
export const LIMIT_CONN_COUNTERS = ['passed', 'rejected', 'rejected_dry_run'] as const;
export type LimitConnCounter = (typeof LIMIT_CONN_COUNTERS)[number];
export type LimitConnCounters = Counters<LimitConnCounter>;
export const LIMIT_CONN: CounterFamily<LimitConnCounter> = {
  kind: 'limit_conn',
  fields: LIMIT_CONN_COUNTERS,
};
/** Each counter's place in a zone's {@link LimitConnZone.counts}. */
export const PASSED = 0;
export const REJECTED = 1;
export const REJECTED_DRY_RUN = 2;

/** `offsetof(ngx_rbtree_node_t, color) + offsetof(ngx_http_limit_conn_node_t, data)` on 64-bit. */
const NODE_BYTES = 36;
const PAGE_BYTES = 4096;
/** A slab pool's own share of a zone: a page descriptor per page and its header (as keyval zones). */
const PAGE_DESCRIPTOR_BYTES = 24;
const POOL_HEADER_BYTES = 1024;

/** The slab chunk a node for a key of `keyBytes` takes. */
export function limitConnNodeBytes(keyBytes: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(8, NODE_BYTES + keyBytes)));
}

/** What acquiring a slot gave: the key's node (counted), the key at its limit already, or no room. */
export type AcquireResult = ConnNode | 'busy' | 'full';

export class LimitConnZone {
  readonly name: string;
  readonly key: ComplexValue;
  readonly sizeBytes: number;
  /** The zone's counters, every thread's counts summed (read-only). */
  readonly counters: Readonly<LimitConnCounters>;
  /** This thread's counts, in the order of {@link LIMIT_CONN_COUNTERS}: `counts[PASSED]++`. */
  readonly counts: Float64Array;
  readonly #counterSlices: CounterSlices<LimitConnCounter>;
  readonly #memory: SharedArrayBuffer;
  readonly #header: Int32Array;
  /** Other threads attached: take the lock (a zone nobody attached to takes none). */
  #shared: boolean;
  /** Who this object's thread is when it holds the lock (its counter slice + 1). */
  readonly #holder: number;
  readonly #table: ConnTable;
  readonly #budgetBytes: number;

  /**
   * A new zone, or, given the memory of a zone of the same size another thread {@link share}d, that
   * zone, counted in the attachment's counter slice.
   */
  constructor(name: string, key: ComplexValue, sizeBytes: number, shared?: ZoneAttachment) {
    const sharedMemory = shared?.memory.state;
    this.name = name;
    this.key = key;
    this.sizeBytes = sizeBytes;
    this.#budgetBytes =
      sizeBytes - Math.ceil(sizeBytes / PAGE_BYTES) * PAGE_DESCRIPTOR_BYTES - POOL_HEADER_BYTES;
    const layout = zoneLayout(sizeBytes, this.#budgetBytes);
    if (sharedMemory !== undefined && !fitsLayout(sharedMemory, layout))
      throw new RangeError(
        `shared memory of ${sharedMemory.byteLength} bytes was not mapped for ` +
          `limit_conn_zone "${name}" of ${sizeBytes} bytes`,
      );
    this.#memory = sharedMemory ?? mapZoneMemory(layout);
    this.#shared = sharedMemory !== undefined;
    this.#holder = (shared?.slice ?? 0) + 1;
    this.#header = new Int32Array(this.#memory, 0, IN_PROGRESS_WORD + 1);
    this.#table = new ConnTable(this.#memory, layout);
    this.#counterSlices = new CounterSlices(LIMIT_CONN_COUNTERS, shared?.memory.counters, shared?.slice);
    this.counters = this.#counterSlices.counters;
    this.counts = this.#counterSlices.own;
  }

  /**
   * The zone's state, for the zones of other threads to attach to (postMessage it to their
   * `new LimitConnZone(…, sharedMemory)`); from now on this zone takes the lock too.
   */
  share(): SharedZoneMemory {
    this.#shared = true;
    return { state: this.#memory, counters: this.#counterSlices.memory };
  }

  /**
   * The thread that counted in `slice` is gone: opens the zone's lock if it died holding it (nginx's
   * master does so for a worker that exits holding a zone's mutex). Whether it did.
   */
  forceUnlock(slice: number): boolean {
    return forceUnlockZone(this.#header, LOCK_WORD, slice + 1);
  }

  #lock(): void {
    if (this.#shared) lockZone(this.#header, LOCK_WORD, this.#holder);
  }

  #unlock(): void {
    if (this.#shared) unlockZone(this.#header, LOCK_WORD);
  }

  /** One more request for `key` (a byte string, ≤ 255 bytes), unless it has `limit` in progress already. */
  acquire(key: string, limit: number): AcquireResult {
    if (key.length > MAX_KEY_BYTES) throw new RangeError(`a limit_conn key of ${key.length} bytes`);
    const hash = hashConnKey(key);
    const header = this.#header;
    const table = this.#table;
    this.#lock();
    try {
      let node = table.lookup(key, hash);
      if (node !== 0) {
        const conn = table.conn(node);
        if (conn >= limit) return 'busy';
        table.setConn(node, conn + 1);
      } else {
        const bytes = limitConnNodeBytes(key.length);
        if (header[USED_UNITS_WORD]! * CHARGE_UNIT_BYTES + bytes > this.#budgetBytes) return 'full';
        node = table.insert(key, hash);
        if (node === 0) return 'full'; // never: the slots are counted to hold every node the budget admits
        header[USED_UNITS_WORD]! += bytes / CHARGE_UNIT_BYTES;
        header[KEYS_WORD]! += 1;
      }
      header[IN_PROGRESS_WORD]! += 1;
      return node;
    } finally {
      this.#unlock();
    }
  }

  /** A request counted on `node` is over; the node goes when the last one is. */
  release(node: ConnNode): void {
    const header = this.#header;
    const table = this.#table;
    this.#lock();
    try {
      header[IN_PROGRESS_WORD]! -= 1;
      const conn = table.conn(node) - 1;
      if (conn > 0) {
        table.setConn(node, conn);
        return;
      }
      header[USED_UNITS_WORD]! -= limitConnNodeBytes(table.keyLength(node)) / CHARGE_UNIT_BYTES;
      header[KEYS_WORD]! -= 1;
      table.delete(node);
    } finally {
      this.#unlock();
    }
  }

  /** Requests in progress for `key`. */
  inProgress(key: string): number {
    if (key.length > MAX_KEY_BYTES) return 0;
    const hash = hashConnKey(key);
    this.#lock();
    try {
      const node = this.#table.lookup(key, hash);
      return node === 0 ? 0 : this.#table.conn(node);
    } finally {
      this.#unlock();
    }
  }

  /** Keys with requests in progress. */
  get keys(): number {
    return Atomics.load(this.#header, KEYS_WORD);
  }

  /** Requests in progress, every key together (Kubernetes' current in-flight requests, per zone). */
  get requestsInProgress(): number {
    return Atomics.load(this.#header, IN_PROGRESS_WORD);
  }

  /** The bytes charged for the nodes held, out of the zone's size less its slab pool's bookkeeping. */
  get usedBytes(): number {
    return Atomics.load(this.#header, USED_UNITS_WORD) * CHARGE_UNIT_BYTES;
  }
}
