/**
 * `limit_rate` and `limit_rate_after` (ngx_http_core_module): the rate an answer's bytes go to the
 * client at, and how many go first at full speed. Each is a size, or a value with variables read per
 * request (ngx_http_complex_value_size: a bad one is 0). `set $limit_rate` (the request's own rate)
 * and an upstream's `X-Accel-Limit-Rate` come before the location's.
 */

import { parseSize } from '../scalar-values.ts';
import type { RequestContext } from '../variables/request-context.ts';
import type { VariableGetter } from '../variables/variable-table.ts';

/** A size known at load time, or a value with variables. */
export type SizeValue = number | VariableGetter;

/** The location's `limit_rate` / `limit_rate_after`; null: not set (0). */
export interface CompiledAnswerRate {
  readonly limitRate: SizeValue | null;
  readonly limitRateAfter: SizeValue | null;
}

export const NO_ANSWER_RATE: CompiledAnswerRate = Object.freeze({ limitRate: null, limitRateAfter: null });

/** The rate an answer is written at: bytes/s (0: as fast as the client takes it), after `afterBytes`. */
export interface AnswerRate {
  readonly bytesPerS: number;
  readonly afterBytes: number;
}

/** ngx_http_complex_value_size with a default of 0 (nginx logs a bad value's `invalid size`). */
function sizeOf(value: SizeValue | null, ctx: RequestContext): number {
  if (value === null) return 0;
  if (typeof value === 'number') return value;
  return parseSize(value(ctx)) ?? 0;
}

/**
 * What ngx_http_write_filter settles on at the first write: the request's rate if one was set
 * (`set $limit_rate`, X-Accel-Limit-Rate: `setRate`), else the location's; `limit_rate_after` only
 * matters with a rate.
 */
export function answerRate(
  rule: CompiledAnswerRate,
  ctx: RequestContext,
  setRate: number | null,
): AnswerRate {
  const bytesPerS = setRate ?? sizeOf(rule.limitRate, ctx);
  if (bytesPerS === 0) return { bytesPerS: 0, afterBytes: 0 };
  return { bytesPerS, afterBytes: sizeOf(rule.limitRateAfter, ctx) };
}

/**
 * ngx_http_write_filter's limit at a write: how many bytes may go now (`sendBytes` > 0), else how
 * long to wait first. `sentBytes` counts the request's head and body so far (nginx's `c->sent`); the
 * times are whole seconds as nginx's `ngx_time()` and `r->start_sec` are.
 */
export function writeLimit(
  rate: AnswerRate,
  startS: number,
  nowS: number,
  sentBytes: number,
): { readonly sendBytes: number } | { readonly waitMs: number } {
  const limit = rate.bytesPerS * (nowS - startS + 1) - (sentBytes - rate.afterBytes);
  if (limit > 0) return { sendBytes: limit };
  return { waitMs: Math.floor((-limit * 1000) / rate.bytesPerS) + 1 };
}

/** The pause ngx_http_write_filter sets after a write took the count from `before` to `after`. */
export function delayAfterWrite(rate: AnswerRate, beforeBytes: number, afterBytes: number): number {
  const from = Math.max(0, beforeBytes - rate.afterBytes);
  const to = Math.max(0, afterBytes - rate.afterBytes);
  return Math.floor(((to - from) * 1000) / rate.bytesPerS);
}
