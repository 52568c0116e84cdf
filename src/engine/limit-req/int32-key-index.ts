/**
 * The index of a state table's 4-byte keys (`$binary_remote_addr` for IPv4, as an int32): open
 * addressing over a power of two of slots, Fibonacci hashing, linear probing with backward-shift
 * deletion. A slot holds its node + 1 in the low bits and a tag of the key's hash in the high ones, so
 * a probe past another key's slot almost never reads that key's node, and the index can be 7/8 full.
 * The slots are the top words of the zone's node region (state-layout.ts), growing down. Their count
 * is in the shared header and, for the probe, in fields of this table: a load from the header on the
 * way to the slot's cache miss cost a shuffled decision ~2.5 ns. A table sharing the zone refreshes
 * the fields when it takes the zone lock (another worker may have grown the index meanwhile).
 */

import { HEADER_WORDS, KEY, NODE_WORDS, SLOT_COUNT, SLOT_SHIFT } from './state-layout.ts';
import { IPV4_NODE_BYTES } from './zone-size.ts';

const NIL = -1;
/** 2^32 / φ, odd: multiplicative (Fibonacci) hashing spreads nearby addresses over the table. */
const FIBONACCI = 0x9e3779b1;
/** Another odd multiplier (murmur3's) for the tag, so that it is not made of the home slot's bits. */
const TAG_MULTIPLIER = 0x85ebca6b;

export class Int32KeyIndex {
  private readonly header: Int32Array;
  /** The node region's words: records from the front, the slots at the end. */
  private readonly words: Int32Array;
  /** Words of the node region: `n` slots take words [nodeWords − n, nodeWords). */
  private readonly nodeWords: number;
  /** A slot's low bits hold node + 1 (every node id fits: each node costs at least 28 bytes)… */
  private readonly nodeMask: number;
  /** …and its high bits the key's tag. */
  private readonly tagMask: number;
  /** The index's size as this table knows it: slots, log2 shift, and the word of slot 0. */
  private slotCount = 0;
  private slotShift = 0;
  private slotsAt = 0;

  constructor(header: Int32Array, words: Int32Array, budgetBytes: number) {
    if (header.length !== HEADER_WORDS) throw new RangeError('not a state table header');
    this.header = header;
    this.words = words;
    this.nodeWords = words.length;
    const nodeBits = Math.min(31, Math.ceil(Math.log2(budgetBytes / IPV4_NODE_BYTES + 2)));
    this.nodeMask = 2 ** nodeBits - 1;
    this.tagMask = ~this.nodeMask;
    this.refresh();
  }

  /** Takes the index's size from the header, where whichever table grew it last wrote it. */
  refresh(): void {
    this.slotCount = this.header[SLOT_COUNT]!;
    this.slotShift = this.header[SLOT_SHIFT]!;
    this.slotsAt = this.nodeWords - this.slotCount;
  }

  /** The node holding the key `k`, or -1. */
  find(k: number): number {
    const words = this.words;
    const mask = this.slotCount - 1;
    const slots = this.slotsAt;
    const tagMask = this.tagMask;
    const tag = Math.imul(k, TAG_MULTIPLIER) & tagMask;
    for (let slot = Math.imul(k, FIBONACCI) >>> this.slotShift; ; slot = (slot + 1) & mask) {
      const entry = words[slots + slot]!;
      if (entry === 0) return NIL;
      if ((entry & tagMask) === tag) {
        const node = (entry & this.nodeMask) - 1;
        if (words[node * NODE_WORDS + KEY] === k) return node;
      }
    }
  }

  /** Empties the index, at `slotCount` slots (the room below it holds no live record). */
  clear(slotCount: number): void {
    this.header[SLOT_COUNT] = slotCount;
    this.header[SLOT_SHIFT] = 32 - Math.log2(slotCount);
    this.refresh();
    this.words.fill(0, this.slotsAt, this.nodeWords);
  }

  insert(k: number, node: number): void {
    const words = this.words;
    const mask = this.slotCount - 1;
    const slots = this.slotsAt;
    let slot = this.home(k);
    while (words[slots + slot] !== 0) slot = (slot + 1) & mask;
    words[slots + slot] = (Math.imul(k, TAG_MULTIPLIER) & this.tagMask) | (node + 1);
  }

  /** Linear-probing delete with backward shift, so no tombstones accumulate. */
  delete(node: number): void {
    const words = this.words;
    const mask = this.slotCount - 1;
    const slots = this.slotsAt;
    const next = (slot: number): number => (slot + 1) & mask;
    const homeOf = (entry: number): number =>
      this.home(words[((entry & this.nodeMask) - 1) * NODE_WORDS + KEY]!);
    let slot = this.home(words[node * NODE_WORDS + KEY]!);
    while (words[slots + slot] !== 0 && (words[slots + slot]! & this.nodeMask) !== node + 1)
      slot = next(slot);
    if (words[slots + slot] === 0) return;
    let hole = slot;
    for (let probe = next(hole); words[slots + probe] !== 0; probe = next(probe)) {
      const want = homeOf(words[slots + probe]!);
      // Move the entry back if its home is not cyclically within (hole, probe].
      const inRange = hole <= probe ? want > hole && want <= probe : want > hole || want <= probe;
      if (!inRange) {
        words[slots + hole] = words[slots + probe]!;
        hole = probe;
      }
    }
    words[slots + hole] = 0;
  }

  /** The home slot of an int32 key. */
  private home(k: number): number {
    return Math.imul(k, FIBONACCI) >>> this.slotShift;
  }
}

/** A 4-byte key as an int32 (big-endian, as the address reads). */
export function packI32(key: string): number {
  return (key.charCodeAt(0) << 24) | (key.charCodeAt(1) << 16) | (key.charCodeAt(2) << 8) | key.charCodeAt(3);
}
