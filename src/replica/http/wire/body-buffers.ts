/**
 * The memory a response body passes through, used again once it is written, as nginx reuses its
 * `proxy_buffers`. A read of the upstream socket lands in a shared buffer and what the client is to
 * get is copied out; a fresh `Buffer` per copy is memory V8 counts as external, and every few tens of
 * megabytes of it start a full garbage collection (about 10 ms of pauses a time on a 2-core machine:
 * with 256 KiB bodies, one every 200 responses, each one a request's tail). A copy of 4 KiB or more
 * goes into a slab from this pool instead, and the slab comes back when the chunk has been written.
 * Smaller copies come from Node's own buffer pool, which a small body barely moves.
 */

/** A slab holds one read of the upstream socket (http1-client.ts reads 64 KiB at most). */
export const SLAB_BYTES = 64 * 1024;
/** Below this a copy comes from Node's pool (`Buffer.from`; its `poolSize >>> 1`). */
const POOLED_FROM_BYTES = 4 * 1024;
/** Idle slabs kept (4 MiB); what is released past it is left to the collector. */
const MAX_IDLE_SLABS = 64;

/** Slabs out with a chunk: a release counts once, so two chunks never share a slab. */
const lent = new WeakSet<ArrayBufferLike>();

const idle: ArrayBuffer[] = [];

/** A copy of `bytes` the caller may keep. One from a slab goes back with `releaseBodyChunk` once written. */
export function copyBodyChunk(bytes: Buffer): Buffer {
  if (bytes.length < POOLED_FROM_BYTES || bytes.length > SLAB_BYTES) return Buffer.from(bytes);
  const slab = idle.pop() ?? new ArrayBuffer(SLAB_BYTES);
  lent.add(slab);
  const chunk = Buffer.from(slab, 0, bytes.length);
  bytes.copy(chunk);
  return chunk;
}

/** Whether `chunk` lives in a slab: the writer releases it once written. */
export function isPooledBodyChunk(chunk: Buffer): boolean {
  return lent.has(chunk.buffer);
}

/**
 * `chunk`'s bytes are written (handed to the kernel, or to TLS or HTTP/2 framing that copied them):
 * its slab may carry another. A chunk never written, or whose write failed, is not released: its slab
 * is left to the collector.
 */
export function releaseBodyChunk(chunk: Buffer): void {
  const slab = chunk.buffer;
  if (!lent.delete(slab)) return;
  if (idle.length < MAX_IDLE_SLABS) idle.push(slab as ArrayBuffer);
}

/** Slabs idle in the pool (for tests). */
export function idleBodySlabs(): number {
  return idle.length;
}
