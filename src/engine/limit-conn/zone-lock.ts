/**
 * A zone's mutex (nginx's `shpool->mutex`, ngx_shmtx_t): one 32-bit word in the zone's shared memory,
 * so every thread that attached the zone excludes the others. Taken with a compare-and-swap, retried
 * a short while (the holder keeps it for a hash lookup), then slept on with `Atomics.wait` until the
 * holder's `unlock` wakes one sleeper — Drepper's three-state futex mutex ("Futexes Are Tricky").
 */

const UNLOCKED = 0;
const LOCKED = 1;
/** Locked, and someone may sleep on it: the unlock must wake one. */
const CONTENDED = 2;
/** Tries before sleeping: a few hundred nanoseconds, about what a holder needs (nginx spins 2048 pauses). */
const SPINS = 128;

export class ZoneLock {
  readonly #words: Int32Array;
  readonly #at: number;

  /** The lock is the word `at` of `words` (a view on shared memory; all-zero is unlocked). */
  constructor(words: Int32Array, at: number) {
    this.#words = words;
    this.#at = at;
  }

  lock(): void {
    const words = this.#words;
    const at = this.#at;
    if (Atomics.compareExchange(words, at, UNLOCKED, LOCKED) === UNLOCKED) return;
    for (let spin = 0; spin < SPINS; spin++) {
      if (
        Atomics.load(words, at) === UNLOCKED &&
        Atomics.compareExchange(words, at, UNLOCKED, LOCKED) === UNLOCKED
      )
        return;
    }
    // Say a sleeper may wait, then sleep until the word changes; whoever gets it this way leaves it
    // CONTENDED, so its unlock wakes the next sleeper too.
    while (Atomics.exchange(words, at, CONTENDED) !== UNLOCKED) Atomics.wait(words, at, CONTENDED);
  }

  unlock(): void {
    if (Atomics.exchange(this.#words, this.#at, UNLOCKED) === CONTENDED)
      Atomics.notify(this.#words, this.#at, 1);
  }
}
