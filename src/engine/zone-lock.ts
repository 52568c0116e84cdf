/**
 * A shared zone's mutex (nginx's `ngx_shmtx_t` on the zone's slab pool): two int32 words in the zone's
 * SharedArrayBuffer, so every worker thread attached to the zone takes the same lock (limit_req's
 * state table, limit_conn's counts). The first word holds its holder, as nginx's holds the holder's
 * pid, so that a thread that died holding it can be named and the lock forced open
 * (`ngx_shmtx_force_unlock`); the second counts the threads asleep on it, so that an unlock nobody
 * waits for is one store and never a system call. A short spin first: a holder keeps the lock for one
 * lookup, far less than a sleep and a wake-up cost.
 */

const FREE = 0;
/** The word after the lock's: the threads asleep on it. */
const SLEEPERS = 1;
/** Tries before sleeping: a lookup under the lock takes well under a microsecond. */
const SPINS = 200;

/** Takes the lock at word `at` of `words` for `holder` (1 and up: who holds it, for a forced unlock). */
export function lockZone(words: Int32Array, at: number, holder: number): void {
  if (Atomics.compareExchange(words, at, FREE, holder) === FREE) return;
  for (let spin = 0; spin < SPINS; spin++) {
    if (Atomics.load(words, at) === FREE && Atomics.compareExchange(words, at, FREE, holder) === FREE) return;
  }
  // Counted as asleep before the last try, so that an unlock after it wakes us.
  Atomics.add(words, at + SLEEPERS, 1);
  for (;;) {
    const current = Atomics.compareExchange(words, at, FREE, holder);
    if (current === FREE) break;
    Atomics.wait(words, at, current);
  }
  Atomics.sub(words, at + SLEEPERS, 1);
}

export function unlockZone(words: Int32Array, at: number): void {
  Atomics.store(words, at, FREE);
  if (Atomics.load(words, at + SLEEPERS) !== 0) Atomics.notify(words, at, 1);
}

/**
 * Opens the lock if `holder` holds it: that thread is gone (a worker that died inside the lock, which
 * its `finally` did not get to open). Whether it held it. What it was changing under the lock may be
 * half done, as in nginx after a worker crash.
 */
export function forceUnlockZone(words: Int32Array, at: number, holder: number): boolean {
  if (Atomics.compareExchange(words, at, holder, FREE) !== holder) return false;
  Atomics.notify(words, at, 1);
  return true;
}
