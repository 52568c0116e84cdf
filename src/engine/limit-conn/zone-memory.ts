/**
 * The layout of a limit_conn zone's shared memory: one SharedArrayBuffer, mapped once for the zone's
 * `size` and attached by every worker thread, as nginx's workers map a zone's pages. A header of 32-bit
 * words, then the hash index (a node number per entry), then the node records in 64-byte slots.
 * All zeros is the empty zone, so a new buffer needs nothing written but the zone's size, and pages
 * no key ever reached are never touched.
 */

/** Header words. The lock takes two (zone-lock.ts). */
export const LOCK_WORD = 0;
/** The bytes charged for nodes, in `CHARGE_UNIT_BYTES` (a zone may hold more than 2 GiB of them). */
export const USED_UNITS_WORD = 2;
export const KEYS_WORD = 3;
export const IN_PROGRESS_WORD = 4;
/** The first slot of the free list (linked through each slot's first word); 0: empty. */
export const FREE_SLOT_WORD = 5;
/** Slots ever handed out: slots past this one were never written. */
export const TOUCHED_SLOTS_WORD = 6;
/** The zone's size (low and high 32 bits), written once: a buffer mapped for another size is refused. */
const SIZE_LOW_WORD = 7;
const SIZE_HIGH_WORD = 8;
const HEADER_BYTES = 64;
/** The index takes whole 64-byte lines, so the slots after it start on one. */
const MIN_INDEX_ENTRIES = 16;

export const SLOT_BYTES = 64;
export const SLOT_WORDS = SLOT_BYTES / 4;
/** Every node is charged a power of two of at least 64 bytes, so usedBytes is counted in these. */
export const CHARGE_UNIT_BYTES = 64;

export interface ZoneLayout {
  readonly sizeBytes: number;
  /** Node slots, numbered 1..slotCount (0 is "no slot"). */
  readonly slotCount: number;
  /** Hash index entries, a power of two at least twice slotCount: probes stay short even when full. */
  readonly indexEntries: number;
  readonly indexWord: number;
  /** The word where slot 1 starts. */
  readonly slotsWord: number;
  readonly totalBytes: number;
}

/**
 * The layout for a zone of `sizeBytes` that may charge `budgetBytes` to its nodes. A node takes at
 * most as many slots as it is charged in 64-byte units (conn-table.ts), so budget / 64 slots hold
 * whatever mix of keys the accounting lets in; the index (8 to 16 bytes per slot) and the header
 * come on top of the zone's size.
 */
export function zoneLayout(sizeBytes: number, budgetBytes: number): ZoneLayout {
  const slotCount = Math.max(0, Math.floor(budgetBytes / SLOT_BYTES));
  let indexEntries = MIN_INDEX_ENTRIES;
  while (indexEntries < 2 * slotCount) indexEntries *= 2;
  const indexWord = HEADER_BYTES / 4;
  const slotsWord = indexWord + indexEntries;
  return {
    sizeBytes,
    slotCount,
    indexEntries,
    indexWord,
    slotsWord,
    totalBytes: (slotsWord + slotCount * SLOT_WORDS) * 4,
  };
}

/** Maps a new, empty zone. */
export function mapZoneMemory(layout: ZoneLayout): SharedArrayBuffer {
  const memory = new SharedArrayBuffer(layout.totalBytes);
  const header = new Int32Array(memory, 0, HEADER_BYTES / 4);
  Atomics.store(header, SIZE_LOW_WORD, layout.sizeBytes % 2 ** 32);
  Atomics.store(header, SIZE_HIGH_WORD, Math.floor(layout.sizeBytes / 2 ** 32));
  return memory;
}

/** Whether `memory` was mapped for `layout` (by another thread's zone of the same size). */
export function fitsLayout(memory: SharedArrayBuffer, layout: ZoneLayout): boolean {
  if (memory.byteLength !== layout.totalBytes) return false;
  const header = new Int32Array(memory, 0, HEADER_BYTES / 4);
  return (
    Atomics.load(header, SIZE_LOW_WORD) === ((layout.sizeBytes % 2 ** 32) | 0) &&
    Atomics.load(header, SIZE_HIGH_WORD) === Math.floor(layout.sizeBytes / 2 ** 32)
  );
}
