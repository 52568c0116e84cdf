/**
 * A stand-in for the limiting engine on the benchmark's "limits on" path: nginx's leaky bucket
 * (ngx_http_limit_req_lookup, milli-request units) in a plain Map keyed by the client address, with a
 * rate so high that nothing is ever limited. It does the work a real decision does per request — key
 * lookup, time arithmetic, a state write — without the routing and variable evaluation.
 */
import { type Decision, PASS, type RequestContext } from '../../src/replica/http/decision.ts';

interface Bucket {
  excessMilli: number;
  lastMs: number;
}

/** rate=1000000000r/s burst=1000 nodelay: never limits a benchmark's load. */
const RATE_MILLI = 1_000_000_000_000;
const BURST_MILLI = 1_000_000;
const REJECT: Decision = Object.freeze({ action: 'reject', code: 503 });

export function standInDecide(): (ctx: RequestContext) => Decision {
  const buckets = new Map<string, Bucket>();
  const startMs = Date.now();
  return (ctx) => {
    // Small-int milliseconds since start keep the fields Smis, as the engine does.
    const nowMs = Date.now() - startMs;
    const key = ctx.remoteAddr;
    const bucket = buckets.get(key);
    if (bucket === undefined) {
      buckets.set(key, { excessMilli: 0, lastMs: nowMs });
      return PASS;
    }
    let elapsedMs = nowMs - bucket.lastMs;
    if (elapsedMs < -60_000) elapsedMs = 1;
    else if (elapsedMs < 0) elapsedMs = 0;
    let excessMilli = bucket.excessMilli - (RATE_MILLI * elapsedMs) / 1000 + 1000;
    if (excessMilli < 0) excessMilli = 0;
    if (excessMilli > BURST_MILLI) return REJECT;
    bucket.excessMilli = excessMilli;
    if (elapsedMs !== 0) bucket.lastMs = nowMs;
    return PASS;
  };
}
