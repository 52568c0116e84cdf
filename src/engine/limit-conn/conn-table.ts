/**
 * A limit_conn zone's key → node table in its shared memory (nginx's rbtree of
 * `ngx_http_limit_conn_node_t`): an open-addressing hash index, linear probing with backward-shift
 * deletion (no tombstones), over node records in 64-byte slots. A node is its first slot — link, hash,
 * conn, key length and the key's first 48 bytes — and, for a longer key, more slots of 60 key bytes
 * each. A key of n bytes takes 1 + ⌈(n − 48) / 60⌉ slots: never more than the 64-byte units nginx's
 * slab charges its node (≤ 255 bytes: 1, 2, 4, 5 slots against 64, 128, 256, 512 bytes), so what the
 * zone's accounting admits always fits. Callers hold the zone's lock.
 */
import {
  FREE_SLOT_WORD,
  SLOT_BYTES,
  SLOT_WORDS,
  TOUCHED_SLOTS_WORD,
  type ZoneLayout,
} from './zone-memory.ts';

/** A node: the number of its first slot (1-based; 0 is none). */
export type ConnNode = number;

/** Slot words: the next slot of the node, or of the free list (every slot). */
const NEXT = 0;
/** The first slot's words. */
const HASH = 1;
const CONN = 2;
const KEY_LENGTH = 3;
const FIRST_KEY_BYTE = 16;
const NEXT_KEY_BYTE = 4;

/** nginx's `u_char len`: the table holds keys of up to 255 bytes. */
export const MAX_KEY_BYTES = 255;

/** The slots a key of `keyBytes` takes. */
export function slotsForKey(keyBytes: number): number {
  const past = keyBytes - (SLOT_BYTES - FIRST_KEY_BYTE);
  return past <= 0 ? 1 : 1 + Math.ceil(past / (SLOT_BYTES - NEXT_KEY_BYTE));
}

/**
 * A key's hash: FNV-1a, then murmur3's finalizer so the low bits the index uses are mixed. Taken
 * outside the lock, as nginx's crc32.
 */
export function hashConnKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ (key.charCodeAt(i) & 0xff), 0x01000193);
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

export class ConnTable {
  readonly #words: Int32Array;
  readonly #bytes: Uint8Array;
  readonly #indexWord: number;
  readonly #indexMask: number;
  readonly #slotCount: number;
  /** The word of slot 0 (which does not exist), so slot s starts at #slot0Word + s × 16. */
  readonly #slot0Word: number;

  constructor(memory: SharedArrayBuffer, layout: ZoneLayout) {
    this.#words = new Int32Array(memory);
    this.#bytes = new Uint8Array(memory);
    this.#indexWord = layout.indexWord;
    this.#indexMask = layout.indexEntries - 1;
    this.#slotCount = layout.slotCount;
    this.#slot0Word = layout.slotsWord - SLOT_WORDS;
  }

  /** The node of `key` (hashed to `hash`), or 0. */
  lookup(key: string, hash: number): ConnNode {
    const words = this.#words;
    const mask = this.#indexMask;
    for (let i = hash & mask; ; i = (i + 1) & mask) {
      const node = words[this.#indexWord + i]!;
      if (node === 0) return 0;
      if (words[this.#wordOf(node) + HASH] === hash && this.#holds(node, key)) return node;
    }
  }

  /** A new node for `key` (not in the table) with conn 1; 0 when the slots have run out. */
  insert(key: string, hash: number): ConnNode {
    const node = this.#allocate(slotsForKey(key.length));
    if (node === 0) return 0;
    const words = this.#words;
    const head = this.#wordOf(node);
    words[head + HASH] = hash;
    words[head + CONN] = 1;
    words[head + KEY_LENGTH] = key.length;
    this.#writeKey(node, key);
    const mask = this.#indexMask;
    let i = hash & mask;
    while (words[this.#indexWord + i] !== 0) i = (i + 1) & mask;
    words[this.#indexWord + i] = node;
    return node;
  }

  /** Takes `node` out of the index and frees its slots. */
  delete(node: ConnNode): void {
    const words = this.#words;
    const index = this.#indexWord;
    const mask = this.#indexMask;
    let hole = words[this.#wordOf(node) + HASH]! & mask;
    while (words[index + hole] !== node) hole = (hole + 1) & mask;
    // Backward shift: move up each later entry of the run that may sit at the hole (its home is not
    // cyclically in (hole, at]), so every lookup still finds its node before an empty entry.
    for (let at = (hole + 1) & mask; ; at = (at + 1) & mask) {
      const moved = words[index + at]!;
      if (moved === 0) break;
      const home = words[this.#wordOf(moved) + HASH]! & mask;
      if (((at - home) & mask) >= ((at - hole) & mask)) {
        words[index + hole] = moved;
        hole = at;
      }
    }
    words[index + hole] = 0;
    this.#free(node);
  }

  conn(node: ConnNode): number {
    return this.#words[this.#wordOf(node) + CONN]!;
  }

  setConn(node: ConnNode, conn: number): void {
    this.#words[this.#wordOf(node) + CONN] = conn;
  }

  keyLength(node: ConnNode): number {
    return this.#words[this.#wordOf(node) + KEY_LENGTH]!;
  }

  #wordOf(slot: number): number {
    return this.#slot0Word + slot * SLOT_WORDS;
  }

  #holds(node: ConnNode, key: string): boolean {
    const words = this.#words;
    if (words[this.#wordOf(node) + KEY_LENGTH] !== key.length) return false;
    const bytes = this.#bytes;
    let slot = node;
    let at = this.#wordOf(node) * 4 + FIRST_KEY_BYTE;
    let end = this.#wordOf(node) * 4 + SLOT_BYTES;
    for (let i = 0; i < key.length; i++) {
      if (at === end) {
        slot = words[this.#wordOf(slot) + NEXT]!;
        at = this.#wordOf(slot) * 4 + NEXT_KEY_BYTE;
        end = at - NEXT_KEY_BYTE + SLOT_BYTES;
      }
      if (bytes[at++] !== (key.charCodeAt(i) & 0xff)) return false;
    }
    return true;
  }

  #writeKey(node: ConnNode, key: string): void {
    const words = this.#words;
    const bytes = this.#bytes;
    let slot = node;
    let at = this.#wordOf(node) * 4 + FIRST_KEY_BYTE;
    let end = this.#wordOf(node) * 4 + SLOT_BYTES;
    for (let i = 0; i < key.length; i++) {
      if (at === end) {
        slot = words[this.#wordOf(slot) + NEXT]!;
        at = this.#wordOf(slot) * 4 + NEXT_KEY_BYTE;
        end = at - NEXT_KEY_BYTE + SLOT_BYTES;
      }
      bytes[at++] = key.charCodeAt(i);
    }
  }

  /** `count` slots linked from the first, or 0 (and none taken) when there are not so many free. */
  #allocate(count: number): ConnNode {
    let first = 0;
    let last = 0;
    for (let n = 0; n < count; n++) {
      const slot = this.#allocateSlot();
      if (slot === 0) {
        if (first !== 0) this.#free(first);
        return 0;
      }
      this.#words[this.#wordOf(slot) + NEXT] = 0;
      if (last === 0) first = slot;
      else this.#words[this.#wordOf(last) + NEXT] = slot;
      last = slot;
    }
    return first;
  }

  /** A slot off the free list, else one never used yet, else 0. */
  #allocateSlot(): number {
    const words = this.#words;
    const free = words[FREE_SLOT_WORD]!;
    if (free !== 0) {
      words[FREE_SLOT_WORD] = words[this.#wordOf(free) + NEXT]!;
      return free;
    }
    const touched = words[TOUCHED_SLOTS_WORD]!;
    if (touched === this.#slotCount) return 0;
    words[TOUCHED_SLOTS_WORD] = touched + 1;
    return touched + 1;
  }

  /** Puts the slots linked from `first` on the free list. */
  #free(first: number): void {
    const words = this.#words;
    for (let slot = first; slot !== 0; ) {
      const next = words[this.#wordOf(slot) + NEXT]!;
      words[this.#wordOf(slot) + NEXT] = words[FREE_SLOT_WORD]!;
      words[FREE_SLOT_WORD] = slot;
      slot = next;
    }
  }
}
