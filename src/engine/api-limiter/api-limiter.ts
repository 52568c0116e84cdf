/**
 * Cilium's API rate limiter (pkg/rate/api_limiter.go) for a location: a rate limiter (rate-limit,
 * rate-burst), a cap on parallel requests, waiting instead of refusing — up to max-wait-duration,
 * then 429 — and, with auto-adjust, rate, burst and parallelism that follow the measured processing
 * time towards estimated-processing-duration. Cilium's parameters, defaults and arithmetic; pure: the
 * replica's admission (replica/policy/api-limiter-admission.ts) holds the timers, time is `nowMs`.
 */
import { type Reservation, TokenBucket } from './token-bucket.ts';
import { WeightedSemaphore } from './weighted-semaphore.ts';

/** Cilium's `APILimiterParameters`, durations in ms, rates per second (0: not set). */
export interface ApiLimiterParameters {
  readonly rateLimit: number;
  readonly rateBurst: number;
  readonly minWaitMs: number;
  readonly maxWaitMs: number;
  readonly estimatedProcessingMs: number;
  readonly autoAdjust: boolean;
  readonly meanOver: number;
  readonly parallelRequests: number;
  readonly minParallelRequests: number;
  readonly maxParallelRequests: number;
  readonly delayedAdjustmentFactor: number;
  readonly maxAdjustmentFactor: number;
  readonly skipInitial: number;
  readonly log: boolean;
}

/** NewAPILimiter's defaults for what is not set. */
export const DEFAULT_MEAN_OVER = 10;
export const DEFAULT_DELAYED_ADJUSTMENT_FACTOR = 0.5;
export const DEFAULT_MAX_ADJUSTMENT_FACTOR = 100;
/** The weighted semaphore's resolution: a request takes resolution / parallel-requests of it. */
export const WAIT_SEMAPHORE_RESOLUTION = 10_000_000;

/**
 * Why a request ended, as Cilium's `processed_requests_total{outcome}` says: released and answered
 * (`success`, or `fail` when the upstream failed it), refused waiting for a parallel slot or for the
 * rate limiter, or its client gone while it waited.
 */
export type ApiLimiterOutcome =
  | 'success'
  | 'fail'
  | 'fail-parallel-wait'
  | 'fail-limit-wait'
  | 'request-cancelled';

/** One request through the limiter, from scheduled to finished. */
export interface LimitedRequest {
  readonly scheduledMs: number;
  readonly skipped: boolean;
  startMs: number | null;
  waitMs: number;
  weight: number;
  reservation: Reservation | null;
  outcome: ApiLimiterOutcome;
  finished: boolean;
}

/** A snapshot for metrics (Cilium's `MetricsValues`). */
export interface ApiLimiterValues {
  readonly adjustmentFactor: number;
  readonly estimatedProcessingS: number;
  readonly meanProcessingS: number;
  readonly meanWaitS: number;
  readonly limit: number;
  readonly burst: number;
  readonly parallelRequests: number;
  readonly requestsInFlight: number;
  readonly minWaitS: number;
  readonly maxWaitS: number;
}

export class ApiLimiter {
  readonly name: string;
  /** The options as configured (what a reload compares). */
  readonly configured: ApiLimiterParameters;
  /** With NewAPILimiter's defaults filled in. */
  readonly params: ApiLimiterParameters;
  readonly semaphore = new WeightedSemaphore(WAIT_SEMAPHORE_RESOLUTION);
  readonly #bucket: TokenBucket | null;
  #parallelRequests: number;
  #adjustmentFactor = 1;
  #meanProcessingS = 0;
  #meanWaitS = 0;
  readonly #processingS: number[] = [];
  readonly #waitS: number[] = [];
  #scheduled = 0;
  #inFlight = 0;
  /** Processed requests by outcome and answer code (`processed_requests_total`). */
  readonly processed = new Map<string, number>();

  constructor(name: string, params: ApiLimiterParameters) {
    this.name = name;
    this.configured = params;
    this.params = {
      ...params,
      meanOver: params.meanOver || DEFAULT_MEAN_OVER,
      minParallelRequests: params.minParallelRequests || 1,
      rateBurst: params.rateBurst || 1,
      delayedAdjustmentFactor: params.delayedAdjustmentFactor || DEFAULT_DELAYED_ADJUSTMENT_FACTOR,
      maxAdjustmentFactor: params.maxAdjustmentFactor || DEFAULT_MAX_ADJUSTMENT_FACTOR,
    };
    this.#parallelRequests = this.params.parallelRequests;
    this.#bucket =
      this.params.rateLimit > 0 ? new TokenBucket(this.params.rateLimit, this.params.rateBurst) : null;
  }

  /** A request arrives: scheduled, and within `skip-initial` let through untouched. */
  schedule(nowMs: number): LimitedRequest {
    this.#scheduled++;
    const skipped = this.params.skipInitial > 0 && this.#scheduled <= this.params.skipInitial;
    return {
      scheduledMs: nowMs,
      skipped,
      startMs: null,
      waitMs: 0,
      weight: 0,
      reservation: null,
      outcome: 'success',
      finished: false,
    };
  }

  /** The semaphore weight a request takes now (0: parallelism is not limited). */
  weightNow(): number {
    return this.#parallelRequests > 0 ? Math.floor(WAIT_SEMAPHORE_RESOLUTION / this.#parallelRequests) : 0;
  }

  /**
   * After the parallel slot: the rate limiter's wait for `req` (min-wait-duration as a floor), or
   * null when that wait (plus what it waited already) exceeds max-wait-duration — the reservation is
   * then given back, and the caller refuses it.
   */
  reserve(req: LimitedRequest, nowMs: number): number | null {
    req.waitMs = nowMs - req.scheduledMs;
    let delayMs = 0;
    if (this.#bucket !== null) {
      req.reservation = this.#bucket.reserve(nowMs);
      delayMs = req.reservation.delayMs;
    }
    if (this.params.minWaitMs > 0 && delayMs < this.params.minWaitMs) delayMs = this.params.minWaitMs;
    const maxWaitMs = this.params.maxWaitMs;
    if ((maxWaitMs > 0 && delayMs + req.waitMs > maxWaitMs) || delayMs === Number.POSITIVE_INFINITY) {
      this.cancelReservation(req, nowMs);
      return null;
    }
    return delayMs;
  }

  /** A reservation not acted on (refused, or the client left) does not count against the rate. */
  cancelReservation(req: LimitedRequest, nowMs: number): void {
    if (req.reservation !== null && this.#bucket !== null) this.#bucket.cancel(req.reservation, nowMs);
    req.reservation = null;
  }

  /** Released by the limiter: in flight from now on. */
  start(req: LimitedRequest, nowMs: number): void {
    if (!req.skipped) req.waitMs = nowMs - req.scheduledMs;
    req.startMs = nowMs;
    this.#inFlight++;
  }

  /**
   * The request is over (Cilium's requestFinished): its parallel slot goes back; a successful one
   * feeds the means, and with auto-adjust the new factor sets rate, burst and parallelism.
   * `code`: the status the client got. Idempotent.
   */
  finish(req: LimitedRequest, nowMs: number, code: number, error: boolean): void {
    if (req.finished) return;
    req.finished = true;
    if (req.weight !== 0) this.semaphore.release(req.weight);
    if (req.startMs !== null) this.#inFlight--;
    if (req.outcome === 'success' && error) req.outcome = 'fail';
    const label = `${req.outcome}\0${code}`;
    this.processed.set(label, (this.processed.get(label) ?? 0) + 1);
    if (req.outcome !== 'success') return;
    const processingMs = req.startMs === null ? 0 : nowMs - req.startMs;
    this.#meanProcessingS = pushMean(this.#processingS, processingMs / 1000, this.params.meanOver);
    this.#meanWaitS = pushMean(this.#waitS, req.waitMs / 1000, this.params.meanOver);
    if (!this.params.autoAdjust || this.params.estimatedProcessingMs === 0) return;
    this.#adjustmentFactor = this.#calculateAdjustmentFactor();
    this.#parallelRequests = this.#adjustedParallelRequests();
    if (this.#bucket !== null) {
      this.#bucket.setLimit(this.#adjustedLimit(), nowMs);
      this.#bucket.setBurst(this.#adjustedBurst(), nowMs);
    }
  }

  /** The mean processing time, seconds (Cilium paces a refused request by it). */
  get meanProcessingS(): number {
    return this.#meanProcessingS;
  }

  get parallelRequests(): number {
    return this.#parallelRequests;
  }

  values(): ApiLimiterValues {
    return {
      adjustmentFactor: this.#adjustmentFactor,
      estimatedProcessingS: this.params.estimatedProcessingMs / 1000,
      meanProcessingS: this.#meanProcessingS,
      meanWaitS: this.#meanWaitS,
      limit: this.#bucket?.limit ?? 0,
      burst: this.#bucket?.burst ?? 0,
      parallelRequests: this.#parallelRequests,
      requestsInFlight: this.#inFlight,
      minWaitS: this.params.minWaitMs / 1000,
      maxWaitS: this.params.maxWaitMs / 1000,
    };
  }

  #calculateAdjustmentFactor(): number {
    const f = this.params.estimatedProcessingMs / 1000 / this.#meanProcessingS;
    const max = this.params.maxAdjustmentFactor;
    return Math.min(max, Math.max(1 / max, f));
  }

  /** Cilium's delayedAdjustment: only part of the way to base × factor, within [min, max] when set. */
  #delayedAdjustment(current: number, min: number, max: number): number {
    let n = current * this.#adjustmentFactor;
    n = current + (n - current) * this.params.delayedAdjustmentFactor;
    if (min > 0 && n < min) n = min;
    if (max > 0 && n > max) n = max;
    return n;
  }

  /** No further than max-adjustment-factor from the configured base, either way. */
  #adjustmentLimit(value: number, initial: number): number {
    const max = this.params.maxAdjustmentFactor;
    return Math.max(initial / max, Math.min(initial * max, value));
  }

  #adjustedBurst(): number {
    const burst = this.#delayedAdjustment(this.params.rateBurst, this.params.minParallelRequests, 0);
    return Math.round(this.#adjustmentLimit(burst, this.params.rateBurst));
  }

  #adjustedLimit(): number {
    return this.#adjustmentLimit(this.params.rateLimit * this.#adjustmentFactor, this.params.rateLimit);
  }

  #adjustedParallelRequests(): number {
    const p = this.params;
    const n = this.#delayedAdjustment(p.parallelRequests, p.minParallelRequests, p.maxParallelRequests);
    return Math.trunc(this.#adjustmentLimit(n, p.parallelRequests));
  }
}

/** Appends `value`, keeps the last `over`, returns their mean. */
function pushMean(samples: number[], value: number, over: number): number {
  samples.push(value);
  if (samples.length > over) samples.splice(0, samples.length - over);
  let total = 0;
  for (const s of samples) total += s;
  return total / samples.length;
}
