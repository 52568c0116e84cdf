/**
 * The per-zone state table of `limit_req`: one node per distinct key, holding nginx's `excess`
 * (milli-requests) and `last` (ms), kept in an LRU queue, bounded by the zone's `size`.
 *
 * All of it lives in one SharedArrayBuffer (state-layout.ts), so that tables of several workers
 * attached to it ({@link StateTable.attach}) are one zone, as nginx's workers share the zone's memory;
 * a zone nobody attached to is simply not shared. A node is one 32-byte record, so one cache line holds
 * all of it: `excess` and `last` as float64, then its 4-byte key (`$binary_remote_addr` for IPv4, as an
 * int32), its LRU links and a word holding its kind and nginx's `count` (pins) as int32 words, read
 * through two views of the buffer. Clients arrive in no order, so a decision for a client not seen
 * lately misses the index slot and the node's one line. 4-byte keys are found through an
 * open-addressing index (a power of two, Fibonacci hashing) whose slots hold the node and a tag of the
 * key's hash: a probe past another key's slot almost never reads that key's node, so the index can be
 * 7/8 full. An IPv4 state costs {@link IPV4_NODE_BYTES} bytes plus its share of the index (4.6–9.1
 * bytes). Other keys (IPv6, text) keep their bytes in the key heap (text-key-store.ts). Keys are byte
 * strings (one char per byte, 0..255), compared exactly, as nginx compares raw bytes. Every byte
 * allocated is charged to the zone's `size` (zone-size.ts), so a zone never holds more than it. A node
 * keeps its id for its life (synced zones keep per-node state by id, workers their pending node).
 * Nothing here locks: the zone takes the lock around what it does (limit-req-zone.ts).
 */

import { forceUnlockZone, lockZone, unlockZone } from '../zone-lock.ts';
import { Int32KeyIndex, packI32 } from './int32-key-index.ts';
import { initialCapacity, RecordAllocator } from './record-allocator.ts';
import {
  COUNT,
  EXTRA_NODE_BYTES,
  HEAD,
  HEADER_BYTES,
  HEADER_WORDS,
  INT32_KEYS,
  KEY,
  KIND,
  LOCK,
  NEXT,
  NODE_WORDS,
  PREV,
  RECORD_F64S,
  SIZE_BYTES,
  SLOT_COUNT,
  stateLayout,
  TAIL,
  USED_BYTES,
} from './state-layout.ts';
import { TextKeyStore } from './text-key-store.ts';
import {
  IPV4_NODE_BYTES,
  indexHasRoom,
  keyStateBytes,
  maxIpv4Nodes,
  SLOT_BYTES,
  slotsFor,
  stateBytes,
  ZONE_HEADER_BYTES,
} from './zone-size.ts';

const NIL = -1;
const KIND_MASK = 3;
const FREE_NODE = 0;
const INT32_NODE = 1;
const TEXT_NODE = 2;
const ONE_PIN = 4;

/** Sharing is refused for tables whose nodes carry state outside the buffer. */

export class StateTable {
  /** The zone's `size`. */
  readonly sizeBytes: number;
  /** Bytes available for nodes and index: `size` minus the zone header. */
  readonly budgetBytes: number;
  /**
   * The node records as float64s: `excess` at 4·node, `last` at 4·node + 1. `last` is -Infinity for a
   * node created by a non-last limit and never committed.
   */
  readonly records: Float64Array;

  readonly #buffer: SharedArrayBuffer;
  #shared: boolean;
  /** Who this table's thread is when it holds the lock (its counter slice + 1). */
  readonly #holder: number;
  /** The header's int32 words (the lock, the queue's ends, counts) and float64 words (byte counters). */
  private readonly header: Int32Array;
  private readonly headerF64: Float64Array;
  /** The same records as int32 words; the index's slots are the top words of the same region. */
  private readonly words: Int32Array;
  private readonly index: Int32KeyIndex;
  private readonly text: TextKeyStore;
  private readonly allocator: RecordAllocator;
  /** Bytes each node costs beyond the table's own (what a synced zone keeps per node), charged too. */
  private readonly extraNodeBytes: number;
  /** The most nodes the zone's size holds (all with 4-byte keys): node numbers are below it. */
  readonly maxNodes: number;

  /** A new table; given `attachTo` ({@link attach}), one on that state, locking it as `holder`. */
  constructor(sizeBytes: number, extraNodeBytes = 0, attachTo?: SharedArrayBuffer, holder = 1) {
    this.sizeBytes = sizeBytes;
    this.#holder = holder;
    this.budgetBytes = Math.max(0, sizeBytes - ZONE_HEADER_BYTES);
    this.extraNodeBytes = extraNodeBytes;
    const maxNodes = Math.max(1, maxIpv4Nodes(this.budgetBytes, IPV4_NODE_BYTES + extraNodeBytes));
    this.maxNodes = maxNodes;
    const initialSlots = slotsFor(initialCapacity(maxNodes));
    const layout = stateLayout(this.budgetBytes, initialSlots * SLOT_BYTES + IPV4_NODE_BYTES);
    const buffer = attachTo ?? new SharedArrayBuffer(layout.totalBytes);
    if (buffer.byteLength !== layout.totalBytes)
      throw new RangeError('not the state buffer of this zone size');
    this.#buffer = buffer;
    this.#shared = attachTo !== undefined;
    this.header = new Int32Array(buffer, 0, HEADER_WORDS);
    this.headerF64 = new Float64Array(buffer, 0, HEADER_BYTES / 8);
    this.records = new Float64Array(buffer, layout.nodesOffset, layout.nodesBytes / 8);
    this.words = new Int32Array(buffer, layout.nodesOffset, layout.nodesBytes / 4);
    this.allocator = new RecordAllocator(this.header, this.words, this.budgetBytes, maxNodes);
    this.index = new Int32KeyIndex(this.header, this.words, this.budgetBytes);
    this.text = new TextKeyStore(buffer, layout, this.header, this.words);
    if (attachTo !== undefined) return;
    const header = this.header;
    header[HEAD] = NIL;
    header[TAIL] = NIL;
    this.allocator.reset();
    this.index.clear(initialSlots);
    header[EXTRA_NODE_BYTES] = extraNodeBytes;
    this.headerF64[SIZE_BYTES] = sizeBytes;
    this.headerF64[USED_BYTES] = initialSlots * SLOT_BYTES;
  }

  /**
   * Another table on the state of the one that {@link share}d `buffer`, in this worker or another
   * (the buffer can be posted to a worker): both see one zone. Its zone takes the lock.
   */
  static attach(buffer: SharedArrayBuffer, holder: number): StateTable {
    const extraNodeBytes = new Int32Array(buffer, 0, HEADER_WORDS)[EXTRA_NODE_BYTES]!;
    const sizeBytes = new Float64Array(buffer, 0, HEADER_BYTES / 8)[SIZE_BYTES]!;
    return new StateTable(sizeBytes, extraNodeBytes, buffer, holder);
  }

  /** The buffer, to {@link attach} other tables to; from now on this table is shared too. */
  share(): SharedArrayBuffer {
    this.#shared = true;
    return this.#buffer;
  }

  /** Whether other tables may use this state: its zone then works under {@link lock}. */
  get shared(): boolean {
    return this.#shared;
  }

  /** Takes the zone's lock: a shared table is used only while it holds it, and catches up then. */
  lock(): void {
    lockZone(this.header, LOCK, this.#holder);
    this.index.refresh();
  }

  unlock(): void {
    unlockZone(this.header, LOCK);
  }

  /** Opens the lock if `holder`, a thread that is gone, held it; whether it did. */
  forceUnlock(holder: number): boolean {
    return forceUnlockZone(this.header, LOCK, holder);
  }

  /** Bytes charged: every node, and the index as allocated. */
  get usedBytes(): number {
    return this.headerF64[USED_BYTES]!;
  }

  get count(): number {
    return this.header[COUNT]!;
  }

  /** LRU queue: head is most recently used. */
  get head(): number {
    return this.header[HEAD]!;
  }

  get tail(): number {
    return this.header[TAIL]!;
  }

  /** The node holding `key`, or -1. */
  find(key: string): number {
    return key.length === 4 ? this.index.find(packI32(key)) : this.text.find(key);
  }

  /**
   * Moves a node to the MRU head (nginx bumps on every lookup, even a rejected one); -1 is a no-op, so
   * that a lookup calls this unconditionally. The moves are written out here, not called: a call on
   * the found path is not inlined when the zone's lookup was optimized while it mostly created nodes.
   */
  touch(node: number): void {
    const header = this.header;
    const head = header[HEAD]!;
    if (node === head || node === NIL) return;
    const words = this.words;
    const at = node * NODE_WORDS;
    const prev = words[at + PREV]!; // not NIL: only the head has none
    const next = words[at + NEXT]!;
    words[prev * NODE_WORDS + NEXT] = next;
    if (next !== NIL) words[next * NODE_WORDS + PREV] = prev;
    else header[TAIL] = prev;
    words[at + PREV] = NIL;
    words[at + NEXT] = head;
    words[head * NODE_WORDS + PREV] = node;
    header[HEAD] = node;
  }

  /** Whether a node for `key` fits in the zone now (its bytes, and the index growth it needs). */
  hasRoomFor(key: string): boolean {
    const indexGrowth = this.indexGrowthBytes(key);
    if (this.usedBytes + this.nodeBytes(key) + indexGrowth > this.budgetBytes) return false;
    // Records allocated ahead of use must still fit beside the grown index.
    return indexGrowth === 0 || this.allocatedBytes() + indexGrowth <= this.budgetBytes;
  }

  /** The key a node holds (a byte string). */
  keyOf(node: number): string {
    if ((this.words[node * NODE_WORDS + KIND]! & KIND_MASK) === TEXT_NODE) return this.text.keyOf(node);
    const k = this.words[node * NODE_WORDS + KEY]!;
    return String.fromCharCode(k >>> 24, (k >>> 16) & 0xff, (k >>> 8) & 0xff, k & 0xff);
  }

  /** Whether `node` is in use (not freed since it was handed out). */
  isLive(node: number): boolean {
    return (
      this.allocator.wasHandedOut(node) && (this.words[node * NODE_WORDS + KIND]! & KIND_MASK) !== FREE_NODE
    );
  }

  /** Allocates a node for `key` at the MRU head, or returns -1 when the zone has no room left. */
  insert(key: string, excessMilli: number, lastMs: number): number {
    if (!this.hasRoomFor(key)) return NIL;
    const header = this.header;
    if (this.indexGrowthBytes(key) !== 0) this.rehash(header[SLOT_COUNT]! * 2);
    const node = this.allocator.alloc();
    this.headerF64[USED_BYTES]! += this.nodeBytes(key);
    header[COUNT]!++;
    this.records[node * RECORD_F64S] = excessMilli;
    this.records[node * RECORD_F64S + 1] = lastMs;
    if (key.length === 4) {
      const k = packI32(key);
      this.words[node * NODE_WORDS + KEY] = k;
      this.words[node * NODE_WORDS + KIND] = INT32_NODE;
      this.index.insert(k, node);
      header[INT32_KEYS]!++;
    } else {
      this.words[node * NODE_WORDS + KIND] = TEXT_NODE;
      this.text.add(node, key);
    }
    this.linkHead(node);
    return node;
  }

  /** Removes a node from the queue and the index and frees its bytes (the index keeps its size). */
  remove(node: number): void {
    this.unlink(node);
    const words = this.words;
    const header = this.header;
    if ((words[node * NODE_WORDS + KIND]! & KIND_MASK) === INT32_NODE) {
      this.index.delete(node);
      header[INT32_KEYS]!--;
      this.headerF64[USED_BYTES]! -= IPV4_NODE_BYTES + this.extraNodeBytes;
    } else {
      this.headerF64[USED_BYTES]! -= keyStateBytes(this.text.lengthOf(node)) + this.extraNodeBytes;
      this.text.delete(node);
    }
    header[COUNT]!--;
    words[node * NODE_WORDS + KIND] = FREE_NODE;
    this.allocator.free(node);
  }

  /** The next node towards the LRU tail, or -1. */
  nextOf(node: number): number {
    return this.words[node * NODE_WORDS + NEXT]!;
  }

  /** nginx's `excess` of a node, milli-requests. */
  excessOf(node: number): number {
    return this.records[node * RECORD_F64S]!;
  }

  /** nginx's `last` of a node, ms. */
  lastOf(node: number): number {
    return this.records[node * RECORD_F64S + 1]!;
  }

  /** nginx's `count` of a node: the pending lookups that keep `expire` from removing it. */
  pinsOf(node: number): number {
    return this.words[node * NODE_WORDS + KIND]! >> 2;
  }

  pin(node: number): void {
    this.words[node * NODE_WORDS + KIND]! += ONE_PIN;
  }

  unpin(node: number): void {
    this.words[node * NODE_WORDS + KIND]! -= ONE_PIN;
  }

  /** Bytes of records and index the budget is charged for ahead of use (for the density benchmark). */
  allocatedBytes(): number {
    return this.allocator.capacity * IPV4_NODE_BYTES + this.header[SLOT_COUNT]! * SLOT_BYTES;
  }

  private nodeBytes(key: string): number {
    return stateBytes(key) + this.extraNodeBytes;
  }

  /** Extra index bytes inserting `key` needs: the index doubles before it is more than 7/8 full. */
  private indexGrowthBytes(key: string): number {
    const slotCount = this.header[SLOT_COUNT]!;
    return key.length === 4 && !indexHasRoom(this.header[INT32_KEYS]!, slotCount)
      ? slotCount * SLOT_BYTES
      : 0;
  }

  /** Grows the index down into the free room below it and rebuilds it from the queue. */
  private rehash(slotCount: number): void {
    this.headerF64[USED_BYTES]! += (slotCount - this.header[SLOT_COUNT]!) * SLOT_BYTES;
    this.index.clear(slotCount);
    for (let node = this.header[HEAD]!; node !== NIL; node = this.nextOf(node)) {
      if ((this.words[node * NODE_WORDS + KIND]! & KIND_MASK) === INT32_NODE) {
        this.index.insert(this.words[node * NODE_WORDS + KEY]!, node);
      }
    }
  }

  private linkHead(node: number): void {
    const words = this.words;
    const header = this.header;
    const head = header[HEAD]!;
    words[node * NODE_WORDS + PREV] = NIL;
    words[node * NODE_WORDS + NEXT] = head;
    if (head !== NIL) words[head * NODE_WORDS + PREV] = node;
    header[HEAD] = node;
    if (header[TAIL] === NIL) header[TAIL] = node;
  }

  private unlink(node: number): void {
    const words = this.words;
    const prev = words[node * NODE_WORDS + PREV]!;
    const next = words[node * NODE_WORDS + NEXT]!;
    if (prev !== NIL) words[prev * NODE_WORDS + NEXT] = next;
    else this.header[HEAD] = next;
    if (next !== NIL) words[next * NODE_WORDS + PREV] = prev;
    else this.header[TAIL] = prev;
  }
}
