/**
 * ngx_http_limit_req_module: limit_req_zone, limit_req, limit_req_status, limit_req_log_level,
 * limit_req_dry_run — parsed as ngx_http_limit_req_module.c does, with its messages — plus the
 * limitswitch extensions limit_req_retry_after and limit_req_ratelimit_headers.
 */

import { atoi } from '../../engine/scalar-values.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import {
  complexValue,
  duplicate,
  flagArg,
  httpOf,
  levelOf,
  logLevelArg,
  ref,
  sharedMemoryAdd,
  statusArg,
  zoneSizeArg,
} from './helpers.ts';
import { levelSlot } from './level-slot.ts';
import type { DirectiveSpec, Scope } from './types.ts';

/** `nodelay`: nginx stores NGX_MAX_INT_T_VALUE / 1000 × 1000; the model uses the largest safe integer. */
export const NODELAY_MILLI = Number.MAX_SAFE_INTEGER;

const LEVELS = ['http', 'server', 'location'] as const;

/** `limit_req_zone key zone=name:size rate=rate [sync];` (`sync` is NGINX Plus's fourth argument). */
function limitReqZone(d: Directive, scope: Scope): void {
  const key = complexValue(d.args[0]!, d, scope);
  let name = '';
  let sizeBytes = 0;
  let rate = 1;
  let scale = 1;
  let sync = false;
  for (const arg of d.args.slice(1)) {
    if (arg.startsWith('zone=')) {
      ({ name, sizeBytes } = zoneSizeArg(arg, d));
    } else if (arg.startsWith('rate=')) {
      let end = arg.length;
      if (arg.endsWith('r/s')) {
        scale = 1;
        end -= 3;
      } else if (arg.endsWith('r/m')) {
        scale = 60;
        end -= 3;
      }
      const value = end > 5 ? atoi(arg.slice(5, end)) : null;
      if (value === null || value <= 0) throw configError(`invalid rate "${arg}"`, d);
      rate = value;
    } else if (arg === 'sync') {
      sync = true;
    } else {
      throw configError(`invalid parameter "${arg}"`, d);
    }
  }
  if (name === '') throw configError(`"${d.name}" must have "zone" parameter`, d);
  const zone = sharedMemoryAdd(name, sizeBytes, 'limit_req', d, scope);
  if (zone.definedKey !== null)
    throw configError(`${d.name} "${name}" is already bound to key "${zone.definedKey}"`, d);
  zone.definedKey = key.raw;
  const rateMilli = Math.floor((rate * 1000) / scale);
  httpOf(scope).limitReqZones.push({ name, key, sizeBytes, rateMilli, sync, source: ref(d) });
}

/** `limit_req zone=name [burst=number] [nodelay | delay=number];` — the last of nodelay/delay wins. */
function limitReq(d: Directive, scope: Scope): void {
  let zone: string | null = null;
  let burst = 0;
  let delayMilli = 0;
  for (const arg of d.args) {
    if (arg.startsWith('zone=')) {
      zone = arg.slice(5);
      sharedMemoryAdd(zone, 0, 'limit_req', d, scope);
    } else if (arg.startsWith('burst=')) {
      const value = atoi(arg.slice(6));
      if (value === null || value <= 0) throw configError(`invalid burst value "${arg}"`, d);
      burst = value;
    } else if (arg.startsWith('delay=')) {
      const value = atoi(arg.slice(6));
      if (value === null || value <= 0) throw configError(`invalid delay value "${arg}"`, d);
      delayMilli = value * 1000;
    } else if (arg === 'nodelay') {
      delayMilli = NODELAY_MILLI;
    } else {
      throw configError(`invalid parameter "${arg}"`, d);
    }
  }
  if (zone === null) throw configError(`"${d.name}" must have "zone" parameter`, d);
  const level = levelOf(scope);
  level.limitReqs ??= [];
  if (level.limitReqs.some((limit) => limit.zone === zone)) throw duplicate(d);
  level.limitReqs.push({ zone, burstMilli: burst * 1000, delayMilli, source: ref(d) });
}

/** `limit_req_status code;` — ngx_conf_set_num_slot with bounds 400..599. */
const limitReqStatus = levelSlot('limitReqStatus', statusArg);

/** `limit_req_log_level info | notice | warn | error;` — ngx_conf_set_enum_slot. */
const limitReqLogLevel = levelSlot('limitReqLogLevel', logLevelArg);

const limitReqDryRun = levelSlot('limitReqDryRun', flagArg);

/** limitswitch extension: `limit_req_retry_after on;` adds `Retry-After` to rejections. */
const limitReqRetryAfter = levelSlot('limitReqRetryAfter', flagArg);

/** limitswitch extension: `limit_req_ratelimit_headers on;` adds IETF RateLimit fields to answers. */
const limitReqRateLimitHeaders = levelSlot('limitReqRateLimitHeaders', flagArg);

export const limitReqDirectives: readonly DirectiveSpec[] = [
  { name: 'limit_req_zone', contexts: ['http'], args: [3, 4], handle: limitReqZone },
  { name: 'limit_req', contexts: LEVELS, args: [1, 2, 3], handle: limitReq },
  { name: 'limit_req_status', contexts: LEVELS, args: [1], handle: limitReqStatus },
  { name: 'limit_req_log_level', contexts: LEVELS, args: [1], handle: limitReqLogLevel },
  { name: 'limit_req_dry_run', contexts: LEVELS, args: [1], handle: limitReqDryRun },
  { name: 'limit_req_retry_after', contexts: LEVELS, args: [1], handle: limitReqRetryAfter },
  { name: 'limit_req_ratelimit_headers', contexts: LEVELS, args: [1], handle: limitReqRateLimitHeaders },
];
