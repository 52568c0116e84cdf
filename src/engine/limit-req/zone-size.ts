/**
 * What a limit_req zone's `size` pays for: a node per key, the index of 4-byte keys, and the zone's
 * header; and how many IPv4 nodes a budget holds. Every byte the state table allocates is charged
 * here, so a zone never holds more than its `size`.
 */

/** Bytes of one node record: excess 8 + last 8 + key 4 + LRU links 8 + 4 spare (a record never straddles a line). */
export const IPV4_NODE_BYTES = 32;
/** Accounted bytes of a node with a non-4-byte key, plus the key bytes rounded up to 8. */
export const KEYED_STATE_BYTES = 64;
/** nginx refuses zones smaller than 8 pages. */
export const MIN_ZONE_BYTES = 8 * 4096;
/** Per-zone header accounted against `size` (nginx: slab pool header + pages for its bookkeeping). */
export const ZONE_HEADER_BYTES = 1024;
/** Bytes of one index slot (tag | node + 1). */
export const SLOT_BYTES = 4;
/** The index doubles before it is more than 7/8 full. */
const INDEX_LOAD_EIGHTHS = 7;

/** Bytes a node with this key costs against the zone size (the index is charged apart). */
export function stateBytes(key: string): number {
  return keyStateBytes(key.length);
}

/** Bytes a node whose key is `keyLength` bytes long costs. */
export function keyStateBytes(keyLength: number): number {
  return keyLength === 4 ? IPV4_NODE_BYTES : KEYED_STATE_BYTES + ((keyLength + 7) & ~7);
}

/** Whether an index of `slots` slots can take one more key beyond `keys`. */
export function indexHasRoom(keys: number, slots: number): boolean {
  return (keys + 1) * 8 <= slots * INDEX_LOAD_EIGHTHS;
}

/** Index slots for `nodes` int32 keys: the least power of two that holds them within its load. */
export function slotsFor(nodes: number): number {
  let slots = 8;
  while (!indexHasRoom(nodes - 1, slots)) slots *= 2;
  return slots;
}

/** The most IPv4 nodes (of `nodeBytes` each) whose arrays and index fit in `budgetBytes`. */
export function maxIpv4Nodes(budgetBytes: number, nodeBytes: number): number {
  let best = 0;
  for (let slots = 8; slots * SLOT_BYTES < budgetBytes; slots *= 2) {
    const fit = Math.floor((budgetBytes - slots * SLOT_BYTES) / nodeBytes);
    best = Math.max(best, Math.min(Math.floor((slots * INDEX_LOAD_EIGHTHS) / 8), fit));
  }
  return best;
}
