/**
 * One priority level's fair queuing, as Kubernetes' queueset implements it
 * (k8s.io/apiserver/pkg/util/flowcontrol/fairqueuing/queueset): every request takes one seat; a
 * level holds at most `concurrencyLimit` seats. With queues, a request is dealt a hand of queues by
 * its flow (shuffle sharding), joins the one with the least waiting work, and is dispatched by
 * virtual time: the queue whose oldest request would finish first in a world where each active
 * queue gets an equal part of the seats goes next (Fair Queuing for Server Requests). Without queues
 * (`limit_response=reject`), a request past the limit is refused at once.
 *
 * Time is passed in (`nowMs`); timers are the caller's (a waiting request is withdrawn with
 * `withdraw`). Virtual time is in seat-seconds, as a float.
 */
import { Dealer } from './shuffle-shard.ts';

/** The work a request is assumed to take until it ends (queueset's estimatedServiceDuration): 3 ms. */
export const ESTIMATED_SERVICE_S = 0.003;

export interface QueuingConfig {
  /** `queues`: the deck shuffle sharding deals from. */
  readonly queues: number;
  /** `hand_size`. */
  readonly handSize: number;
  /** `queue_length`: a queue's most waiting requests while every seat is taken. */
  readonly queueLengthLimit: number;
}

/** Why a request was turned away (APF's `reason` label). */
export type RejectReason = 'concurrency-limit' | 'queue-full' | 'time-out' | 'cancelled';

class Queue {
  readonly index: number;
  readonly waiting: FairRequest[] = [];
  executing = 0;
  nextDispatchR = 0;

  constructor(index: number) {
    this.index = index;
  }
}

/** A request in a queue set: waiting, then executing, then done. */
export class FairRequest {
  readonly flow: string;
  readonly arrivalMs: number;
  /** Virtual time at arrival. */
  arrivalR = 0;
  startMs = 0;
  state: 'waiting' | 'executing' | 'done' | 'rejected' = 'waiting';
  /** Called when a waiting request is dispatched from its queue. */
  onDispatch: ((request: FairRequest) => void) | null = null;
  queue: Queue | null = null;

  constructor(flow: string, arrivalMs: number) {
    this.flow = flow;
    this.arrivalMs = arrivalMs;
  }
}

/** A flow's requests now. */
export interface FlowLoad {
  waiting: number;
  executing: number;
}

/** Rejections by reason, none yet. */
export function noRejections(): Record<RejectReason, number> {
  return { 'concurrency-limit': 0, 'queue-full': 0, 'time-out': 0, cancelled: 0 };
}

export interface QueueSetCounters {
  dispatched: number;
  rejected: Record<RejectReason, number>;
}

export class QueueSet {
  readonly concurrencyLimit: number;
  readonly queuing: QueuingConfig | null;
  readonly counters: QueueSetCounters = { dispatched: 0, rejected: noRejections() };
  seatsInUse = 0;
  waiting = 0;
  /** The flows with a request waiting or executing now. */
  readonly flows = new Map<string, FlowLoad>();
  readonly #queues: Queue[];
  readonly #dealer: Dealer | null;
  readonly #hand: number[] = [];
  #currentR = 0;
  /** The last time virtual time was brought up to (NaN until the first request). */
  #lastMs = Number.NaN;
  #robinIndex = -1;
  #enqueues = 0;

  constructor(concurrencyLimit: number, queuing: QueuingConfig | null) {
    this.concurrencyLimit = concurrencyLimit;
    this.queuing = queuing;
    this.#queues = queuing === null ? [] : Array.from({ length: queuing.queues }, (_, i) => new Queue(i));
    this.#dealer = queuing === null ? null : new Dealer(queuing.queues, queuing.handSize);
  }

  /**
   * A request of `flow` (hash `flowHashValue`) arrives: it executes at once, waits in a queue
   * (`onDispatch` is called when it executes), or is rejected (its `state` says which).
   */
  start(
    flow: string,
    flowHashValue: bigint,
    nowMs: number,
    onDispatch: ((request: FairRequest) => void) | null = null,
  ): FairRequest {
    this.#syncTime(nowMs);
    const request = new FairRequest(flow, nowMs);
    if (this.queuing === null) {
      if (this.seatsInUse + 1 > this.concurrencyLimit) return this.#reject(request, 'concurrency-limit');
      this.#execute(request, nowMs);
      return request;
    }
    const queue = this.#queues[this.#shuffleShard(flowHashValue)]!;
    if (this.seatsInUse >= this.concurrencyLimit && queue.waiting.length >= this.queuing.queueLengthLimit)
      return this.#reject(request, 'queue-full');
    if (queue.waiting.length === 0 && queue.executing === 0) queue.nextDispatchR = this.#currentR;
    request.arrivalR = this.#currentR;
    request.queue = queue;
    queue.waiting.push(request);
    this.waiting++;
    this.#flow(request.flow).waiting++;
    this.#boundNextDispatch(queue);
    // the request itself may go now (its state says so); only a waiting one hears of it later
    this.#dispatchAsMuchAsPossible(nowMs);
    if (request.state === 'waiting') request.onDispatch = onDispatch;
    return request;
  }

  /** An executing request ended: its seat is free, and waiting requests may take it. */
  finish(request: FairRequest, nowMs: number): void {
    if (request.state !== 'executing') return;
    this.#syncTime(nowMs);
    request.state = 'done';
    this.seatsInUse--;
    this.#leave(request.flow, 'executing');
    const queue = request.queue;
    if (queue !== null) {
      queue.executing--;
      // the queue's start R moves back by (G − S) × seats: what the estimate over- or under-charged
      queue.nextDispatchR -= ESTIMATED_SERVICE_S - (nowMs - request.startMs) / 1000;
      this.#boundNextDispatch(queue);
    }
    this.#dispatchAsMuchAsPossible(nowMs);
  }

  /** A waiting request leaves (its wait timed out, or its client went away); false if not waiting. */
  withdraw(request: FairRequest, nowMs: number, reason: 'time-out' | 'cancelled'): boolean {
    if (request.state !== 'waiting') return false;
    this.#syncTime(nowMs);
    const queue = request.queue!;
    queue.waiting.splice(queue.waiting.indexOf(request), 1);
    this.waiting--;
    this.#leave(request.flow, 'waiting');
    this.#reject(request, reason);
    this.#boundNextDispatch(queue);
    return true;
  }

  /** Requests executing now. */
  get executing(): number {
    return this.seatsInUse;
  }

  #reject(request: FairRequest, reason: RejectReason): FairRequest {
    request.state = 'rejected';
    this.counters.rejected[reason]++;
    return request;
  }

  #execute(request: FairRequest, nowMs: number): void {
    request.state = 'executing';
    request.startMs = nowMs;
    this.seatsInUse++;
    this.counters.dispatched++;
    this.#flow(request.flow).executing++;
  }

  #flow(flow: string): FlowLoad {
    let load = this.flows.get(flow);
    if (load === undefined) {
      load = { waiting: 0, executing: 0 };
      this.flows.set(flow, load);
    }
    return load;
  }

  #leave(flow: string, as: 'waiting' | 'executing'): void {
    const load = this.flows.get(flow);
    if (load === undefined) return;
    load[as]--;
    if (load.waiting === 0 && load.executing === 0) this.flows.delete(flow);
  }

  /** The hand's queue with the least waiting work, visited from a rotating offset (shuffleShardLocked). */
  #shuffleShard(hashValue: bigint): number {
    const hand = this.#dealer!.dealIntoHand(hashValue, this.#hand);
    const offset = this.#enqueues % hand.length;
    this.#enqueues++;
    let best = -1;
    let least = Number.POSITIVE_INFINITY;
    for (let i = 0; i < hand.length; i++) {
      const index = hand[(offset + i) % hand.length]!;
      const work = this.#queues[index]!.waiting.length * ESTIMATED_SERVICE_S;
      if (work < least) {
        least = work;
        best = index;
      }
    }
    return best;
  }

  /** Virtual time advances at min(seats wanted, limit) ÷ active queues per second (syncTimeLocked). */
  #syncTime(nowMs: number): void {
    const elapsedS = Number.isNaN(this.#lastMs) ? 0 : (nowMs - this.#lastMs) / 1000;
    this.#lastMs = nowMs;
    if (elapsedS <= 0 || this.#queues.length === 0) return;
    let active = 0;
    let seatsWanted = 0;
    for (const queue of this.#queues) {
      seatsWanted += queue.executing + queue.waiting.length;
      if (queue.waiting.length > 0 || queue.executing > 0) active++;
    }
    if (active === 0) return;
    this.#currentR += (elapsedS * Math.min(seatsWanted, this.concurrencyLimit)) / active;
  }

  #dispatchAsMuchAsPossible(nowMs: number): void {
    while (this.waiting !== 0 && this.seatsInUse < this.concurrencyLimit && this.#dispatch(nowMs)) {}
  }

  /**
   * The queue whose oldest request has the least virtual finish time, visited round robin from the
   * last one chosen (findDispatchQueueToBoundLocked), gives its oldest request a seat.
   */
  #dispatch(nowMs: number): boolean {
    const queues = this.#queues;
    let best: Queue | null = null;
    let bestFinish = Number.POSITIVE_INFINITY;
    for (let n = 0; n < queues.length; n++) {
      this.#robinIndex = (this.#robinIndex + 1) % queues.length;
      const queue = queues[this.#robinIndex]!;
      if (queue.waiting.length === 0) continue;
      const finish = queue.nextDispatchR + ESTIMATED_SERVICE_S;
      if (finish < bestFinish) {
        bestFinish = finish;
        best = queue;
      }
    }
    if (best === null || this.seatsInUse + 1 > this.concurrencyLimit) return false;
    this.#robinIndex = best.index;
    const request = best.waiting.shift()!;
    this.waiting--;
    this.#leave(request.flow, 'waiting');
    best.executing++;
    best.nextDispatchR += ESTIMATED_SERVICE_S;
    this.#execute(request, nowMs);
    this.#boundNextDispatch(best);
    const onDispatch = request.onDispatch;
    request.onDispatch = null;
    onDispatch?.(request);
    return true;
  }

  /** The anti-windup bound: a queue's dispatch never precedes its oldest request's arrival. */
  #boundNextDispatch(queue: Queue): void {
    const oldest = queue.waiting[0];
    if (oldest !== undefined && queue.nextDispatchR < oldest.arrivalR) queue.nextDispatchR = oldest.arrivalR;
  }
}
