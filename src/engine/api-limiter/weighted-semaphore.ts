/**
 * golang.org/x/sync/semaphore's Weighted, as Cilium's API limiter uses it: `size` units, requests
 * of `weight` units served first come, first served (a waiter that does not fit holds back the ones
 * behind it). Pure: a waiter is granted through its callback when units come back.
 */
export interface SemaphoreWaiter {
  readonly weight: number;
  /** Called once the units are the waiter's. */
  granted(): void;
}

export class WeightedSemaphore {
  readonly size: number;
  #used = 0;
  readonly #waiters: SemaphoreWaiter[] = [];

  constructor(size: number) {
    this.size = size;
  }

  /** Takes `weight` units now if they are free and nobody waits before; false otherwise. */
  tryAcquire(weight: number): boolean {
    if (this.size - this.#used >= weight && this.#waiters.length === 0) {
      this.#used += weight;
      return true;
    }
    return false;
  }

  /** Waits its turn (FIFO). */
  enqueue(waiter: SemaphoreWaiter): void {
    this.#waiters.push(waiter);
  }

  /** A waiter gives up (timed out, or its client left). Those behind it may fit now. */
  withdraw(waiter: SemaphoreWaiter): void {
    const at = this.#waiters.indexOf(waiter);
    if (at === -1) return;
    this.#waiters.splice(at, 1);
    if (at === 0) this.#notify();
  }

  release(weight: number): void {
    this.#used -= weight;
    this.#notify();
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  #notify(): void {
    while (this.#waiters.length !== 0) {
      const next = this.#waiters[0]!;
      if (this.size - this.#used < next.weight) return;
      this.#used += next.weight;
      this.#waiters.shift();
      next.granted();
    }
  }
}
