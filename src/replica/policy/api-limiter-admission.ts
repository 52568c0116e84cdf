/**
 * The waiting half of Cilium's API limiter (APILimiter.wait) on the data path: a request takes a
 * parallel slot (waiting for one up to max-wait-duration), then the rate limiter's wait (min-wait as
 * a floor; refused if the two together would pass max-wait), then goes on; it is finished
 * (`APILimiter.finish`) when its exchange is over. A refusal is paced as Cilium paces it — answered
 * after the mean processing time, against clients that retry at once — with the location's
 * `api_rate_limit_status` (429). A client that leaves while waiting withdraws. With `log=true`,
 * Cilium's messages go to the error log at info (refusals at warn).
 */
import type { ApiLimiter, LimitedRequest } from '../../engine/api-limiter/api-limiter.ts';
import type { SemaphoreWaiter } from '../../engine/api-limiter/weighted-semaphore.ts';
import type { LogLine } from '../../engine/log-line.ts';
import type { Clock } from '../../shared/clock.ts';
import {
  type Decision,
  type HeldUntilEnd,
  heldTogether,
  type PassDecision,
  type ProxyDecision,
  type WaitDecision,
} from '../http/contract/decision.ts';
import { admissionTimer, INTERNAL_ERROR } from '../http/contract/fault-boundary.ts';

export interface AdmissionContext {
  readonly limiter: ApiLimiter;
  readonly clock: Clock;
  /** What to do once released: the location's forward decision (its `slots` are kept). */
  readonly proceed: PassDecision | ProxyDecision;
  /** The answer for a refusal. */
  readonly refuse: Decision;
  /** Writes a line of Cilium's to the error log, with the request's context. */
  readonly log: (line: LogLine) => void;
}

/** A decision that waits for the limiter. */
export function apiLimiterWait(admission: AdmissionContext): WaitDecision {
  return { action: 'wait', wait: (settle) => new Waiting(admission, settle).begin() };
}

class Waiting {
  readonly #a: AdmissionContext;
  readonly #settle: (next: Decision) => void;
  readonly #req: LimitedRequest;
  #waiter: SemaphoreWaiter | null = null;
  #timer: NodeJS.Timeout | null = null;
  #done = false;

  constructor(admission: AdmissionContext, settle: (next: Decision) => void) {
    this.#a = admission;
    this.#settle = settle;
    this.#req = admission.limiter.schedule(admission.clock.nowMs());
  }

  /** Starts waiting; returns the withdrawal. */
  begin(): () => void {
    const { limiter } = this.#a;
    this.#info('Processing API request with rate limiter', {
      parallelRequests: limiter.parallelRequests,
      rateLimiterSkipped: this.#req.skipped ? 'true' : null,
    });
    if (this.#req.skipped) {
      this.#release();
      return this.#withdraw;
    }
    const weight = limiter.weightNow();
    if (weight === 0 || limiter.semaphore.tryAcquire(weight)) {
      this.#req.weight = weight;
      this.#reserve();
      return this.#withdraw;
    }
    this.#waiter = {
      weight,
      granted: () => {
        clearTimeout(this.#timer!);
        this.#timer = null;
        this.#waiter = null;
        this.#req.weight = weight;
        this.#reserve();
      },
    };
    limiter.semaphore.enqueue(this.#waiter);
    const maxWaitMs = limiter.params.maxWaitMs;
    if (maxWaitMs > 0)
      this.#timer = setTimeout(
        this.#guarded(() => this.#parallelTimedOut()),
        maxWaitMs,
      );
    return this.#withdraw;
  }

  #parallelTimedOut(): void {
    this.#timer = null;
    if (this.#waiter !== null) this.#a.limiter.semaphore.withdraw(this.#waiter);
    this.#waiter = null;
    this.#warn('Not processing API request. Wait duration for maximum parallel requests exceeds maximum');
    this.#refuse('fail-parallel-wait', false);
  }

  /** The parallel slot is held: the rate limiter's wait, or a refusal. */
  #reserve(): void {
    const { limiter, clock } = this.#a;
    const delayMs = limiter.reserve(this.#req, clock.nowMs());
    if (delayMs === null) {
      this.#warn('Not processing API request. Wait duration exceeds maximum');
      this.#refuse('fail-limit-wait', true);
      return;
    }
    if (delayMs === 0) {
      this.#release();
      return;
    }
    this.#timer = setTimeout(
      this.#guarded(() => {
        this.#timer = null;
        this.#release();
      }),
      delayMs,
    );
  }

  /** A timer's callback behind the data path's boundary: a throw answers the request 500. */
  #guarded(fn: () => void): () => void {
    return admissionTimer(fn, () => {
      this.#done = true;
      this.#settle(INTERNAL_ERROR);
    });
  }

  /** Released: in flight; the exchange finishes it when it is over. */
  #release(): void {
    const { limiter, clock, proceed } = this.#a;
    limiter.start(this.#req, clock.nowMs());
    this.#info('API request released by rate limiter', { waitDurationTotal: ms(this.#req.waitMs) });
    this.#done = true;
    const req = this.#req;
    const admission = this.#a;
    const finished: HeldUntilEnd = {
      release: (status = 200) => {
        const nowMs = admission.clock.nowMs();
        admission.limiter.finish(req, nowMs, status, status >= 500 || status === 499);
        if (admission.limiter.params.log) {
          admission.log({
            level: 'info',
            message: `API call has been processed, name: ${admission.limiter.name}, processingDuration: ${ms(nowMs - (req.startMs ?? nowMs))}, totalDuration: ${ms(nowMs - req.scheduledMs)}, waitDurationTotal: ${ms(req.waitMs)}`,
          });
        }
      },
    };
    // what a released request holds: its limit_conn slots and its place in the limiter
    this.#settle({ ...proceed, slots: heldTogether(proceed.slots ?? null, finished)! });
  }

  /**
   * Refused: the reservation (if any) is given back at once; the answer is paced by the mean
   * processing time when `pace` (the rate limiter's refusal, as Cilium does).
   */
  #refuse(outcome: LimitedRequest['outcome'], pace: boolean): void {
    const { limiter, clock, refuse } = this.#a;
    this.#req.outcome = outcome;
    const code = 'code' in refuse ? (refuse.code as number) : 429;
    limiter.finish(this.#req, clock.nowMs(), code, true);
    this.#a.proceed.slots?.release();
    const paceMs = pace ? limiter.meanProcessingS * 1000 : 0;
    if (paceMs <= 0) {
      this.#done = true;
      this.#settle(refuse);
      return;
    }
    this.#timer = setTimeout(
      this.#guarded(() => {
        this.#timer = null;
        this.#done = true;
        this.#settle(refuse);
      }),
      paceMs,
    );
  }

  /** The client left while waiting (or while a refusal was paced). */
  readonly #withdraw = (): void => {
    if (this.#done) return;
    this.#done = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const { limiter, clock } = this.#a;
    if (this.#waiter !== null) limiter.semaphore.withdraw(this.#waiter);
    this.#waiter = null;
    if (this.#req.finished) return;
    limiter.cancelReservation(this.#req, clock.nowMs());
    this.#req.outcome = 'request-cancelled';
    this.#warn('Not processing API request due to cancelled context while waiting');
    limiter.finish(this.#req, clock.nowMs(), 499, true);
    this.#a.proceed.slots?.release();
  };

  #info(message: string, fields: Record<string, string | number | null> = {}): void {
    if (!this.#a.limiter.params.log) return;
    this.#a.log({ level: 'info', message: withFields(message, this.#a.limiter.name, fields) });
  }

  #warn(message: string): void {
    if (!this.#a.limiter.params.log) return;
    this.#a.log({ level: 'warn', message: withFields(message, this.#a.limiter.name, {}) });
  }
}

function withFields(message: string, name: string, fields: Record<string, string | number | null>): string {
  let text = `${message}, name: ${name}`;
  for (const [key, value] of Object.entries(fields)) if (value !== null) text += `, ${key}: ${value}`;
  return text;
}

/** A duration as Go prints one (`772.847ms`, `14.923s`). */
function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(3)}s` : `${value.toFixed(3)}ms`;
}
