/**
 * The per-zone state table of `limit_req`: one node per distinct key, holding nginx's `excess`
 * (milli-requests) and `last` (ms), kept in an LRU queue, bounded by the zone's `size`.
 *
 * Layout is typed arrays, not a Map of objects. A node is one 32-byte record, so one cache line holds
 * all of it: `excess` and `last` as float64, then its 4-byte key (`$binary_remote_addr` for IPv4, as an
 * int32) and its LRU links as int32 words, read through two views of one buffer. Clients arrive in no
 * order, so a decision for a client not seen lately misses the index slot and the node's one line
 * (with the fields split over arrays, it missed two node lines). 4-byte keys are found through an
 * open-addressing index (a power of two, Fibonacci hashing) whose slots hold the node and a tag of the
 * key's hash: a probe past another key's slot almost never reads that key's node, so the index can be
 * 7/8 full. An IPv4 state costs {@link IPV4_NODE_BYTES} bytes plus its share of the index (4.6–9.1
 * bytes). Other keys (IPv6, text) are indexed by a `Map<string, node>`. Keys are byte strings (one char
 * per byte, 0..255), compared exactly, as nginx compares raw bytes. Every byte allocated is charged to
 * the zone's `size` (zone-size.ts), so a zone never holds more than it. A node keeps its id for its life (synced zones
 * keep per-node state by id).
 */

import {
  IPV4_NODE_BYTES,
  indexHasRoom,
  maxIpv4Nodes,
  SLOT_BYTES,
  slotsFor,
  stateBytes,
  ZONE_HEADER_BYTES,
} from './zone-size.ts';

const NIL = -1;
const INITIAL_NODES = 256;
/** 2^32 / φ, odd: multiplicative (Fibonacci) hashing spreads nearby addresses over the table. */
const FIBONACCI = 0x9e3779b1;
/** Another odd multiplier (murmur3's) for the tag, so that it is not made of the home slot's bits. */
const TAG_MULTIPLIER = 0x85ebca6b;
/** Float64s per record: `excess` at 4·node, `last` at 4·node + 1 (the zone reads them in place). */
const RECORD_F64S = 4;
/** Int32 words per record; the key and the LRU `prev` and `next` follow the two float64s. */
const NODE_WORDS = 8;
const KEY = 4;
const PREV = 5;
const NEXT = 6;

export class StateTable {
  /** Bytes available for nodes and index: `size` minus the zone header. */
  readonly budgetBytes: number;
  /** Bytes charged: every node, and the index as allocated. */
  usedBytes = 0;
  count = 0;

  /**
   * The node records as float64s: `excess` at 4·node, `last` at 4·node + 1. `last` is -Infinity for a
   * node created by a non-last limit and never committed.
   */
  records: Float64Array;

  /** LRU queue: head is most recently used. */
  head = NIL;
  tail = NIL;

  /** The same records as int32 words: key, `prev` and `next` at 8·node + KEY, PREV, NEXT. */
  private words: Int32Array;
  /** Key of a node that is not 4 bytes long; `undefined` for int32-keyed nodes. */
  private keyText: (string | undefined)[] = [];
  private capacity: number;
  /** Node arrays never grow past what the budget could hold (all IPv4, the densest case). */
  private readonly maxNodes: number;
  /** Bytes each node costs beyond the table's own (what a synced zone keeps per node), charged too. */
  private readonly extraNodeBytes: number;
  private freeList: number[] = [];
  private highWater = 0;

  /** Open addressing for int32 keys: slot → tag | node + 1 (0 = empty). */
  private slots: Int32Array;
  /** 32 − log2(slots.length): Fibonacci hashing keeps the top bits of the product. */
  private slotShift: number;
  /** A slot's low bits hold node + 1 (every node id fits: each node costs at least 28 bytes)… */
  private readonly nodeMask: number;
  /** …and its high bits the key's tag. */
  private readonly tagMask: number;
  private int32Keys = 0;
  private readonly byText = new Map<string, number>();

  constructor(sizeBytes: number, extraNodeBytes = 0) {
    this.budgetBytes = Math.max(0, sizeBytes - ZONE_HEADER_BYTES);
    this.extraNodeBytes = extraNodeBytes;
    this.maxNodes = Math.max(1, maxIpv4Nodes(this.budgetBytes, IPV4_NODE_BYTES + extraNodeBytes));
    const nodeBits = Math.min(31, Math.ceil(Math.log2(this.budgetBytes / IPV4_NODE_BYTES + 2)));
    this.nodeMask = 2 ** nodeBits - 1;
    this.tagMask = ~this.nodeMask;
    this.capacity = Math.min(INITIAL_NODES, this.maxNodes);
    this.records = new Float64Array(this.capacity * RECORD_F64S);
    this.words = new Int32Array(this.records.buffer);
    this.slots = new Int32Array(slotsFor(this.capacity));
    this.slotShift = 32 - Math.log2(this.slots.length);
    this.usedBytes = this.slots.byteLength;
  }

  /** The node holding `key`, or -1. */
  find(key: string): number {
    if (key.length !== 4) return this.byText.get(key) ?? NIL;
    const k = packI32(key);
    const slots = this.slots;
    const mask = slots.length - 1;
    const tagMask = this.tagMask;
    const tag = Math.imul(k, TAG_MULTIPLIER) & tagMask;
    for (let slot = Math.imul(k, FIBONACCI) >>> this.slotShift; ; slot = (slot + 1) & mask) {
      const entry = slots[slot]!;
      if (entry === 0) return NIL;
      if ((entry & tagMask) === tag) {
        const node = (entry & this.nodeMask) - 1;
        if (this.words[node * NODE_WORDS + KEY] === k) return node;
      }
    }
  }

  /**
   * Moves a node to the MRU head (nginx bumps on every lookup, even a rejected one); -1 is a no-op, so
   * that a lookup calls this unconditionally. The moves are written out here, not called: a call on
   * the found path is not inlined when the zone's lookup was optimized while it mostly created nodes.
   */
  touch(node: number): void {
    const head = this.head;
    if (node === head || node === NIL) return;
    const words = this.words;
    const at = node * NODE_WORDS;
    const prev = words[at + PREV]!; // not NIL: only the head has none
    const next = words[at + NEXT]!;
    words[prev * NODE_WORDS + NEXT] = next;
    if (next !== NIL) words[next * NODE_WORDS + PREV] = prev;
    else this.tail = prev;
    words[at + PREV] = NIL;
    words[at + NEXT] = head;
    words[head * NODE_WORDS + PREV] = node;
    this.head = node;
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
    const text = this.keyText[node];
    if (text !== undefined) return text;
    const k = this.words[node * NODE_WORDS + KEY]!;
    return String.fromCharCode(k >>> 24, (k >>> 16) & 0xff, (k >>> 8) & 0xff, k & 0xff);
  }

  /** Whether `node` is in use (not freed since it was handed out). */
  isLive(node: number): boolean {
    return node < this.highWater && this.find(this.keyOf(node)) === node;
  }

  /** Allocates a node for `key` at the MRU head, or returns -1 when the zone has no room left. */
  insert(key: string, excessMilli: number, lastMs: number): number {
    if (!this.hasRoomFor(key)) return NIL;
    if (this.indexGrowthBytes(key) !== 0) this.rehash(this.slots.length * 2);
    const node = this.allocNode();
    this.usedBytes += this.nodeBytes(key);
    this.count++;
    this.records[node * RECORD_F64S] = excessMilli;
    this.records[node * RECORD_F64S + 1] = lastMs;
    if (key.length === 4) {
      const k = packI32(key);
      this.words[node * NODE_WORDS + KEY] = k;
      this.keyText[node] = undefined;
      this.slotInsert(k, node);
      this.int32Keys++;
    } else {
      this.keyText[node] = key;
      this.byText.set(key, node);
    }
    this.linkHead(node);
    return node;
  }

  /** Removes a node from the queue and the index and frees its bytes (the index keeps its size). */
  remove(node: number): void {
    this.unlink(node);
    const text = this.keyText[node];
    if (text === undefined) {
      this.slotDelete(node);
      this.int32Keys--;
      this.usedBytes -= IPV4_NODE_BYTES + this.extraNodeBytes;
    } else {
      this.byText.delete(text);
      this.keyText[node] = undefined;
      this.usedBytes -= stateBytes(text) + this.extraNodeBytes;
    }
    this.count--;
    this.freeList.push(node);
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

  /** Bytes of typed arrays and index actually allocated (for the density benchmark). */
  allocatedBytes(): number {
    return this.records.byteLength + this.slots.byteLength;
  }

  private nodeBytes(key: string): number {
    return stateBytes(key) + this.extraNodeBytes;
  }

  /** Extra index bytes inserting `key` needs: the index doubles before it is more than 7/8 full. */
  private indexGrowthBytes(key: string): number {
    return key.length === 4 && !indexHasRoom(this.int32Keys, this.slots.length) ? this.slots.byteLength : 0;
  }

  private allocNode(): number {
    const reused = this.freeList.pop();
    if (reused !== undefined) return reused;
    if (this.highWater === this.capacity) this.grow();
    return this.highWater++;
  }

  /**
   * Doubles node storage up to what an all-IPv4 zone can hold. A zone that mixes in longer keys (charged
   * more per node, but filling the index less) can hold a few more nodes: past the cap, grow by an eighth,
   * never past the records the budget beside the index could hold (every node is charged a record at
   * least, so the node being added always fits).
   */
  private grow(): void {
    const length = this.capacity;
    const mostRecords = Math.floor((this.budgetBytes - this.slots.byteLength) / IPV4_NODE_BYTES);
    this.capacity =
      length < this.maxNodes
        ? Math.min(length * 2, this.maxNodes)
        : Math.min(length + Math.ceil(length / 8), mostRecords);
    this.records = growArray(this.records, new Float64Array(this.capacity * RECORD_F64S));
    this.words = new Int32Array(this.records.buffer);
  }

  private rehash(slotCount: number): void {
    this.usedBytes += (slotCount - this.slots.length) * SLOT_BYTES;
    this.slots = new Int32Array(slotCount);
    this.slotShift = 32 - Math.log2(slotCount);
    for (let node = this.head; node !== NIL; node = this.nextOf(node)) {
      if (this.keyText[node] === undefined) this.slotInsert(this.words[node * NODE_WORDS + KEY]!, node);
    }
  }

  private slotInsert(k: number, node: number): void {
    const mask = this.slots.length - 1;
    let slot = this.home(k);
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = (Math.imul(k, TAG_MULTIPLIER) & this.tagMask) | (node + 1);
  }

  /** Linear-probing delete with backward shift, so no tombstones accumulate. */
  private slotDelete(node: number): void {
    const slots = this.slots;
    const mask = slots.length - 1;
    const next = (slot: number): number => (slot + 1) & mask;
    const homeOf = (entry: number): number =>
      this.home(this.words[((entry & this.nodeMask) - 1) * NODE_WORDS + KEY]!);
    let slot = this.home(this.words[node * NODE_WORDS + KEY]!);
    while (slots[slot] !== 0 && (slots[slot]! & this.nodeMask) !== node + 1) slot = next(slot);
    if (slots[slot] === 0) return;
    let hole = slot;
    for (let probe = next(hole); slots[probe] !== 0; probe = next(probe)) {
      const want = homeOf(slots[probe]!);
      // Move the entry back if its home is not cyclically within (hole, probe].
      const inRange = hole <= probe ? want > hole && want <= probe : want > hole || want <= probe;
      if (!inRange) {
        slots[hole] = slots[probe]!;
        hole = probe;
      }
    }
    slots[hole] = 0;
  }

  /** The home slot of an int32 key. */
  private home(k: number): number {
    return Math.imul(k, FIBONACCI) >>> this.slotShift;
  }

  private linkHead(node: number): void {
    const words = this.words;
    words[node * NODE_WORDS + PREV] = NIL;
    words[node * NODE_WORDS + NEXT] = this.head;
    if (this.head !== NIL) words[this.head * NODE_WORDS + PREV] = node;
    this.head = node;
    if (this.tail === NIL) this.tail = node;
  }

  private unlink(node: number): void {
    const words = this.words;
    const prev = words[node * NODE_WORDS + PREV]!;
    const next = words[node * NODE_WORDS + NEXT]!;
    if (prev !== NIL) words[prev * NODE_WORDS + NEXT] = next;
    else this.head = next;
    if (next !== NIL) words[next * NODE_WORDS + PREV] = prev;
    else this.tail = prev;
  }
}

/** A 4-byte key as an int32 (big-endian, as the address reads). */
function packI32(key: string): number {
  return (key.charCodeAt(0) << 24) | (key.charCodeAt(1) << 16) | (key.charCodeAt(2) << 8) | key.charCodeAt(3);
}

function growArray(from: Float64Array, to: Float64Array): Float64Array {
  to.set(from);
  return to;
}
