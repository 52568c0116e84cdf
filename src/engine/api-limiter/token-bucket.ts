/**
 * golang.org/x/time/rate's Limiter, as Cilium's API limiter uses it: a token bucket of `burst`
 * tokens filling at `limit` per second; a reservation takes a token now and says how long to wait
 * for it, and a cancelled one gives back what later reservations did not build on. Pure: time is
 * `nowMs`.
 */
export interface Reservation {
  /** Tokens taken (0: nothing to give back). */
  readonly tokens: number;
  /** When the request may act, epoch ms. */
  readonly timeToActMs: number;
  /** The wait, ms (`Infinity`: never: the bucket can never hold a token). */
  readonly delayMs: number;
}

export class TokenBucket {
  /** Tokens per second. */
  #limit: number;
  #burst: number;
  #tokens: number;
  #lastMs = 0;
  /** When the latest reservation may act. */
  #lastEventMs = 0;

  constructor(limitPerSecond: number, burst: number) {
    this.#limit = limitPerSecond;
    this.#burst = burst;
    this.#tokens = 0;
  }

  get limit(): number {
    return this.#limit;
  }

  get burst(): number {
    return this.#burst;
  }

  /** Reserve one token at `nowMs` (rate.Limiter.Reserve). */
  reserve(nowMs: number): Reservation {
    const tokens = this.#advance(nowMs) - 1;
    const delayMs = tokens < 0 ? this.#msFromTokens(-tokens) : 0;
    if (this.#burst < 1) return { tokens: 0, timeToActMs: nowMs, delayMs: Number.POSITIVE_INFINITY };
    this.#lastMs = nowMs;
    this.#tokens = tokens;
    const timeToActMs = nowMs + delayMs;
    this.#lastEventMs = timeToActMs;
    return { tokens: 1, timeToActMs, delayMs };
  }

  /** Gives back a reservation's token at `nowMs`, less what reservations after it already counted on. */
  cancel(reservation: Reservation, nowMs: number): void {
    if (reservation.tokens === 0 || reservation.timeToActMs < nowMs) return;
    const restore = reservation.tokens - this.#tokensFromMs(this.#lastEventMs - reservation.timeToActMs);
    if (restore <= 0) return;
    this.#tokens = Math.min(this.#burst, this.#advance(nowMs) + restore);
    this.#lastMs = nowMs;
    if (reservation.timeToActMs === this.#lastEventMs) {
      const previousMs = reservation.timeToActMs - this.#msFromTokens(reservation.tokens);
      if (previousMs >= nowMs) this.#lastEventMs = previousMs;
    }
  }

  /** A new rate from `nowMs` on (the tokens so far filled at the old one). */
  setLimit(limitPerSecond: number, nowMs: number): void {
    this.#tokens = this.#advance(nowMs);
    this.#lastMs = nowMs;
    this.#limit = limitPerSecond;
  }

  setBurst(burst: number, nowMs: number): void {
    this.#tokens = this.#advance(nowMs);
    this.#lastMs = nowMs;
    this.#burst = burst;
  }

  /** The tokens there would be at `nowMs`. */
  #advance(nowMs: number): number {
    const elapsedMs = Math.max(0, nowMs - this.#lastMs);
    return Math.min(this.#burst, this.#tokens + this.#tokensFromMs(elapsedMs));
  }

  #tokensFromMs(ms: number): number {
    return this.#limit <= 0 ? 0 : (ms / 1000) * this.#limit;
  }

  #msFromTokens(tokens: number): number {
    return this.#limit <= 0 ? Number.POSITIVE_INFINITY : (tokens / this.#limit) * 1000;
  }
}
