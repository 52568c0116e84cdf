/**
 * What a keyval entry costs in its zone's `size`, modelled on nginx's slab allocator (NGINX Plus's
 * keyval module is not public; its zones live in the same slab pools as every nginx zone): a node of
 * fixed fields plus the key and value bytes, rounded up to the slab chunk that holds it — a power of two
 * from 8 bytes up to half a page, whole pages above — and a zone loses a page descriptor per page and
 * a header to bookkeeping. Both backends charge entries with these numbers, so a zone refuses the same
 * write on each (the Redis scripts repeat `entryBytes` in `lua/lib/commit.lua`).
 */

/** An entry's fixed part: tree node (40), LRU/expiry queue (16), expire time (8), key and value lengths (8). */
export const KEYVAL_NODE_BYTES = 72;
const PAGE_BYTES = 4096;
const PAGE_DESCRIPTOR_BYTES = 24;
const ZONE_HEADER_BYTES = 1024;

/** The slab bytes one entry takes. */
export function entryBytes(key: string, value: string): number {
  const bytes = KEYVAL_NODE_BYTES + Buffer.byteLength(key) + Buffer.byteLength(value);
  if (bytes > PAGE_BYTES / 2) return Math.ceil(bytes / PAGE_BYTES) * PAGE_BYTES;
  return 2 ** Math.ceil(Math.log2(Math.max(8, bytes)));
}

/** The bytes a zone of `sizeBytes` has for entries. */
export function zoneBudgetBytes(sizeBytes: number): number {
  return sizeBytes - Math.ceil(sizeBytes / PAGE_BYTES) * PAGE_DESCRIPTOR_BYTES - ZONE_HEADER_BYTES;
}
