/**
 * How a keyval zone's records, written by one thread, are read by others (workers) as one state, the
 * way nginx's workers read one keyval zone in shared memory. Writes are rare (a switch flipped, a key
 * expired) and reads are every request, so the writer publishes the whole zone and readers decode it
 * once per publication: a lookup pays one atomic load to see whether anything changed.
 *
 * Two halves (growable SharedArrayBuffers) and a generation: the writer encodes into the half readers
 * are not told to read, then bumps the generation, whose parity names the half to read. A reader
 * decodes the half its generation names and checks the generation again afterwards; if the writer
 * published meanwhile (it may have rewritten that half), it reads again.
 *
 * A record is encoded as key bytes, value bytes (their lengths as uint32) and `expireAtMs` (float64,
 * NaN for never): 16 bytes beside the key and value, less than the 72 a record costs in the zone's
 * `size` (store/keyval-bytes.ts), so a half the zone's size holds any content the store lets in. A
 * half grows if a replica's own configuration gives the zone less than the store's does.
 */
import type { KeyvalRecord } from './keyval-record.ts';

/** Header words: the generation, and the encoded bytes of each half. */
const GENERATION = 0;
const LENGTH_A = 1;
const HEADER_WORDS = 3;
const RECORD_FIXED_BYTES = 16;
const MIN_HALF_BYTES = 4096;
const MAX_HALF_BYTES = 256 * 1024 * 1024;

/** What a writer and its readers share (postMessage-able). */
export interface KeyvalPublicationMemory {
  readonly header: SharedArrayBuffer;
  readonly halves: readonly [SharedArrayBuffer, SharedArrayBuffer];
}

export function newKeyvalPublicationMemory(sizeBytes: number): KeyvalPublicationMemory {
  const half = () =>
    new SharedArrayBuffer(Math.min(Math.max(MIN_HALF_BYTES, sizeBytes), MAX_HALF_BYTES), {
      maxByteLength: MAX_HALF_BYTES,
    });
  return { header: new SharedArrayBuffer(HEADER_WORDS * 4), halves: [half(), half()] };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The writer's side: `publish` makes `records` the state every reader sees from its next lookup. */
export class KeyvalPublisher {
  readonly #header: Int32Array;
  readonly #halves: readonly [SharedArrayBuffer, SharedArrayBuffer];

  constructor(memory: KeyvalPublicationMemory) {
    this.#header = new Int32Array(memory.header);
    this.#halves = memory.halves;
  }

  publish(records: Iterable<readonly [string, KeyvalRecord]>): void {
    const generation = Atomics.load(this.#header, GENERATION);
    const next = (generation + 1) | 0;
    const half = this.#halves[next & 1]!;
    const encoded: [Uint8Array, Uint8Array, number][] = [];
    let bytes = 0;
    for (const [key, record] of records) {
      const keyBytes = encoder.encode(key);
      const valueBytes = encoder.encode(record.value);
      encoded.push([keyBytes, valueBytes, record.expireAtMs ?? Number.NaN]);
      bytes += RECORD_FIXED_BYTES + keyBytes.length + valueBytes.length;
    }
    if (bytes > half.byteLength) half.grow(Math.min(MAX_HALF_BYTES, Math.max(bytes, half.byteLength * 2)));
    const view = new DataView(half);
    const target = new Uint8Array(half);
    let at = 0;
    for (const [keyBytes, valueBytes, expireAtMs] of encoded) {
      view.setUint32(at, keyBytes.length);
      view.setUint32(at + 4, valueBytes.length);
      view.setFloat64(at + 8, expireAtMs);
      target.set(keyBytes, at + RECORD_FIXED_BYTES);
      target.set(valueBytes, at + RECORD_FIXED_BYTES + keyBytes.length);
      at += RECORD_FIXED_BYTES + keyBytes.length + valueBytes.length;
    }
    Atomics.store(this.#header, LENGTH_A + (next & 1), at);
    Atomics.store(this.#header, GENERATION, next);
  }
}

/** A reader's side: whether the writer published since the last `read`, and the records it did. */
export class KeyvalSubscriber {
  readonly #header: Int32Array;
  readonly #halves: readonly [SharedArrayBuffer, SharedArrayBuffer];
  /** The generation last read; -1 before the first read (generation 0 is the empty zone). */
  #generation = -1;

  constructor(memory: KeyvalPublicationMemory) {
    this.#header = new Int32Array(memory.header);
    this.#halves = memory.halves;
  }

  /** One atomic load: a lookup calls it every time. */
  changed(): boolean {
    return Atomics.load(this.#header, GENERATION) !== this.#generation;
  }

  read(): [string, KeyvalRecord][] {
    for (;;) {
      const generation = Atomics.load(this.#header, GENERATION);
      const length = Atomics.load(this.#header, LENGTH_A + (generation & 1));
      const records = decode(this.#halves[generation & 1]!, length);
      if (Atomics.load(this.#header, GENERATION) === generation) {
        this.#generation = generation;
        return records;
      }
    }
  }
}

function decode(half: SharedArrayBuffer, length: number): [string, KeyvalRecord][] {
  const view = new DataView(half);
  const bytes = new Uint8Array(half);
  const records: [string, KeyvalRecord][] = [];
  for (let at = 0; at < length; ) {
    const keyLength = view.getUint32(at);
    const valueLength = view.getUint32(at + 4);
    const expireAtMs = view.getFloat64(at + 8);
    const keyAt = at + RECORD_FIXED_BYTES;
    // TextDecoder does not take views of shared memory: the bytes are copied out first
    const key = decoder.decode(bytes.slice(keyAt, keyAt + keyLength));
    const value = decoder.decode(bytes.slice(keyAt + keyLength, keyAt + keyLength + valueLength));
    records.push([key, { value, expireAtMs: Number.isNaN(expireAtMs) ? null : expireAtMs }]);
    at = keyAt + keyLength + valueLength;
  }
  return records;
}
