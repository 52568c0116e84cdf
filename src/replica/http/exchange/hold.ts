/**
 * A request held before it goes on: by `limit_req`'s delay (a timer) or by an admission that queues
 * (a wait it can withdraw from). The listener counts what is held (a graceful close waits for it);
 * a hold is counted from its start until it elapses, settles or is let go, once.
 */
import type { Socket } from 'node:net';
import type { Decision, WaitDecision } from '../contract/decision.ts';
import { containFault, failpoint } from '../contract/fault-boundary.ts';

/** What a delay's timer calls back. */
export interface HeldExchange {
  holdElapsed(): void;
  readonly clientSocket: Socket | null;
}

function onHoldElapsed(exchange: HeldExchange): void {
  try {
    failpoint('timer');
    exchange.holdElapsed();
  } catch (error) {
    const socket = exchange.clientSocket;
    containFault('timer', error, socket, socket);
  }
}

export class Hold {
  readonly #counter: { held: number };
  #active = false;
  #timer: NodeJS.Timeout | null = null;
  /** Withdraws the request from its admission while it waits. */
  #withdraw: (() => void) | null = null;

  constructor(counter: { held: number }) {
    this.#counter = counter;
  }

  /** Held `ms`, then `exchange.holdElapsed()`. */
  delay(ms: number, exchange: HeldExchange): void {
    this.#start();
    this.#timer = setTimeout(onHoldElapsed, ms, exchange);
  }

  /** The delay's timer fired: false when the hold was let go before (nothing to do then). */
  elapsed(): boolean {
    this.#timer = null;
    return this.#end();
  }

  /** Parked until `decision`'s admission settles; `settle` hears what to do then (not if let go first). */
  wait(decision: WaitDecision, settle: (next: Decision) => void): void {
    this.#start();
    let settled = false;
    const withdraw = decision.wait((next) => {
      if (settled) return;
      settled = true;
      this.#withdraw = null;
      if (this.#end()) settle(next);
    });
    if (!settled) this.#withdraw = withdraw;
  }

  /** Let go before it ended by itself (the client left, the request was refused): timer or wait withdrawn. */
  release(): void {
    if (!this.#end()) return;
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
    const withdraw = this.#withdraw;
    this.#withdraw = null;
    withdraw?.();
  }

  #start(): void {
    this.#active = true;
    this.#counter.held++;
  }

  #end(): boolean {
    if (!this.#active) return false;
    this.#active = false;
    this.#counter.held--;
    return true;
  }
}
