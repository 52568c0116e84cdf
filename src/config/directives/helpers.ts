/**
 * Small pieces shared by directive handlers: nginx's stock messages, complex values with variable
 * tracking, variable definitions and shared memory zone names.
 */
import type { ComplexValue } from '../../engine/complex-value.ts';
import { parseComplexValue, variablesOf } from '../../engine/complex-value.ts';
import type { LogLevel } from '../../engine/log-line.ts';
import { atoi, parseFlag, parseSize } from '../../engine/scalar-values.ts';
import { isBuiltinVariable } from '../../engine/variables/builtin-names.ts';
import { hasCode, LimitswitchError } from '../../shared/errors.ts';
import type { HttpBuilder, LevelBuilder, SharedMemoryZone } from '../builders.ts';
import { type ConfigError, configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { SourceRef } from '../model.ts';
import type { Scope } from './types.ts';

export function ref(d: Directive): SourceRef {
  return { file: d.file, line: d.line };
}

/** `"name" directive is duplicate` (a handler returning "is duplicate" in nginx). */
export function duplicate(d: Directive): ConfigError {
  return configError(`"${d.name}" directive is duplicate`, d);
}

/** The innermost of location, server, http: where level settings of a directive land. */
export function levelOf(scope: Scope): LevelBuilder {
  const level = scope.location ?? scope.server ?? scope.http;
  if (!level) throw new LimitswitchError('InternalError', `no http level in context ${scope.kind}`);
  return level;
}

export function httpOf(scope: Scope): HttpBuilder {
  if (!scope.http) throw new LimitswitchError('InternalError', `no http block in context ${scope.kind}`);
  return scope.http;
}

/** `limit_req_status`/`limit_conn_status`'s code: ngx_conf_set_num_slot with bounds 400..599. */
export function statusArg(d: Directive): number {
  const code = atoi(d.args[0]!);
  if (code === null) throw configError(`"${d.name}" directive invalid number`, d);
  if (code < 400 || code > 599) throw configError('value must be between 400 and 599', d);
  return code;
}

const LOG_LEVELS: readonly LogLevel[] = ['info', 'notice', 'warn', 'error'];

/** `info | notice | warn | error`: ngx_conf_set_enum_slot (case-insensitive). */
export function logLevelArg(d: Directive): LogLevel {
  const value = LOG_LEVELS.find((name) => name === d.args[0]!.toLowerCase());
  if (!value) throw configError(`invalid value "${d.args[0]}"`, d);
  return value;
}

/** `on`/`off` with ngx_conf_set_flag_slot's message. */
export function flagArg(d: Directive): boolean {
  const value = parseFlag(d.args[0]!);
  if (value === null)
    throw configError(`invalid value "${d.args[0]}" in "${d.name}" directive, it must be "on" or "off"`, d);
  return value;
}

/** Parses a complex value and records its variables for the end-of-http check. */
export function complexValue(raw: string, d: Directive, scope: Scope): ComplexValue {
  let value: ComplexValue;
  try {
    value = parseComplexValue(raw);
  } catch (err) {
    if (!hasCode(err, 'RL_ERR_VALUE_SYNTAX')) throw err;
    // ngx_http_script_compile says only "invalid variable name", without the value
    const text = err.message.startsWith('invalid variable name') ? 'invalid variable name' : err.message;
    throw configError(text, d);
  }
  const http = httpOf(scope);
  for (const name of variablesOf(value)) http.variableUses.push({ name, source: ref(d) });
  return value;
}

/** `$name` → `name`, or nginx's `invalid variable name "x"`. */
export function variableName(arg: string, d: Directive): string {
  if (!arg.startsWith('$') || arg.length === 1) throw configError(`invalid variable name "${arg}"`, d);
  return arg.slice(1);
}

/**
 * Registers a variable made by map, geo or keyval. Built-in variables cannot be redefined; defining the
 * same new variable again replaces the earlier definition, as nginx's changeable variables do.
 */
export function defineVariable(name: string, owner: object, d: Directive, scope: Scope): void {
  if (isBuiltinVariable(name)) throw configError(`the duplicate "${name}" variable`, d);
  httpOf(scope).variables.set(name, owner);
}

/**
 * ngx_shared_memory_add: one namespace for limit_req, limit_conn and keyval zones. Size 0 is a
 * reference (from `limit_req`, `limit_conn` or `keyval`) that a zone directive must fill in later.
 */
export function sharedMemoryAdd(
  name: string,
  sizeBytes: number,
  tag: SharedMemoryZone['tag'],
  d: Directive,
  scope: Scope,
): SharedMemoryZone {
  const zones = httpOf(scope).sharedMemory;
  let zone = zones.get(name);
  if (!zone) {
    zone = { tag, sizeBytes, firstUse: ref(d), definedKey: null };
    zones.set(name, zone);
    return zone;
  }
  if (zone.tag !== tag)
    throw configError(`the shared memory zone "${name}" is already declared for a different use`, d);
  if (zone.sizeBytes === 0) zone.sizeBytes = sizeBytes;
  if (sizeBytes !== 0 && sizeBytes !== zone.sizeBytes)
    throw configError(
      `the size ${sizeBytes} of shared memory zone "${name}" conflicts with already declared size ${zone.sizeBytes}`,
      d,
    );
  return zone;
}

/** nginx's minimum zone size: 8 pages of 4 KiB. */
const MIN_ZONE_BYTES = 8 * 4096;

/** A zone directive's `zone=name:size` (limit_req_zone, limit_conn_zone, keyval_zone), nginx's messages. */
export function zoneSizeArg(arg: string, d: Directive): { name: string; sizeBytes: number } {
  const colon = arg.indexOf(':', 5);
  const sizeBytes = colon === -1 ? null : parseSize(arg.slice(colon + 1));
  if (sizeBytes === null) throw configError(`invalid zone size "${arg}"`, d);
  if (sizeBytes < MIN_ZONE_BYTES) throw configError(`zone "${arg}" is too small`, d);
  return { name: arg.slice(5, colon), sizeBytes };
}
