/**
 * What the balancer keeps per server of an upstream group (nginx's `conns`, `current_weight`, and
 * until when a failed server is left out) in typed arrays: this thread's own, or, for a group with a
 * `zone`, in a SharedArrayBuffer the replica's worker threads share, as nginx's workers share an
 * upstream zone — then a pick and its count, a release and a failure are made under the group's
 * lock (zone-lock.ts), and a count of releases lets a worker whose queue waits for a server learn of
 * one another worker freed.
 */
import { forceUnlockZone, lockZone, unlockZone } from '../zone-lock.ts';

/** The lock word, a word unused, the count of frees, a word unused; an int32 `active` per server; two float64s per server. */
const LOCK = 0;
const FREES = 2;
const HEADER_BYTES = 16;
const CURRENT_WEIGHT = 0;
const DOWN_UNTIL = 1;

function bytesFor(peers: number): number {
  const activeBytes = Math.ceil((peers * 4) / 8) * 8;
  return HEADER_BYTES + activeBytes + peers * 16;
}

export class PeerStates {
  readonly memory: SharedArrayBuffer;
  /** Requests on each server now (nginx's `conns`). */
  readonly active: Int32Array;
  /** Per server: smooth round robin's running weight, the epoch ms it is left out until (0: up). */
  readonly numbers: Float64Array;
  readonly #words: Int32Array;
  readonly #holder: number;
  #shared: boolean;

  /** A new group's state for `peers` servers; given `attach`, the one another thread shared. */
  constructor(peers: number, attach?: { readonly memory: SharedArrayBuffer; readonly holder: number }) {
    const bytes = bytesFor(peers);
    this.memory = attach?.memory ?? new SharedArrayBuffer(bytes);
    if (this.memory.byteLength !== bytes)
      throw new RangeError('not the state of a group of this many servers');
    this.#words = new Int32Array(this.memory, 0, HEADER_BYTES / 4);
    this.active = new Int32Array(this.memory, HEADER_BYTES, peers);
    this.numbers = new Float64Array(this.memory, bytes - peers * 16, peers * 2);
    this.#holder = attach?.holder ?? 1;
    this.#shared = attach !== undefined;
  }

  /** Whether other threads work on this state too (then every change takes the lock). */
  get shared(): boolean {
    return this.#shared;
  }

  /** The memory, for other threads' groups to attach to; from now on this one locks too. */
  share(): SharedArrayBuffer {
    this.#shared = true;
    return this.memory;
  }

  currentWeight(peer: number): number {
    return this.numbers[peer * 2 + CURRENT_WEIGHT]!;
  }

  setCurrentWeight(peer: number, weight: number): void {
    this.numbers[peer * 2 + CURRENT_WEIGHT] = weight;
  }

  downUntilMs(peer: number): number {
    return this.numbers[peer * 2 + DOWN_UNTIL]!;
  }

  setDownUntilMs(peer: number, ms: number): void {
    this.numbers[peer * 2 + DOWN_UNTIL] = ms;
  }

  /** Runs `change` under the group's lock when the state is shared, else at once. */
  locked<T>(change: () => T): T {
    if (!this.#shared) return change();
    lockZone(this.#words, LOCK, this.#holder);
    try {
      return change();
    } finally {
      unlockZone(this.#words, LOCK);
    }
  }

  /** A server was freed: wakes the threads waiting for one ({@link afterNextFree}). */
  announceFree(): void {
    Atomics.add(this.#words, FREES, 1);
    Atomics.notify(this.#words, FREES);
  }

  /**
   * Calls `then` once, after the next free any thread announces from now on. A wait that nothing
   * ends keeps no thread alive.
   */
  afterNextFree(then: () => void): void {
    const wait = Atomics.waitAsync(this.#words, FREES, Atomics.load(this.#words, FREES));
    if (wait.async) void wait.value.then(then);
    else queueMicrotask(then);
  }

  /** The thread that locked as `holder` is gone: opens the lock if it held it. */
  forceUnlock(holder: number): boolean {
    return forceUnlockZone(this.#words, LOCK, holder);
  }
}
