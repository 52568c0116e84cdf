/**
 * What the memory store's ports share: the clock they read (preconditions, heartbeats, leases) and
 * whether the store is closed (a closed store answers like an unreachable one).
 */
import { storeUnavailableError } from '../keyval-errors.ts';

export class MemoryBackend {
  readonly nowMs: () => number;
  #closed = false;

  constructor(nowMs: () => number) {
    this.nowMs = nowMs;
  }

  close(): void {
    this.#closed = true;
  }

  /** Throws `StoreUnavailable` once closed. */
  assertOpen(): void {
    if (this.#closed) throw storeUnavailableError(new Error('store closed'));
  }
}
