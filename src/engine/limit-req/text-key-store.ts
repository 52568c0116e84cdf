/**
 * The keys of a state table that are not 4 bytes long (text, IPv6), in the zone's buffer: each key's
 * bytes in a block of the key heap, found through hash chains. A block is 16 bytes of header (its
 * node, the key's length, its hash, the next node of its chain) and the key's bytes rounded up to 8.
 * The node's record holds its block's offset. The heap is filled from the bottom; a freed block is
 * only marked, and when the top reaches the end the live blocks slide down over the dead ones (each
 * block names its node, whose record is the only reference to it). Every block costs less than its
 * node is charged, so after a compaction the heap always has room (state-layout.ts).
 */

import { HEAP_TOP, KEY, NODE_WORDS, type StateLayout } from './state-layout.ts';

const NIL = -1;
/** A freed block's owner. */
const DEAD = -1;
/** Int32 words of a block header. */
const OWNER = 0;
const LENGTH = 1;
const HASH = 2;
/** The next node of the chain, + 1 (0: the end). */
const CHAIN = 3;
const BLOCK_HEADER_BYTES = 16;
/** The record word holding a text node's block offset (8-byte units): the key's own word. */
const BLOCK_WORD = KEY;
const FIBONACCI = 0x9e3779b1;
/** Keys longer than this are read back in pieces (the argument count of `String.fromCharCode`). */
const READ_CHUNK_BYTES = 8192;

export class TextKeyStore {
  private readonly header: Int32Array;
  /** The table's record words (a text node's block offset is its key word). */
  private readonly words: Int32Array;
  private readonly bytes: Uint8Array;
  private readonly heapWords: Int32Array;
  private readonly heapUnits: number;
  /** Chain heads: node + 1, 0 for none. */
  private readonly buckets: Int32Array;
  private readonly bucketShift: number;

  constructor(buffer: SharedArrayBuffer, layout: StateLayout, header: Int32Array, words: Int32Array) {
    this.header = header;
    this.words = words;
    this.bytes = new Uint8Array(buffer, layout.heapOffset, layout.heapBytes);
    this.heapWords = new Int32Array(buffer, layout.heapOffset, layout.heapBytes / 4);
    this.heapUnits = layout.heapBytes / 8;
    this.buckets = new Int32Array(buffer, layout.bucketsOffset, layout.bucketCount);
    this.bucketShift = 32 - Math.log2(layout.bucketCount);
  }

  /** The node holding `key`, or -1. */
  find(key: string): number {
    const hash = textHash(key);
    const heapWords = this.heapWords;
    for (let entry = this.buckets[this.bucketOf(hash)]!; entry !== 0; ) {
      const node = entry - 1;
      const at = this.words[node * NODE_WORDS + BLOCK_WORD]! * 2;
      if (heapWords[at + HASH] === hash && heapWords[at + LENGTH] === key.length && this.holds(at, key)) {
        return node;
      }
      entry = heapWords[at + CHAIN]!;
    }
    return NIL;
  }

  /** Stores `key` for `node` (not in the store yet). */
  add(node: number, key: string): void {
    const units = blockUnits(key.length);
    if (this.header[HEAP_TOP]! + units > this.heapUnits) this.compact();
    const unit = this.header[HEAP_TOP]!;
    if (unit + units > this.heapUnits)
      throw new Error('limit_req key heap overflow: the size accounting is broken');
    this.header[HEAP_TOP] = unit + units;
    const at = unit * 2;
    const hash = textHash(key);
    const bucket = this.bucketOf(hash);
    this.heapWords[at + OWNER] = node;
    this.heapWords[at + LENGTH] = key.length;
    this.heapWords[at + HASH] = hash;
    this.heapWords[at + CHAIN] = this.buckets[bucket]!;
    const bytes = this.bytes;
    const base = unit * 8 + BLOCK_HEADER_BYTES;
    for (let i = 0; i < key.length; i++) bytes[base + i] = key.charCodeAt(i);
    this.words[node * NODE_WORDS + BLOCK_WORD] = unit;
    this.buckets[bucket] = node + 1;
  }

  /** Unchains `node`'s key and frees its block. */
  delete(node: number): void {
    const heapWords = this.heapWords;
    const at = this.words[node * NODE_WORDS + BLOCK_WORD]! * 2;
    const bucket = this.bucketOf(heapWords[at + HASH]!);
    const next = heapWords[at + CHAIN]!;
    if (this.buckets[bucket] === node + 1) {
      this.buckets[bucket] = next;
    } else {
      let before = this.buckets[bucket]! - 1;
      for (;;) {
        const beforeAt = this.words[before * NODE_WORDS + BLOCK_WORD]! * 2;
        if (heapWords[beforeAt + CHAIN] === node + 1) {
          heapWords[beforeAt + CHAIN] = next;
          break;
        }
        before = heapWords[beforeAt + CHAIN]! - 1;
      }
    }
    heapWords[at + OWNER] = DEAD;
  }

  /** The length of `node`'s key. */
  lengthOf(node: number): number {
    return this.heapWords[this.words[node * NODE_WORDS + BLOCK_WORD]! * 2 + LENGTH]!;
  }

  /** `node`'s key (a byte string). */
  keyOf(node: number): string {
    const unit = this.words[node * NODE_WORDS + BLOCK_WORD]!;
    const start = unit * 8 + BLOCK_HEADER_BYTES;
    const end = start + this.heapWords[unit * 2 + LENGTH]!;
    let key = '';
    for (let from = start; from < end; from += READ_CHUNK_BYTES) {
      const chunk = this.bytes.subarray(from, Math.min(end, from + READ_CHUNK_BYTES));
      key += String.fromCharCode.apply(null, chunk as unknown as number[]);
    }
    return key;
  }

  /** Slides the live blocks down over the dead ones, in heap order, and moves the top down. */
  private compact(): void {
    const heapWords = this.heapWords;
    const top = this.header[HEAP_TOP]!;
    let write = 0;
    for (let read = 0; read < top; ) {
      const units = blockUnits(heapWords[read * 2 + LENGTH]!);
      const owner = heapWords[read * 2 + OWNER]!;
      if (owner !== DEAD) {
        if (read !== write) {
          this.bytes.copyWithin(write * 8, read * 8, (read + units) * 8);
          this.words[owner * NODE_WORDS + BLOCK_WORD] = write;
        }
        write += units;
      }
      read += units;
    }
    this.header[HEAP_TOP] = write;
  }

  private holds(at: number, key: string): boolean {
    const bytes = this.bytes;
    const base = at * 4 + BLOCK_HEADER_BYTES;
    for (let i = 0; i < key.length; i++) if (bytes[base + i] !== key.charCodeAt(i)) return false;
    return true;
  }

  private bucketOf(hash: number): number {
    return Math.imul(hash, FIBONACCI) >>> this.bucketShift;
  }
}

/** 8-byte units of a block holding a key of `length` bytes. */
function blockUnits(length: number): number {
  return (BLOCK_HEADER_BYTES + length + 7) >>> 3;
}

/** FNV-1a over the key's bytes. */
function textHash(key: string): number {
  let hash = 0x811c9dc5 | 0;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  return hash;
}
