/**
 * Where a limit_req zone's state lives in its one SharedArrayBuffer, so that every worker attached to
 * it reads and writes the same bytes (nginx's zone in shared memory). The buffer is allocated once at
 * the zone's size; pages nobody touched cost no memory, as with nginx's mapping.
 *
 * - header: the lock word, the LRU head and tail, counts, the free list, the index's size, the key
 *   heap's top, and the byte counters;
 * - nodes: one 32-byte record per node growing up from the front (a node's id is its record), and the
 *   open-addressing index of 4-byte keys at the top growing down. Together they never pass the budget:
 *   a new record is handed out only while every record is in use and charged, and the index grows only
 *   when the records allocated and the grown index fit (zone-size.ts, state-table.ts);
 * - key heap: the bytes of the other keys (text, IPv6). Records freed by 4-byte keys stay with the
 *   nodes (ids are stable), so the heap cannot share their room and has a budget of its own: each
 *   block (16 bytes and the key rounded up to 8) costs less than its node is charged (64 bytes and the
 *   key rounded up to 8), so the blocks alive never exceed the budget, and compacting the heap when its
 *   top reaches the end always makes room (text-key-store.ts);
 * - buckets: the hash chains of the heap's keys, one bucket for each node of the most such keys the
 *   budget holds, so the chains never need to grow.
 */

import { KEYED_STATE_BYTES } from './zone-size.ts';

/**
 * Int32 words of the header, in three cache lines: the lock alone (threads waiting for it read it
 * while the holder writes the queue); what a decision writes (the queue's ends) and what inserts and
 * removals write; what a decision only reads (the index's size), so that its loads are not held up
 * behind the last decision's stores to the same line.
 */
export const LOCK = 0;
export const HEAD = 16;
export const TAIL = 17;
export const COUNT = 18;
export const HIGH_WATER = 19;
/** Records the budget has been charged for ahead of use (the growth the table had when unshared). */
export const CAPACITY = 20;
export const FREE_HEAD = 21;
export const INT32_KEYS = 22;
/** The key heap's top, in 8-byte units. */
export const HEAP_TOP = 23;
export const SLOT_COUNT = 32;
export const SLOT_SHIFT = 33;
/** What each node costs beyond the table's own (a synced zone's per-node state, kept elsewhere). */
export const EXTRA_NODE_BYTES = 34;
/** Float64 words of the header (byte offset / 8). */
export const USED_BYTES = 12;
export const SIZE_BYTES = 20;

export const HEADER_BYTES = 192;
export const HEADER_WORDS = HEADER_BYTES / 4;

/** Float64s per node record: `excess` at 4·node, `last` at 4·node + 1 (the zone reads them in place). */
export const RECORD_F64S = 4;
/** Int32 words per record; the key (a text key's block), the LRU `prev` and `next`, kind and pins follow. */
export const NODE_WORDS = 8;
export const KEY = 4;
export const PREV = 5;
export const NEXT = 6;
/** The node's kind in the low two bits, nginx's `count` (pins) above them. */
export const KIND = 7;

export interface StateLayout {
  readonly nodesOffset: number;
  readonly nodesBytes: number;
  readonly heapOffset: number;
  readonly heapBytes: number;
  readonly bucketsOffset: number;
  readonly bucketCount: number;
  readonly totalBytes: number;
}

/** The regions of a table whose nodes and index may take `budgetBytes` (at least `minNodesBytes`). */
export function stateLayout(budgetBytes: number, minNodesBytes: number): StateLayout {
  const nodesBytes = roundUp8(Math.max(budgetBytes, minNodesBytes));
  const heapBytes = roundUp8(budgetBytes);
  let bucketCount = 8;
  while (bucketCount < budgetBytes / (KEYED_STATE_BYTES + 8)) bucketCount *= 2;
  const nodesOffset = HEADER_BYTES;
  const heapOffset = nodesOffset + nodesBytes;
  const bucketsOffset = heapOffset + heapBytes;
  return {
    nodesOffset,
    nodesBytes,
    heapOffset,
    heapBytes,
    bucketsOffset,
    bucketCount,
    totalBytes: bucketsOffset + bucketCount * 4,
  };
}

function roundUp8(bytes: number): number {
  return Math.ceil(bytes / 8) * 8;
}
