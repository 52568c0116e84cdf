/**
 * ngx_http_headers_filter's `expires [modified] time | epoch | max | off`: the Expires and
 * Cache-Control an answer with a safe status is given (ngx_http_set_expires), parsed as
 * ngx_http_parse_expires reads a value — at load time, or per request when it has variables.
 */

import { parseTimeS } from '../scalar-values.ts';
import type { RequestContext } from '../variables/request-context.ts';
import type { VariableGetter } from '../variables/variable-table.ts';

export type ExpiresKind = 'off' | 'epoch' | 'max' | 'access' | 'modified' | 'daily';

/** One `expires` value as read: its kind and time in seconds (a daily time: since midnight). */
export interface ExpiresTime {
  readonly kind: ExpiresKind;
  readonly timeS: number;
}

/** `expires` in force: a value read at load time, or (`value`) one read per request. */
export interface CompiledExpires extends ExpiresTime {
  readonly value: VariableGetter | null;
}

/** nginx's `off`, the default. */
export const EXPIRES_OFF: ExpiresTime = Object.freeze({ kind: 'off', timeS: 0 });

const DAY_S = 24 * 60 * 60;

/**
 * ngx_http_parse_expires: `epoch`, `max`, `off` (not after `modified`), `@time` (daily), `[+|-]time`.
 * `kind` is `access` or `modified` (the directive's form); an error is nginx's message.
 */
export function parseExpires(text: string, kind: 'access' | 'modified'): ExpiresTime | { error: string } {
  if (kind !== 'modified' && (text === 'epoch' || text === 'max' || text === 'off'))
    return { kind: text, timeS: 0 };
  let rest = text;
  let result: ExpiresKind = kind;
  let minus = false;
  if (rest.startsWith('@')) {
    if (kind === 'modified') return { error: 'daily time cannot be used with "modified" parameter' };
    result = 'daily';
    rest = rest.slice(1);
  } else if (rest.startsWith('+')) rest = rest.slice(1);
  else if (rest.startsWith('-')) {
    minus = true;
    rest = rest.slice(1);
  }
  const timeS = parseTimeS(rest);
  if (timeS === null) return { error: 'invalid value' };
  if (result === 'daily' && timeS > DAY_S) return { error: 'daily time value must be less than 24 hours' };
  return { kind: result, timeS: minus ? -timeS : timeS };
}

/** The two fields `expires` gives an answer. */
export interface ExpiresFields {
  readonly expires: string;
  readonly cacheControl: string;
}

/**
 * The answer's clock: now and its Last-Modified (NaN: none), both epoch ms, and the calendar the
 * edge reads them with (the engine keeps no clock of its own).
 */
export interface AnswerClock {
  readonly nowMs: number;
  readonly lastModifiedMs: number;
  /** ngx_http_time: `Thu, 01 Jan 1970 00:00:01 GMT`. */
  httpTime(epochS: number): string;
  /** ngx_next_time: the next moment after `nowS` that is `daySeconds` past a local midnight. */
  nextLocalTime(daySeconds: number, nowS: number): number;
}

/** ngx_http_set_expires for one answer; null: none (off, or a per-request value that is off or bad). */
export function expiresFields(
  rule: CompiledExpires,
  ctx: RequestContext,
  clock: AnswerClock,
): ExpiresFields | null {
  let at: ExpiresTime = rule;
  if (rule.value !== null) {
    const read = parseExpires(rule.value(ctx), rule.kind === 'modified' ? 'modified' : 'access');
    if ('error' in read || read.kind === 'off') return null;
    at = read;
  }
  if (at.kind === 'off') return null;
  if (at.kind === 'epoch') return { expires: 'Thu, 01 Jan 1970 00:00:01 GMT', cacheControl: 'no-cache' };
  // 10 years
  if (at.kind === 'max')
    return { expires: 'Thu, 31 Dec 2037 23:55:55 GMT', cacheControl: 'max-age=315360000' };
  const nowS = Math.floor(clock.nowMs / 1000);
  const { httpTime } = clock;
  if (at.timeS === 0 && at.kind !== 'daily') return { expires: httpTime(nowS), cacheControl: 'max-age=0' };
  let expiresS: number;
  let maxAgeS: number;
  if (at.kind === 'daily') {
    expiresS = clock.nextLocalTime(at.timeS, nowS);
    maxAgeS = expiresS - nowS;
  } else if (at.kind === 'access' || Number.isNaN(clock.lastModifiedMs)) {
    maxAgeS = at.timeS;
    expiresS = nowS + at.timeS;
  } else {
    expiresS = Math.floor(clock.lastModifiedMs / 1000) + at.timeS;
    maxAgeS = expiresS - nowS;
  }
  // nginx asks the directive's own time here, which is 0 for a value with variables
  const cacheControl = rule.timeS < 0 || maxAgeS < 0 ? 'no-cache' : `max-age=${maxAgeS}`;
  return { expires: httpTime(expiresS), cacheControl };
}
