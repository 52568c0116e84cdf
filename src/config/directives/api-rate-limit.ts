/**
 * Cilium's API rate limiter as a limitswitch extension (nginx does not know these directives):
 *
 *     api_rate_limit_zone name option=value ...;   (http)   Cilium's options, as --api-rate-limit takes them
 *     api_rate_limit name;                          (http, server, location)
 *     api_rate_limit_status code;                   (http, server, location; 429)
 *
 * Options and their parsing follow pkg/rate/api_limiter.go: rate-limit `number/duration` (a bare
 * number is refused: it would be nanoseconds), rate-burst, min-wait-duration, max-wait-duration,
 * estimated-processing-duration, auto-adjust, parallel-requests, min-parallel-requests,
 * max-parallel-requests, mean-over, log, delayed-adjustment-factor, max-adjustment-factor,
 * skip-initial; Cilium's messages.
 */
import type { ApiLimiterParameters } from '../../engine/api-limiter/api-limiter.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { duplicate, httpOf, levelOf, ref, statusArg } from './helpers.ts';
import { levelSlot } from './level-slot.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const LEVELS = ['http', 'server', 'location'] as const;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** What an unset option is (Cilium's zero values; NewAPILimiter fills its defaults in). */
export function emptyApiLimiterParameters(): Mutable<ApiLimiterParameters> {
  return {
    rateLimit: 0,
    rateBurst: 0,
    minWaitMs: 0,
    maxWaitMs: 0,
    estimatedProcessingMs: 0,
    autoAdjust: false,
    meanOver: 0,
    parallelRequests: 0,
    minParallelRequests: 0,
    maxParallelRequests: 0,
    delayedAdjustmentFactor: 0,
    maxAdjustmentFactor: 0,
    skipInitial: 0,
    log: false,
  };
}

/** time.ParseDuration, in ms; null when Go would refuse it. */
export function parseGoDuration(text: string): number | null {
  if (text === '0') return 0;
  const units: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  const match = /^([-+]?)((?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|ms|s|m|h))+)$/.exec(text);
  if (match === null) return null;
  let total = 0;
  for (const part of match[2]!.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|ms|s|m|h)/g)) {
    total += Number(part[1]) * units[part[2]!]!;
  }
  return match[1] === '-' ? -total : total;
}

/** Cilium's parseRate: `number/interval`, requests per second. */
function parseRate(value: string): number {
  const slash = value.indexOf('/');
  if (slash === -1) throw new Error('not in the form number/interval');
  const number = value.slice(0, slash);
  let interval = value.slice(slash + 1);
  const f = Number(number);
  if (number === '' || Number.isNaN(f)) throw new Error(`unable to parse float "${number}"`);
  if (/^[-+]?\d+$/.test(interval)) throw new Error(`interval "${interval}" must contain duration suffix`);
  if (!/^\d/.test(interval)) interval = `1${interval}`;
  const ms = parseGoDuration(interval);
  if (ms === null) throw new Error(`unable to parse duration "${interval}"`);
  return f / (ms / 1000);
}

function parsePositiveInt(value: string): number {
  if (!/^[-+]?\d+$/.test(value)) throw new Error(`unable to parse positive integer "${value}"`);
  const n = Number(value);
  if (n < 0) throw new Error(`unable to parse positive integer "${value}": negative value`);
  return n;
}

function parseDuration(value: string): number {
  const ms = parseGoDuration(value);
  if (ms === null) throw new Error(`unable to parse duration "${value}"`);
  return ms;
}

/** strconv.ParseBool. */
function parseBool(value: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false;
  throw new Error(`unable to parse bool "${value}"`);
}

function parseFloat64(value: string): number {
  const f = Number(value);
  if (value.trim() === '' || Number.isNaN(f)) throw new Error(`unable to parse float "${value}"`);
  return f;
}

/** One `option=value` into `p` (mergeUserConfigKeyValue). */
function mergeOption(p: Mutable<ApiLimiterParameters>, key: string, value: string): void {
  switch (key.toLowerCase()) {
    case 'rate-limit':
      try {
        p.rateLimit = parseRate(value);
      } catch (err) {
        throw new Error(`unable to parse rate "${value}": ${(err as Error).message}`);
      }
      return;
    case 'rate-burst':
      p.rateBurst = parsePositiveInt(value);
      return;
    case 'min-wait-duration':
      p.minWaitMs = parseDuration(value);
      return;
    case 'max-wait-duration':
      p.maxWaitMs = parseDuration(value);
      return;
    case 'estimated-processing-duration':
      p.estimatedProcessingMs = parseDuration(value);
      return;
    case 'auto-adjust':
      p.autoAdjust = parseBool(value);
      return;
    case 'parallel-requests':
      p.parallelRequests = parsePositiveInt(value);
      return;
    case 'min-parallel-requests':
      p.minParallelRequests = parsePositiveInt(value);
      return;
    case 'max-parallel-requests':
      p.maxParallelRequests = parsePositiveInt(value);
      return;
    case 'mean-over':
      p.meanOver = parsePositiveInt(value);
      return;
    case 'log':
      p.log = parseBool(value);
      return;
    case 'delayed-adjustment-factor':
      p.delayedAdjustmentFactor = parseFloat64(value);
      return;
    case 'max-adjustment-factor':
      p.maxAdjustmentFactor = parseFloat64(value);
      return;
    case 'skip-initial':
      p.skipInitial = parsePositiveInt(value);
      return;
    default:
      throw new Error(`unknown rate limiting option "${key}"`);
  }
}

/** `api_rate_limit_zone name option=value ...;` */
function apiRateLimitZone(d: Directive, scope: Scope): void {
  if (d.args.length === 0) throw configError(`invalid number of arguments in "${d.name}" directive`, d);
  const name = d.args[0]!;
  const http = httpOf(scope);
  if (http.apiRateLimitZones.some((zone) => zone.name === name)) {
    throw configError(`api_rate_limit_zone "${name}" is already defined`, d);
  }
  const params = emptyApiLimiterParameters();
  for (const option of d.args.slice(1)) {
    const eq = option.indexOf('=');
    if (eq <= 0) {
      throw configError(`unable to parse rate limit option "${option}", must be in the form option=value`, d);
    }
    const key = option.slice(0, eq);
    const value = option.slice(eq + 1);
    try {
      mergeOption(params, key, value);
    } catch (err) {
      throw configError(
        `unable to parse rate limit option "${key}" with value "${value}": ${(err as Error).message}`,
        d,
      );
    }
  }
  http.apiRateLimitZones.push({ name, params, source: ref(d) });
}

/** `api_rate_limit name;` — the location's requests go through that limiter. */
function apiRateLimit(d: Directive, scope: Scope): void {
  const level = levelOf(scope);
  if (level.apiRateLimit !== null) throw duplicate(d);
  level.apiRateLimit = { zone: d.args[0]!, source: ref(d) };
  httpOf(scope).apiRateLimitUses.push(level.apiRateLimit);
}

const apiRateLimitStatus = levelSlot('apiRateLimitStatus', statusArg);

export const apiRateLimitDirectives: readonly DirectiveSpec[] = [
  // any number of options: an extension, not held to nginx's 8 arguments
  { name: 'api_rate_limit_zone', contexts: ['http'], args: 'any', handle: apiRateLimitZone },
  { name: 'api_rate_limit', contexts: LEVELS, args: [1], handle: apiRateLimit },
  { name: 'api_rate_limit_status', contexts: LEVELS, args: [1], handle: apiRateLimitStatus },
];
