/**
 * A shared zone's mutex (nginx's `ngx_shmtx_t` on the zone's slab pool): one int32 word in the zone's
 * SharedArrayBuffer, so every worker thread attached to the zone takes the same lock (limit_req's
 * state table, limit_conn's counts). Ulrich Drepper's three-state
 * futex mutex: 0 free, 1 held, 2 held with sleepers, so an unlock that nobody waits for is a single
 * exchange and never a system call. A short spin first: a holder keeps the lock for one lookup, far
 * less than a sleep and a wake-up cost.
 */

const FREE = 0;
const HELD = 1;
const HELD_WITH_SLEEPERS = 2;
/** Tries before sleeping: a lookup under the lock takes well under a microsecond. */
const SPINS = 200;

export function lockZone(words: Int32Array, at: number): void {
  if (Atomics.compareExchange(words, at, FREE, HELD) === FREE) return;
  for (let spin = 0; spin < SPINS; spin++) {
    if (Atomics.load(words, at) === FREE && Atomics.compareExchange(words, at, FREE, HELD) === FREE) return;
  }
  // From here on the word says someone sleeps, so whoever unlocks wakes one of us.
  while (Atomics.exchange(words, at, HELD_WITH_SLEEPERS) !== FREE) {
    Atomics.wait(words, at, HELD_WITH_SLEEPERS);
  }
}

export function unlockZone(words: Int32Array, at: number): void {
  if (Atomics.exchange(words, at, FREE) === HELD_WITH_SLEEPERS) Atomics.notify(words, at, 1);
}
