/**
 * The one source of wall-clock time (envoy ratelimit's `TimeSource`): edges take a `Clock` and pass
 * `nowMs` down, so the engine stays pure and tests can drive time.
 */
export interface Clock {
  /** Epoch milliseconds. */
  nowMs(): number;
}

export const systemClock: Clock = { nowMs: () => Date.now() };
