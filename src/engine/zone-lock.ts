/**
 * A shared zone's mutex (nginx's `ngx_shmtx_t` on the zone's slab pool): one int32 word in the zone's
 * SharedArrayBuffer, so every worker thread attached to the zone takes the same lock (limit_req's
 * state table, limit_conn's counts, an upstream zone). The word holds its holder, as nginx's holds the
 * holder's pid, so that a thread that died holding it can be named and the lock forced open
 * (`ngx_shmtx_force_unlock`), and a bit that says someone sleeps on it, so that an unlock is one
 * atomic exchange and a system call only when a thread waits (Drepper's "futexes are tricky" mutex).
 * A short spin first: a holder keeps the lock for one lookup, far less than a sleep and a wake-up cost.
 */

const FREE = 0;
/** In the lock word beside the holder: a thread sleeps on the lock (holders are 1 to 64). */
const SLEEPING = 0x4000_0000;
/** Tries before sleeping: a lookup under the lock takes well under a microsecond. */
const SPINS = 200;

/** Takes the lock at word `at` of `words` for `holder` (1 and up: who holds it, for a forced unlock). */
export function lockZone(words: Int32Array, at: number, holder: number): void {
  if (Atomics.compareExchange(words, at, FREE, holder) === FREE) return;
  for (let spin = 0; spin < SPINS; spin++) {
    if (Atomics.load(words, at) === FREE && Atomics.compareExchange(words, at, FREE, holder) === FREE) return;
  }
  for (;;) {
    // Taken with the bit set: others may still sleep, and this holder's unlock must wake one.
    let current = Atomics.compareExchange(words, at, FREE, holder | SLEEPING);
    if (current === FREE) return;
    if ((current & SLEEPING) === 0) {
      const seen = Atomics.compareExchange(words, at, current, current | SLEEPING);
      if (seen !== current) continue;
      current |= SLEEPING;
    }
    Atomics.wait(words, at, current);
  }
}

export function unlockZone(words: Int32Array, at: number): void {
  if ((Atomics.exchange(words, at, FREE) & SLEEPING) !== 0) Atomics.notify(words, at, 1);
}

/**
 * Opens the lock if `holder` holds it: that thread is gone (a worker that died inside the lock, which
 * its `finally` did not get to open). Whether it held it. What it was changing under the lock may be
 * half done, as in nginx after a worker crash.
 */
export function forceUnlockZone(words: Int32Array, at: number, holder: number): boolean {
  for (;;) {
    const current = Atomics.load(words, at);
    if ((current & ~SLEEPING) !== holder) return false;
    if (Atomics.compareExchange(words, at, current, FREE) !== current) continue;
    if ((current & SLEEPING) !== 0) Atomics.notify(words, at, 1);
    return true;
  }
}
