/**
 * Hands out a state table's node records (a node's id is its record, fixed for its life): freed
 * records first, newest freed first, then the next one above the high water. The records the zone's
 * `size` is charged for ahead of use follow the growth the table had when its arrays were its own
 * (doubling), so that a zone holds exactly as many states as before; the records themselves are in
 * the zone's buffer from the start (state-layout.ts).
 */

import { CAPACITY, FREE_HEAD, HIGH_WATER, NEXT, NODE_WORDS, SLOT_COUNT } from './state-layout.ts';
import { IPV4_NODE_BYTES, SLOT_BYTES } from './zone-size.ts';

const NIL = -1;
const INITIAL_NODES = 256;

/** The records charged ahead of use when a table is made. */
export function initialCapacity(maxNodes: number): number {
  return Math.min(INITIAL_NODES, maxNodes);
}

export class RecordAllocator {
  private readonly header: Int32Array;
  private readonly words: Int32Array;
  private readonly budgetBytes: number;
  /** Records are charged ahead of use up to what an all-IPv4 zone can hold (the densest case). */
  private readonly maxNodes: number;

  constructor(header: Int32Array, words: Int32Array, budgetBytes: number, maxNodes: number) {
    this.header = header;
    this.words = words;
    this.budgetBytes = budgetBytes;
    this.maxNodes = maxNodes;
  }

  /** Records charged ahead of use. */
  get capacity(): number {
    return this.header[CAPACITY]!;
  }

  /** Starts an empty table's records. */
  reset(): void {
    this.header[FREE_HEAD] = NIL;
    this.header[HIGH_WATER] = 0;
    this.header[CAPACITY] = initialCapacity(this.maxNodes);
  }

  alloc(): number {
    const header = this.header;
    const reused = header[FREE_HEAD]!;
    if (reused !== NIL) {
      header[FREE_HEAD] = this.words[reused * NODE_WORDS + NEXT]!;
      return reused;
    }
    if (header[HIGH_WATER] === header[CAPACITY]) this.grow();
    return header[HIGH_WATER]!++;
  }

  /** Takes back a record unlinked from the queue (its `next` word links the free list). */
  free(node: number): void {
    this.words[node * NODE_WORDS + NEXT] = this.header[FREE_HEAD]!;
    this.header[FREE_HEAD] = node;
  }

  /** Whether `node` was ever handed out. */
  wasHandedOut(node: number): boolean {
    return node >= 0 && node < this.header[HIGH_WATER]!;
  }

  /**
   * Doubles the records charged up to what an all-IPv4 zone can hold. A zone that mixes in longer keys
   * (charged more per node, but filling the index less) can hold a few more nodes: past the cap, grow
   * by an eighth, never past the records the budget beside the index could hold (every node is charged
   * a record at least, so the node being added always fits, and the records handed out never reach
   * the index).
   */
  private grow(): void {
    const header = this.header;
    const length = header[CAPACITY]!;
    const mostRecords = Math.floor((this.budgetBytes - header[SLOT_COUNT]! * SLOT_BYTES) / IPV4_NODE_BYTES);
    header[CAPACITY] =
      length < this.maxNodes
        ? Math.min(length * 2, this.maxNodes)
        : Math.min(length + Math.ceil(length / 8), mostRecords);
  }
}
