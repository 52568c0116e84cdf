/** accel-limit-rate.ts: an upstream's X-Accel-Limit-Rate read as ngx_http_upstream_process_limit_rate reads it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { upstreamLimitRate } from '../../../src/replica/http/upstream/accel-limit-rate.ts';

test('X-Accel-Limit-Rate: bytes per second, any case; one that is not a number is none; the last number wins', () => {
  assert.equal(upstreamLimitRate(['Content-Type', 'text/plain']), null);
  assert.equal(upstreamLimitRate(['x-accel-limit-rate', '13000']), 13000);
  assert.equal(upstreamLimitRate([Buffer.from('X-Accel-Limit-Rate'), Buffer.from('0')]), 0);
  assert.equal(upstreamLimitRate(['X-Accel-Limit-Rate', '12k']), null);
  assert.equal(upstreamLimitRate(['X-Accel-Limit-Rate', '100', 'X-Accel-Limit-Rate', 'fast']), 100);
  assert.equal(upstreamLimitRate(['X-Accel-Limit-Rate', '100', 'X-Accel-Limit-Rate', '200']), 200);
});
