/**
 * ngx_http_limit_conn_module: limit_conn_zone, limit_conn, limit_conn_status, limit_conn_log_level,
 * limit_conn_dry_run — parsed as ngx_http_limit_conn_module.c does, with its messages — plus the
 * limitswitch extension limit_conn_retry_after.
 */

import { atoi, parseFlag, parseTimeMs } from '../../engine/scalar-values.ts';
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

const LEVELS = ['http', 'server', 'location'] as const;

/** `limit_conn_zone key zone=name:size;` */
function limitConnZone(d: Directive, scope: Scope): void {
  const key = complexValue(d.args[0]!, d, scope);
  let name = '';
  let sizeBytes = 0;
  for (const arg of d.args.slice(1)) {
    if (!arg.startsWith('zone=')) throw configError(`invalid parameter "${arg}"`, d);
    ({ name, sizeBytes } = zoneSizeArg(arg, d));
  }
  if (name === '') throw configError(`"${d.name}" must have "zone" parameter`, d);
  const zone = sharedMemoryAdd(name, sizeBytes, 'limit_conn', d, scope);
  if (zone.definedKey !== null)
    throw configError(`${d.name} "${name}" is already bound to key "${zone.definedKey}"`, d);
  zone.definedKey = key.raw;
  httpOf(scope).limitConnZones.push({ name, key, sizeBytes, source: ref(d) });
}

/** `limit_conn zone number;` — the zone by name (no `zone=`), 1..65535 requests in progress per key. */
function limitConn(d: Directive, scope: Scope): void {
  const zone = d.args[0]!;
  sharedMemoryAdd(zone, 0, 'limit_conn', d, scope);
  const level = levelOf(scope);
  level.limitConns ??= [];
  if (level.limitConns.some((limit) => limit.zone === zone)) throw duplicate(d);
  const conn = atoi(d.args[1]!);
  if (conn === null || conn <= 0) throw configError(`invalid number of connections "${d.args[1]}"`, d);
  if (conn > 65535) throw configError('connection limit must be less 65536', d);
  level.limitConns.push({ zone, conn, source: ref(d) });
}

const limitConnStatus = levelSlot('limitConnStatus', statusArg);

const limitConnLogLevel = levelSlot('limitConnLogLevel', logLevelArg);

const limitConnDryRun = levelSlot('limitConnDryRun', flagArg);

/**
 * limitswitch extension: `limit_conn_retry_after off | on | time;` adds `Retry-After` to rejections —
 * `on` is 1 s (Kubernetes' max-in-flight answers so), a time is rounded up to whole seconds.
 */
const limitConnRetryAfter = levelSlot('limitConnRetryAfterMs', retryAfterMsArg);

/** `off` is 0, `on` 1000, a time its ms. */
function retryAfterMsArg(d: Directive): number {
  const flag = parseFlag(d.args[0]!);
  if (flag !== null) return flag ? 1000 : 0;
  const ms = parseTimeMs(d.args[0]!);
  if (ms === null || ms === 0) throw configError(`invalid value "${d.args[0]}"`, d);
  return ms;
}

export const limitConnDirectives: readonly DirectiveSpec[] = [
  { name: 'limit_conn_zone', contexts: ['http'], args: [2], handle: limitConnZone },
  { name: 'limit_conn', contexts: LEVELS, args: [2], handle: limitConn },
  { name: 'limit_conn_status', contexts: LEVELS, args: [1], handle: limitConnStatus },
  { name: 'limit_conn_log_level', contexts: LEVELS, args: [1], handle: limitConnLogLevel },
  { name: 'limit_conn_dry_run', contexts: LEVELS, args: [1], handle: limitConnDryRun },
  { name: 'limit_conn_retry_after', contexts: LEVELS, args: [1], handle: limitConnRetryAfter },
];
