/**
 * answer-rate.ts: the rate an answer is written at (the request's own first, else the location's,
 * a bad value 0) and ngx_http_write_filter's arithmetic — what may go at a write, the pause after.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { answerRate, delayAfterWrite, writeLimit } from '../../src/engine/http/answer-rate.ts';
import type { RequestContext } from '../../src/engine/variables/request-context.ts';

const ctx = {} as RequestContext;

describe('limit_rate', () => {
  test("the request's rate over the location's; limit_rate_after only with a rate; a bad value is 0", () => {
    const rule = { limitRate: 1000, limitRateAfter: () => '1k' };
    assert.deepEqual(answerRate(rule, ctx, null), { bytesPerS: 1000, afterBytes: 1024 });
    assert.deepEqual(answerRate(rule, ctx, 50), { bytesPerS: 50, afterBytes: 1024 });
    assert.deepEqual(answerRate(rule, ctx, 0), { bytesPerS: 0, afterBytes: 0 });
    assert.deepEqual(answerRate({ limitRate: () => 'fast', limitRateAfter: null }, ctx, null), {
      bytesPerS: 0,
      afterBytes: 0,
    });
  });

  test("a write takes what the rate allowed since the request's second began, less what went", () => {
    const rate = { bytesPerS: 32768, afterBytes: 0 };
    assert.deepEqual(writeLimit(rate, 100, 100, 0), { sendBytes: 32768 });
    assert.deepEqual(writeLimit(rate, 100, 101, 32768), { sendBytes: 32768 });
    // ahead of the rate: wait until it catches up, and a millisecond more
    assert.deepEqual(writeLimit(rate, 100, 100, 32768), { waitMs: 1 });
    assert.deepEqual(writeLimit(rate, 100, 100, 49152), { waitMs: 501 });
    // limit_rate_after: that many go first, on top
    assert.deepEqual(writeLimit({ bytesPerS: 32768, afterBytes: 32768 }, 100, 100, 0), { sendBytes: 65536 });
  });

  test('after a write, the pause its bytes past limit_rate_after take at the rate', () => {
    assert.equal(delayAfterWrite({ bytesPerS: 32768, afterBytes: 0 }, 0, 32768), 1000);
    assert.equal(delayAfterWrite({ bytesPerS: 1000, afterBytes: 0 }, 10, 15), 5);
    assert.equal(delayAfterWrite({ bytesPerS: 32768, afterBytes: 32768 }, 0, 49152), 500);
    assert.equal(delayAfterWrite({ bytesPerS: 32768, afterBytes: 65536 }, 0, 49152), 0);
  });
});
