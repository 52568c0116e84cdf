/** Cilium's API limiter arithmetic (engine/api-limiter), step by step. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { emptyApiLimiterParameters } from '../../src/config/directives/api-rate-limit.ts';
import { ApiLimiter, type ApiLimiterParameters } from '../../src/engine/api-limiter/api-limiter.ts';
import { TokenBucket } from '../../src/engine/api-limiter/token-bucket.ts';
import { WeightedSemaphore } from '../../src/engine/api-limiter/weighted-semaphore.ts';

const T = 1_700_000_000_000;

function limiter(p: Partial<ApiLimiterParameters>): ApiLimiter {
  return new ApiLimiter('call', { ...emptyApiLimiterParameters(), ...p });
}

/** One request that takes `processingMs` from release to end. */
function served(l: ApiLimiter, at: number, processingMs: number): void {
  const req = l.schedule(at);
  l.start(req, at);
  l.finish(req, at + processingMs, 200, false);
}

describe('ApiLimiter', () => {
  it('fills NewAPILimiter’s defaults', () => {
    const l = limiter({});
    assert.deepEqual(
      [
        l.params.meanOver,
        l.params.minParallelRequests,
        l.params.rateBurst,
        l.params.delayedAdjustmentFactor,
        l.params.maxAdjustmentFactor,
      ],
      [10, 1, 1, 0.5, 100],
    );
  });

  it('auto-adjust: factor = estimated / mean over the last mean-over, parallel only partly there, rate all the way', () => {
    const l = limiter({
      autoAdjust: true,
      estimatedProcessingMs: 100,
      parallelRequests: 8,
      meanOver: 2,
      rateLimit: 10,
      rateBurst: 8,
    });
    served(l, T, 200);
    served(l, T + 1000, 200);
    const v = l.values();
    assert.equal(v.adjustmentFactor, 0.5);
    // parallel: 8 + (8 × 0.5 − 8) × 0.5 = 6; burst likewise (rounded); rate: 10 × 0.5
    assert.deepEqual([v.parallelRequests, v.burst, v.limit], [6, 6, 5]);
    // only the last mean-over samples count
    served(l, T + 2000, 100);
    served(l, T + 3000, 100);
    assert.equal(l.values().adjustmentFactor, 1);
    assert.equal(l.values().parallelRequests, 8);
  });

  it('the factor and the adjusted values stay within max-adjustment-factor of the base', () => {
    const l = limiter({
      autoAdjust: true,
      estimatedProcessingMs: 100,
      parallelRequests: 8,
      delayedAdjustmentFactor: 1,
      maxAdjustmentFactor: 2,
      meanOver: 1,
    });
    served(l, T, 800);
    assert.equal(l.values().adjustmentFactor, 0.5);
    assert.equal(l.values().parallelRequests, 4);
    served(l, T + 1000, 10);
    assert.equal(l.values().adjustmentFactor, 2);
    assert.equal(l.values().parallelRequests, 16);
  });

  it('refused or failed requests are no samples', () => {
    const l = limiter({ autoAdjust: true, estimatedProcessingMs: 100, parallelRequests: 4, meanOver: 1 });
    const failed = l.schedule(T);
    l.start(failed, T);
    l.finish(failed, T + 900, 502, true);
    assert.equal(l.values().adjustmentFactor, 1);
    assert.equal(l.processed.get('fail\x00502'), 1);
  });

  it('reserve: the rate limiter’s wait, min-wait as a floor; past max-wait refused and given back', () => {
    const l = limiter({ rateLimit: 5, rateBurst: 2, maxWaitMs: 300, minWaitMs: 10 });
    const waits = Array.from({ length: 4 }, () => l.reserve(l.schedule(T), T));
    // 2 from the burst (the 10 ms floor), then 200 ms, then 400 ms > 300 ms: refused
    assert.deepEqual(waits, [10, 10, 200, null]);
    // the refused one gave its token back: the next one waits 400 ms too, not 600
    assert.equal(l.reserve(l.schedule(T), T), null);
    assert.equal(l.reserve(l.schedule(T + 200), T + 200), 200);
  });

  it('skip-initial: the first requests are not limited', () => {
    const l = limiter({ skipInitial: 2 });
    assert.deepEqual(
      [l.schedule(T).skipped, l.schedule(T).skipped, l.schedule(T).skipped],
      [true, true, false],
    );
  });
});

describe('TokenBucket (x/time/rate)', () => {
  it('a cancelled reservation gives back only what later ones did not build on', () => {
    const b = new TokenBucket(10, 1);
    const first = b.reserve(T);
    const second = b.reserve(T);
    const third = b.reserve(T);
    assert.deepEqual([first.delayMs, second.delayMs, third.delayMs], [0, 100, 200]);
    b.cancel(second, T);
    // the third built on the second: nothing came back
    assert.equal(b.reserve(T).delayMs, 300);
  });
});

describe('WeightedSemaphore', () => {
  it('first come, first served: a waiter that does not fit holds back those behind it', () => {
    const s = new WeightedSemaphore(10);
    const granted: string[] = [];
    assert.equal(s.tryAcquire(6), true);
    s.enqueue({ weight: 5, granted: () => granted.push('big') });
    assert.equal(s.tryAcquire(1), false, 'someone waits first');
    s.enqueue({ weight: 1, granted: () => granted.push('small') });
    s.release(6);
    assert.deepEqual(granted, ['big', 'small']);
  });
});
