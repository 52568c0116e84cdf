/**
 * The one source of wall-clock time (envoy ratelimit's `TimeSource`): edges take a `Clock` and pass
 * `nowMs` down, so the engine stays pure and tests can drive time.
 */
export interface Clock {
  /** Epoch milliseconds. */
  nowMs(): number;
}

/**
 * For tests only: `LIMITSWITCH_TEST_CLOCK_OFFSET_MS=5000` runs a process whose clock is 5 s ahead
 * (a machine whose clock is wrong), without touching the system clock.
 */
const TEST_CLOCK_OFFSET_MS = Number(process.env.LIMITSWITCH_TEST_CLOCK_OFFSET_MS ?? 0) || 0;

export const systemClock: Clock =
  TEST_CLOCK_OFFSET_MS === 0
    ? { nowMs: () => Date.now() }
    : { nowMs: () => Date.now() + TEST_CLOCK_OFFSET_MS };

/**
 * nginx's cached time (`ngx_current_msec`, updated once per turn of its event loop): the system clock
 * read once per turn of Node's loop and kept until the loop's check phase, so the events of one turn
 * share one time — a request read and answered in one turn took 0 ms, as it does in nginx.
 */
let loopMs = -1;

function forgetLoopMs(): void {
  loopMs = -1;
}

export const loopClock: Clock = {
  nowMs: () => {
    if (loopMs === -1) {
      loopMs = systemClock.nowMs();
      setImmediate(forgetLoopMs);
    }
    return loopMs;
  },
};
