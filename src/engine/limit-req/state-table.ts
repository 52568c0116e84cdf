/**
 * The per-zone state table of `limit_req`: one node per distinct key, holding nginx's `excess`
 * (milli-requests) and `last` (ms), kept in an LRU queue, bounded by the zone's `size`.
 *
 * Layout is struct-of-arrays (typed arrays), not a Map of objects: a 4-byte key (`$binary_remote_addr`
 * for IPv4) is stored as a uint32 in an open-addressing hash table, so an IPv4 state costs
 * {@link IPV4_STATE_BYTES} bytes. Other keys (IPv6, text) are indexed by a `Map<string, node>`.
 * Keys are byte strings (one char per byte, 0..255), compared exactly, as nginx compares raw bytes.
 */

/** Accounted bytes of one IPv4 node: key 4 + excess 8 + last 8 + LRU links 8 + hash slots 8 (load ≤ 0.5). */
export const IPV4_STATE_BYTES = 36;
/** Accounted bytes of a node with a non-4-byte key, plus the key bytes rounded up to 8. */
export const KEYED_STATE_BYTES = 64;
/** nginx refuses zones smaller than 8 pages. */
export const MIN_ZONE_BYTES = 8 * 4096;
/** Per-zone header accounted against `size` (nginx: slab pool header + pages for its bookkeeping). */
export const ZONE_HEADER_BYTES = 1024;

const NIL = -1;
const INITIAL_NODES = 256;

/** Bytes a node with this key costs against the zone size. */
export function stateBytes(key: string): number {
  return key.length === 4 ? IPV4_STATE_BYTES : KEYED_STATE_BYTES + ((key.length + 7) & ~7);
}

export class StateTable {
  /** Bytes available for nodes: `size` minus the zone header. */
  readonly budgetBytes: number;
  usedBytes = 0;
  count = 0;

  /** Node fields. `last` is -Infinity for a node created by a non-last limit and never committed. */
  excess: Float64Array;
  last: Float64Array;
  prev: Int32Array;
  next: Int32Array;
  keyU32: Uint32Array;
  /** Key of a node that is not 4 bytes long; `undefined` for uint32-keyed nodes. */
  keyText: (string | undefined)[] = [];

  /** LRU queue: head is most recently used. */
  head = NIL;
  tail = NIL;

  private freeList: number[] = [];
  private highWater = 0;

  /** Open addressing for uint32 keys: slot → node + 1 (0 = empty); two slots per node. */
  private slots: Int32Array;
  private slotCount: number;
  private readonly byText = new Map<string, number>();

  constructor(sizeBytes: number) {
    this.budgetBytes = Math.max(0, sizeBytes - ZONE_HEADER_BYTES);
    const nodes = INITIAL_NODES;
    this.excess = new Float64Array(nodes);
    this.last = new Float64Array(nodes);
    this.prev = new Int32Array(nodes);
    this.next = new Int32Array(nodes);
    this.keyU32 = new Uint32Array(nodes);
    this.slots = new Int32Array(nodes * 2);
    this.slotCount = nodes * 2;
  }

  /** The node holding `key`, or -1. */
  find(key: string): number {
    if (key.length !== 4) return this.byText.get(key) ?? NIL;
    const k = packU32(key);
    const slots = this.slots;
    const count = this.slotCount;
    const keys = this.keyU32;
    for (let slot = home(k, count); ; slot = slot + 1 === count ? 0 : slot + 1) {
      const entry = slots[slot]!;
      if (entry === 0) return NIL;
      if (keys[entry - 1] === k) return entry - 1;
    }
  }

  /** Allocates a node for `key` at the MRU head, or returns -1 when the zone has no room left. */
  insert(key: string, excessMilli: number, lastMs: number): number {
    const bytes = stateBytes(key);
    if (this.usedBytes + bytes > this.budgetBytes) return NIL;
    const node = this.allocNode();
    this.usedBytes += bytes;
    this.count++;
    this.excess[node] = excessMilli;
    this.last[node] = lastMs;
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

  /** Removes a node from the queue and the index and frees its bytes. */
  remove(node: number): void {
    this.unlink(node);
    const text = this.keyText[node];
    if (text === undefined) {
      this.slotDelete(this.keyU32[node]!);
      this.usedBytes -= IPV4_STATE_BYTES;
    } else {
      this.byText.delete(text);
      this.keyText[node] = undefined;
      this.usedBytes -= stateBytes(text);
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
    return (
      this.excess.byteLength +
      this.last.byteLength +
      this.prev.byteLength +
      this.next.byteLength +
      this.keyU32.byteLength +
      this.slots.byteLength
    );
  }

  private allocNode(): number {
    const reused = this.freeList.pop();
    if (reused !== undefined) return reused;
    if (this.highWater === this.excess.length) this.grow();
    return this.highWater++;
  }

  /** Doubles node storage, but never beyond what the zone budget can hold. */
  private grow(): void {
    const maxNodes = Math.max(INITIAL_NODES, Math.floor(this.budgetBytes / IPV4_STATE_BYTES) + 1);
    const nodes = Math.min(this.excess.length * 2, maxNodes);
    this.excess = growArray(this.excess, new Float64Array(nodes));
    this.last = growArray(this.last, new Float64Array(nodes));
    this.prev = growArray(this.prev, new Int32Array(nodes));
    this.next = growArray(this.next, new Int32Array(nodes));
    this.keyU32 = growArray(this.keyU32, new Uint32Array(nodes));
    this.rehash(nodes * 2);
  }

  private rehash(slotCount: number): void {
    this.slots = new Int32Array(slotCount);
    this.slotCount = slotCount;
    for (let node = this.head; node !== NIL; node = this.next[node]!) {
      if (this.keyText[node] === undefined) this.slotInsert(this.keyU32[node]!, node);
    }
  }

  private slotInsert(k: number, node: number): void {
    const count = this.slotCount;
    let slot = home(k, count);
    while (this.slots[slot] !== 0) slot = slot + 1 === count ? 0 : slot + 1;
    this.slots[slot] = node + 1;
  }

  /** Linear-probing delete with backward shift, so no tombstones accumulate. */
  private slotDelete(k: number): void {
    const slots = this.slots;
    const count = this.slotCount;
    const keys = this.keyU32;
    const next = (slot: number): number => (slot + 1 === count ? 0 : slot + 1);
    let slot = home(k, count);
    while (slots[slot] !== 0 && keys[slots[slot]! - 1] !== k) slot = next(slot);
    if (slots[slot] === 0) return;
    let hole = slot;
    for (let probe = next(hole); slots[probe] !== 0; probe = next(probe)) {
      const want = home(keys[slots[probe]! - 1]!, count);
      // Move the entry back if its home is not cyclically within (hole, probe].
      const inRange = hole <= probe ? want > hole && want <= probe : want > hole || want <= probe;
      if (!inRange) {
        slots[hole] = slots[probe]!;
        hole = probe;
      }
    }
    slots[hole] = 0;
  }

  private linkHead(node: number): void {
    this.prev[node] = NIL;
    this.next[node] = this.head;
    if (this.head !== NIL) this.prev[this.head] = node;
    this.head = node;
    if (this.tail === NIL) this.tail = node;
  }

  private unlink(node: number): void {
    const p = this.prev[node]!;
    const n = this.next[node]!;
    if (p !== NIL) this.next[p] = n;
    else this.head = n;
    if (n !== NIL) this.prev[n] = p;
    else this.tail = p;
  }
}

function packU32(key: string): number {
  return (
    ((key.charCodeAt(0) << 24) | (key.charCodeAt(1) << 16) | (key.charCodeAt(2) << 8) | key.charCodeAt(3)) >>>
    0
  );
}

/** The home slot of a key: a mixed 32-bit hash scaled onto `count` slots (no power-of-two waste). */
function home(k: number, count: number): number {
  const h = Math.imul(k ^ (k >>> 16), 0x45d9f3b) >>> 0;
  return Math.floor((h * count) / 4294967296);
}

function growArray<T extends Float64Array | Int32Array | Uint32Array>(from: T, to: T): T {
  to.set(from);
  return to;
}
