/**
 * NGINX Plus's upstream `queue number [timeout=time]`: a request that no server of the group can take
 * at once (each at its `max_conns`, or down) waits here, first come first served, until a server frees
 * up. A full queue, or a wait past `timeout`, is the request's 502 (Plus's answer); a client that goes
 * away leaves the queue at once. The counters are Plus's (`size`, `max_size`, `overflows`) and the
 * outcomes of every wait.
 */

import type { Socket } from 'node:net';
import type { UpstreamQueueSpec } from '../../../config/model.ts';
import type { Clock } from '../../../shared/clock.ts';
import { containFault } from '../contract/fault-boundary.ts';

/** A request waiting for a server. */
export interface QueuedRequest {
  /** A server may take it now: true when it did (false: it stays first in the queue). */
  dequeued(): boolean;
  /** The wait ran out: answer 502. */
  queueTimedOut(): void;
  /** The client's connection (ended if the timer's callback throws). */
  readonly clientSocket: Socket | null;
}

interface Entry {
  readonly request: QueuedRequest;
  readonly sinceMs: number;
  timer: NodeJS.Timeout | null;
}

/** Counters of a queue since the group was built. */
export interface UpstreamQueueCounters {
  /** Requests that entered the queue. */
  queued: number;
  /** Requests turned away because the queue was full (Plus's `overflows`). */
  overflows: number;
  /** Requests that got a server after waiting. */
  served: number;
  /** Requests whose wait ran out. */
  timedOut: number;
  /** Requests whose client went away while they waited. */
  left: number;
  /** Seconds waited, every outcome together. */
  waitedSeconds: number;
}

function onTimeout(queue: UpstreamQueue, entry: Entry): void {
  try {
    queue.timedOut(entry);
  } catch (error) {
    const socket = entry.request.clientSocket;
    containFault('timer', error, socket, socket);
  }
}

/**
 * Hands `entry` a server if one is free; 'fault' when that threw (its client connection is ended, as
 * any callback's fault ends its own: a drain runs for whichever request freed a server, or for a
 * free another worker announced).
 */
function tryDequeue(entry: Entry): boolean | 'fault' {
  try {
    return entry.request.dequeued();
  } catch (error) {
    const socket = entry.request.clientSocket;
    containFault('timer', error, socket, socket);
    return 'fault';
  }
}

export class UpstreamQueue {
  /** `number`: the most requests waiting at once (Plus's `max_size`). */
  readonly maxSize: number;
  readonly timeoutMs: number;
  readonly counters: UpstreamQueueCounters = {
    queued: 0,
    overflows: 0,
    served: 0,
    timedOut: 0,
    left: 0,
    waitedSeconds: 0,
  };
  /** Waiting requests in arrival order (a Map keeps it, and leaving from the middle is O(1)). */
  readonly #entries = new Map<QueuedRequest, Entry>();
  readonly #clock: Clock;
  #draining = false;
  #drainAgain = false;

  constructor(spec: UpstreamQueueSpec, clock: Clock) {
    this.maxSize = spec.size;
    this.timeoutMs = spec.timeoutMs;
    this.#clock = clock;
  }

  /** Requests waiting now (Plus's `size`). */
  get size(): number {
    return this.#entries.size;
  }

  /** Puts `request` last in the queue; false when the queue is full (counted as an overflow). */
  enqueue(request: QueuedRequest): boolean {
    if (this.#entries.size >= this.maxSize) {
      this.counters.overflows++;
      return false;
    }
    const entry: Entry = { request, sinceMs: this.#clock.nowMs(), timer: null };
    entry.timer = setTimeout(onTimeout, this.timeoutMs, this, entry);
    this.#entries.set(request, entry);
    this.counters.queued++;
    return true;
  }

  /** The client went away: the request leaves the queue (nothing when it is not in it). */
  leave(request: QueuedRequest): void {
    const entry = this.#entries.get(request);
    if (entry === undefined) return;
    this.#remove(entry);
    this.counters.left++;
  }

  /**
   * A server may have freed up: the first requests take servers while they can. A request that
   * frees a server while it is handed one (a failure at once) drains again after this pass.
   */
  drain(): void {
    if (this.#draining) {
      this.#drainAgain = true;
      return;
    }
    this.#draining = true;
    try {
      do {
        this.#drainAgain = false;
        for (const entry of this.#entries.values()) {
          const dequeued = tryDequeue(entry);
          if (dequeued === false) break;
          this.#remove(entry);
          if (dequeued === true) this.counters.served++;
          else this.counters.left++;
        }
      } while (this.#drainAgain && this.#entries.size > 0);
    } finally {
      this.#draining = false;
    }
  }

  /** @internal an entry's timer fired. */
  timedOut(entry: Entry): void {
    if (!this.#entries.has(entry.request)) return;
    this.#remove(entry);
    this.counters.timedOut++;
    entry.request.queueTimedOut();
  }

  #remove(entry: Entry): void {
    if (entry.timer !== null) clearTimeout(entry.timer);
    entry.timer = null;
    this.#entries.delete(entry.request);
    this.counters.waitedSeconds += (this.#clock.nowMs() - entry.sinceMs) / 1000;
  }
}
