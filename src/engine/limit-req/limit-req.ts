/**
 * The PREACCESS handler of ngx_http_limit_req_module: the `limit_req` rules of a location checked in
 * order, only the last committing in lookup, the earlier ones committed by `account` if everything
 * passed, the longest delay winning, dry run, empty keys not accounted, overlong keys skipped.
 */
import type { LogLevel, LogLine } from '../log-line.ts';
import {
  DELAYED,
  DELAYED_DRY_RUN,
  type LimitReqZone,
  LOOKUP_AGAIN,
  LOOKUP_BUSY,
  LOOKUP_OK,
  type LookupCode,
  PASSED,
  REJECTED,
  REJECTED_DRY_RUN,
} from './limit-req-zone.ts';

export type LimitReqStatus = '' | 'PASSED' | 'DELAYED' | 'REJECTED' | 'DELAYED_DRY_RUN' | 'REJECTED_DRY_RUN';

/** nginx caps limit_req keys at 65535 bytes and skips (does not limit) longer ones. */
export const MAX_KEY_BYTES = 65535;

export interface LimitReqRule<C> {
  readonly zone: LimitReqZone;
  /** Evaluates the zone's key for a request (a byte string; empty = not accounted). */
  readonly keyOf: (ctx: C) => string;
  /** Name of the key expression as written, for the overlong-key message. */
  readonly keyText: string;
  readonly burstMilli: number;
  readonly delayMilli: number;
}

export interface LimitReqPolicy<C> {
  readonly rules: readonly LimitReqRule<C>[];
  /** `limit_req_status`. */
  readonly status: number;
  readonly logLevel: LogLevel;
  readonly dryRun: boolean;
  /** The `limit_req_retry_after` extension: rejections say when the key would pass again. */
  readonly retryAfter?: boolean;
  /** The `limit_req_ratelimit_headers` extension: answers carry IETF RateLimit fields. */
  readonly rateLimitHeaders?: boolean;
}

/** What the handler decided. Reused between calls by its owner to avoid allocation. */
export interface LimitReqOutcome {
  /** `$limit_req_status`; `''` when no rule accounted the request. */
  status: LimitReqStatus;
  /** The deciding zone (rejecting, longest delay, or last accounting), or null. */
  zone: LimitReqZone | null;
  /** The `burst=` (×1000) of the deciding rule. */
  burstMilli: number;
  /** Hold the request this long before going on (DELAYED only). */
  delayMs: number;
  /** The excess behind the decision, milli-requests (logged as `X.YYY`). */
  excessMilli: number;
  /** Non-zero: finalize the request with this status (REJECTED only). */
  rejectCode: number;
  /** On rejection: ms until the rejecting zone would accept this key again (for `Retry-After`). */
  retryAfterMs: number;
  /** Log lines, in the order nginx writes them; empty on the quiet path. */
  logs: LogLine[];
}

export function newOutcome(): LimitReqOutcome {
  return {
    status: '',
    zone: null,
    burstMilli: 0,
    delayMs: 0,
    excessMilli: 0,
    rejectCode: 0,
    retryAfterMs: 0,
    logs: [],
  };
}

const DELAY_LEVEL: Record<LogLevel, LogLevel> = {
  error: 'warn',
  warn: 'notice',
  notice: 'info',
  info: 'info',
};

/**
 * Runs the handler for one request. Updates zone state and counters; fills `out`.
 * Returns `out` for convenience.
 */
export function limitRequest<C>(
  policy: LimitReqPolicy<C>,
  ctx: C,
  nowMs: number,
  out: LimitReqOutcome,
): LimitReqOutcome {
  out.status = '';
  out.zone = null;
  out.burstMilli = 0;
  out.delayMs = 0;
  out.excessMilli = 0;
  out.rejectCode = 0;
  out.retryAfterMs = 0;
  if (out.logs.length !== 0) out.logs = [];

  const rules = policy.rules;
  const last = rules.length - 1;
  let rc: LookupCode | -1 = -1; // -1: nginx's NGX_DECLINED (nothing accounted)
  let n = 0;
  let accounted = -1;
  for (; n <= last; n++) {
    const rule = rules[n]!;
    const key = rule.keyOf(ctx);
    if (key.length === 0) continue;
    if (key.length > MAX_KEY_BYTES) {
      out.logs.push({
        level: 'error',
        message: `the value of the "${rule.keyText}" key is more than 65535 bytes: "${key}"`,
      });
      continue;
    }
    rc = rule.zone.lookup(key, nowMs, rule.burstMilli, n === last);
    if (rc !== LOOKUP_AGAIN) break;
    accounted = n;
  }

  if (rc === -1) return out;

  if (rc !== LOOKUP_OK && rc !== LOOKUP_AGAIN) {
    const rule = rules[n]!;
    const zone = rule.zone;
    for (let i = 0; i < n; i++) rules[i]!.zone.release();
    out.zone = zone;
    out.burstMilli = rule.burstMilli;
    out.excessMilli = zone.lastExcessMilli;
    out.retryAfterMs = Math.max(
      0,
      Math.ceil(((zone.lastExcessMilli - rule.burstMilli) * 1000) / zone.rateMilli),
    );
    if (rc === LOOKUP_BUSY) {
      out.logs.push({
        level: policy.logLevel,
        message: `limiting requests${policy.dryRun ? ', dry run' : ''}, excess: ${formatExcess(zone.lastExcessMilli)} by zone "${zone.name}"`,
      });
    } else {
      out.logs.push({ level: 'alert', message: `could not allocate node in limit_req zone "${zone.name}"` });
    }
    if (policy.dryRun) {
      out.status = 'REJECTED_DRY_RUN';
      zone.counts[REJECTED_DRY_RUN]!++;
    } else {
      out.status = 'REJECTED';
      out.rejectCode = policy.status;
      zone.counts[REJECTED]!++;
    }
    return out;
  }

  // ngx_http_limit_req_account: start from the committed (last evaluated) rule, then commit earlier ones.
  let deciding: LimitReqRule<C> | undefined;
  let excess = 0;
  let maxDelayMs = 0;
  if (rc === LOOKUP_OK) {
    accounted = n;
    deciding = rules[n]!;
    excess = deciding.zone.lastExcessMilli;
    if (excess > deciding.delayMilli) {
      maxDelayMs = Math.floor(((excess - deciding.delayMilli) * 1000) / deciding.zone.rateMilli);
    }
  }
  for (let i = (rc === LOOKUP_OK ? n : rules.length) - 1; i >= 0; i--) {
    const rule = rules[i]!;
    const committed = rule.zone.commit(nowMs);
    if (committed < 0 || committed <= rule.delayMilli) continue;
    const delayMs = Math.floor(((committed - rule.delayMilli) * 1000) / rule.zone.rateMilli);
    if (delayMs > maxDelayMs) {
      maxDelayMs = delayMs;
      excess = committed;
      deciding = rule;
    }
  }

  if (maxDelayMs === 0) {
    const zone = rules[accounted]!.zone;
    out.status = 'PASSED';
    out.zone = zone;
    out.burstMilli = rules[accounted]!.burstMilli;
    out.excessMilli = excess;
    zone.counts[PASSED]!++;
    return out;
  }

  const zone = deciding!.zone;
  out.zone = zone;
  out.burstMilli = deciding!.burstMilli;
  out.excessMilli = excess;
  out.logs.push({
    level: DELAY_LEVEL[policy.logLevel],
    message: `delaying request${policy.dryRun ? ', dry run' : ''}, excess: ${formatExcess(excess)}, by zone "${zone.name}"`,
  });
  if (policy.dryRun) {
    out.status = 'DELAYED_DRY_RUN';
    zone.counts[DELAYED_DRY_RUN]!++;
  } else {
    out.status = 'DELAYED';
    out.delayMs = maxDelayMs;
    zone.counts[DELAYED]!++;
  }
  return out;
}

/** nginx's `%ui.%03ui` of excess/1000 and excess%1000. */
export function formatExcess(excessMilli: number): string {
  const whole = Math.floor(excessMilli / 1000);
  return `${whole}.${String(excessMilli % 1000).padStart(3, '0')}`;
}
