/**
 * The per-zone state table of `limit_req`: one node per distinct key, holding nginx's `excess`
 * (milli-requests) and `last` (ms), kept in an LRU queue, bounded by the zone's `size`.
 *
 * Layout is typed arrays, not a Map of objects: `excess` and `last` side by side in one Float64Array,
 * the LRU links side by side in one Int32Array (a node's fields share cache lines, which is what a
 * decision for a client not seen lately pays for), and a 4-byte key (`$binary_remote_addr` for IPv4)
 * stored as a uint32 in an open-addressing hash table, so an IPv4 state costs
 * {@link IPV4_NODE_BYTES} bytes plus its share of the index (a power of two, at most half full: 8–16
 * bytes per state). Other keys (IPv6, text) are indexed by a `Map<string, node>`.
 * Keys are byte strings (one char per byte, 0..255), compared exactly, as nginx compares raw bytes.
 * Every byte allocated is charged to the zone's `size`, so a zone never holds more than it.
 */

/** Bytes of one IPv4 node in the node arrays: key 4 + excess 8 + last 8 + LRU links 8. */
export const IPV4_NODE_BYTES = 28;
/** Accounted bytes of a node with a non-4-byte key, plus the key bytes rounded up to 8. */
export const KEYED_STATE_BYTES = 64;
/** nginx refuses zones smaller than 8 pages. */
export const MIN_ZONE_BYTES = 8 * 4096;
/** Per-zone header accounted against `size` (nginx: slab pool header + pages for its bookkeeping). */
export const ZONE_HEADER_BYTES = 1024;

const NIL = -1;
const INITIAL_NODES = 256;
/** 2^32 / φ, odd: multiplicative (Fibonacci) hashing spreads nearby addresses over the table. */
const FIBONACCI = 0x9e3779b1;
const SLOT_BYTES = 4;

/** Bytes a node with this key costs against the zone size (the uint32 index is charged apart). */
export function stateBytes(key: string): number {
  return key.length === 4 ? IPV4_NODE_BYTES : KEYED_STATE_BYTES + ((key.length + 7) & ~7);
}

/** Index slots for `nodes` uint32 keys: a power of two, at least twice as many (load ≤ 0.5). */
function slotsFor(nodes: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(1, nodes * 2)));
}

/** The most IPv4 nodes (of `nodeBytes` each) whose arrays and index fit in `budgetBytes`. */
function maxIpv4Nodes(budgetBytes: number, nodeBytes: number): number {
  let best = 0;
  for (let slots = 2; slots * SLOT_BYTES < budgetBytes; slots *= 2) {
    const fit = Math.floor((budgetBytes - slots * SLOT_BYTES) / nodeBytes);
    best = Math.max(best, Math.min(slots / 2, fit));
  }
  return best;
}

export class StateTable {
  /** Bytes available for nodes and index: `size` minus the zone header. */
  readonly budgetBytes: number;
  /** Bytes charged: every node, and the uint32 index as allocated. */
  usedBytes = 0;
  count = 0;

  /** Node fields. `last` is -Infinity for a node created by a non-last limit and never committed. */
  /** `excess` at 2·node, `last` at 2·node + 1: one cache line holds both. */
  timing: Float64Array;
  /** LRU `prev` at 2·node, `next` at 2·node + 1. */
  links: Int32Array;
  keyU32: Uint32Array;
  /** Key of a node that is not 4 bytes long; `undefined` for uint32-keyed nodes. */
  keyText: (string | undefined)[] = [];

  /** LRU queue: head is most recently used. */
  head = NIL;
  tail = NIL;

  /** Node arrays never grow past what the budget could hold (all IPv4, the densest case). */
  private readonly maxNodes: number;
  /** Bytes each node costs beyond the table's own (what a synced zone keeps per node), charged too. */
  private readonly extraNodeBytes: number;
  private freeList: number[] = [];
  private highWater = 0;

  /** Open addressing for uint32 keys: slot → node + 1 (0 = empty); a power of two, at most half full. */
  private slots: Int32Array;
  /** 32 − log2(slots.length): Fibonacci hashing keeps the top bits of the product. */
  private slotShift: number;
  private readonly byText = new Map<string, number>();

  constructor(sizeBytes: number, extraNodeBytes = 0) {
    this.budgetBytes = Math.max(0, sizeBytes - ZONE_HEADER_BYTES);
    this.extraNodeBytes = extraNodeBytes;
    this.maxNodes = Math.max(1, maxIpv4Nodes(this.budgetBytes, IPV4_NODE_BYTES + extraNodeBytes));
    const nodes = Math.min(INITIAL_NODES, this.maxNodes);
    this.timing = new Float64Array(nodes * 2);
    this.links = new Int32Array(nodes * 2);
    this.keyU32 = new Uint32Array(nodes);
    this.slots = new Int32Array(slotsFor(nodes));
    this.slotShift = 32 - Math.log2(this.slots.length);
    this.usedBytes = this.slots.byteLength;
  }

  /** The node holding `key`, or -1. */
  find(key: string): number {
    if (key.length !== 4) return this.byText.get(key) ?? NIL;
    const k = packU32(key);
    const slots = this.slots;
    const mask = slots.length - 1;
    const keys = this.keyU32;
    for (let slot = this.home(k); ; slot = (slot + 1) & mask) {
      const entry = slots[slot]!;
      if (entry === 0) return NIL;
      if (keys[entry - 1] === k) return entry - 1;
    }
  }

  /** Whether a node for `key` fits in the zone now (its bytes, and the index growth it needs). */
  hasRoomFor(key: string): boolean {
    return this.usedBytes + this.nodeBytes(key) + this.indexGrowthBytes(key) <= this.budgetBytes;
  }

  /** The key a node holds (a byte string). */
  keyOf(node: number): string {
    const text = this.keyText[node];
    if (text !== undefined) return text;
    const k = this.keyU32[node]!;
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
    this.timing[node * 2] = excessMilli;
    this.timing[node * 2 + 1] = lastMs;
    if (key.length === 4) {
      const k = packU32(key);
      this.keyU32[node] = k;
      this.keyText[node] = undefined;
      this.slotInsert(k, node);
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
      this.slotDelete(this.keyU32[node]!);
      this.usedBytes -= IPV4_NODE_BYTES + this.extraNodeBytes;
    } else {
      this.byText.delete(text);
      this.keyText[node] = undefined;
      this.usedBytes -= stateBytes(text) + this.extraNodeBytes;
    }
    this.count--;
    this.freeList.push(node);
  }

  /** Moves a node to the MRU head (nginx bumps on every lookup, even a rejected one). */
  touch(node: number): void {
    if (this.head === node) return;
    this.unlink(node);
    this.linkHead(node);
  }

  /** Bytes of typed arrays and index actually allocated (for the density benchmark). */
  allocatedBytes(): number {
    return this.timing.byteLength + this.links.byteLength + this.keyU32.byteLength + this.slots.byteLength;
  }

  private nodeBytes(key: string): number {
    return stateBytes(key) + this.extraNodeBytes;
  }

  /** Extra index bytes inserting `key` needs: the index doubles when it would pass half full. */
  private indexGrowthBytes(key: string): number {
    return key.length === 4 && (this.count - this.byText.size + 1) * 2 > this.slots.length
      ? this.slots.byteLength
      : 0;
  }

  private allocNode(): number {
    const reused = this.freeList.pop();
    if (reused !== undefined) return reused;
    if (this.highWater === this.keyU32.length) this.grow();
    return this.highWater++;
  }

  /**
   * Doubles node storage up to what an all-IPv4 zone can hold. A zone that mixes in longer keys (charged
   * more per node, but filling the index less) can hold a few more nodes: past the cap, grow by an eighth.
   */
  private grow(): void {
    const length = this.keyU32.length;
    const nodes =
      length < this.maxNodes ? Math.min(length * 2, this.maxNodes) : length + Math.ceil(length / 8);
    this.timing = growArray(this.timing, new Float64Array(nodes * 2));
    this.links = growArray(this.links, new Int32Array(nodes * 2));
    this.keyU32 = growArray(this.keyU32, new Uint32Array(nodes));
  }

  private rehash(slotCount: number): void {
    this.usedBytes += (slotCount - this.slots.length) * SLOT_BYTES;
    this.slots = new Int32Array(slotCount);
    this.slotShift = 32 - Math.log2(slotCount);
    for (let node = this.head; node !== NIL; node = this.links[node * 2 + 1]!) {
      if (this.keyText[node] === undefined) this.slotInsert(this.keyU32[node]!, node);
    }
  }

  private slotInsert(k: number, node: number): void {
    const mask = this.slots.length - 1;
    let slot = this.home(k);
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.slots[slot] = node + 1;
  }

  /** Linear-probing delete with backward shift, so no tombstones accumulate. */
  private slotDelete(k: number): void {
    const slots = this.slots;
    const keys = this.keyU32;
    const mask = slots.length - 1;
    const next = (slot: number): number => (slot + 1) & mask;
    let slot = this.home(k);
    while (slots[slot] !== 0 && keys[slots[slot]! - 1] !== k) slot = next(slot);
    if (slots[slot] === 0) return;
    let hole = slot;
    for (let probe = next(hole); slots[probe] !== 0; probe = next(probe)) {
      const want = this.home(keys[slots[probe]! - 1]!);
      // Move the entry back if its home is not cyclically within (hole, probe].
      const inRange = hole <= probe ? want > hole && want <= probe : want > hole || want <= probe;
      if (!inRange) {
        slots[hole] = slots[probe]!;
        hole = probe;
      }
    }
    slots[hole] = 0;
  }

  /** The home slot of a uint32 key. */
  private home(k: number): number {
    return Math.imul(k, FIBONACCI) >>> this.slotShift;
  }

  private linkHead(node: number): void {
    const links = this.links;
    links[node * 2] = NIL;
    links[node * 2 + 1] = this.head;
    if (this.head !== NIL) links[this.head * 2] = node;
    this.head = node;
    if (this.tail === NIL) this.tail = node;
  }

  private unlink(node: number): void {
    const links = this.links;
    const p = links[node * 2]!;
    const n = links[node * 2 + 1]!;
    if (p !== NIL) links[p * 2 + 1] = n;
    else this.head = n;
    if (n !== NIL) links[n * 2] = p;
    else this.tail = p;
  }

  /** The next node towards the LRU tail, or -1. */
  nextOf(node: number): number {
    return this.links[node * 2 + 1]!;
  }

  /** nginx's `excess` of a node, milli-requests. */
  excessOf(node: number): number {
    return this.timing[node * 2]!;
  }

  /** nginx's `last` of a node, ms. */
  lastOf(node: number): number {
    return this.timing[node * 2 + 1]!;
  }
}

function packU32(key: string): number {
  return (
    ((key.charCodeAt(0) << 24) | (key.charCodeAt(1) << 16) | (key.charCodeAt(2) << 8) | key.charCodeAt(3)) >>>
    0
  );
}

function growArray<T extends Float64Array | Int32Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
