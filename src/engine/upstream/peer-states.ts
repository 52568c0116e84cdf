/**
 * What the balancer keeps per server of an upstream group (nginx's `conns`, `current_weight`,
 * `effective_weight`, `fails`, `accessed`, `checked`) in typed arrays: this thread's own, or, for a group with a
 * `zone`, in a SharedArrayBuffer the replica's worker threads share, as nginx's workers share an
 * upstream zone — then a pick and its count, a release and a failure are made under the group's
 * lock (zone-lock.ts), and a count of releases lets a worker whose queue waits for a server learn of
 * one another worker freed.
 */
import { forceUnlockZone, lockZone, unlockZone } from '../zone-lock.ts';

/** The lock word, a word unused, the count of frees, a word unused; an int32 `active` per server; five float64s per server. */
const LOCK = 0;
const FREES = 2;
const HEADER_BYTES = 16;
/** The float64s of a server, in this order. */
const CURRENT_WEIGHT = 0;
const EFFECTIVE_WEIGHT = 1;
const FAILS = 2;
const ACCESSED_S = 3;
const CHECKED_S = 4;
const NUMBERS = 5;

function bytesFor(peers: number): number {
  const activeBytes = Math.ceil((peers * 4) / 8) * 8;
  return HEADER_BYTES + activeBytes + peers * NUMBERS * 8;
}

export class PeerStates {
  readonly memory: SharedArrayBuffer;
  /** Requests on each server now (nginx's `conns`). */
  readonly active: Int32Array;
  /** Per server, five numbers: the running and effective weights, failures, last failure, last check. */
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
    this.numbers = new Float64Array(this.memory, bytes - peers * NUMBERS * 8, peers * NUMBERS);
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

  /** A server's number: `field` is one of CURRENT_WEIGHT … CHECKED_S. */
  get(peer: number, field: number): number {
    return this.numbers[peer * NUMBERS + field]!;
  }

  set(peer: number, field: number, value: number): void {
    this.numbers[peer * NUMBERS + field] = value;
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

/** One server's place in its group's {@link PeerStates}: the balancer's fields of it, read and written there. */
export class PeerStateSlot {
  readonly #states: PeerStates;
  readonly #index: number;

  constructor(states: PeerStates, index: number) {
    this.#states = states;
    this.#index = index;
  }

  /** Requests it carries now, from the pick to the end of the upstream exchange (nginx's `conns`). */
  get active(): number {
    return this.#states.active[this.#index]!;
  }

  set active(requests: number) {
    this.#states.active[this.#index] = requests;
  }

  get currentWeight(): number {
    return this.#states.get(this.#index, CURRENT_WEIGHT);
  }

  set currentWeight(weight: number) {
    this.#states.set(this.#index, CURRENT_WEIGHT, weight);
  }

  get effectiveWeight(): number {
    return this.#states.get(this.#index, EFFECTIVE_WEIGHT);
  }

  set effectiveWeight(weight: number) {
    this.#states.set(this.#index, EFFECTIVE_WEIGHT, weight);
  }

  get fails(): number {
    return this.#states.get(this.#index, FAILS);
  }

  set fails(fails: number) {
    this.#states.set(this.#index, FAILS, fails);
  }

  get accessedS(): number {
    return this.#states.get(this.#index, ACCESSED_S);
  }

  set accessedS(s: number) {
    this.#states.set(this.#index, ACCESSED_S, s);
  }

  get checkedS(): number {
    return this.#states.get(this.#index, CHECKED_S);
  }

  set checkedS(s: number) {
    this.#states.set(this.#index, CHECKED_S, s);
  }
}
