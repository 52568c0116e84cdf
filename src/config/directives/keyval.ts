/**
 * NGINX Plus ngx_http_keyval_module: keyval_zone and keyval. The module is closed source; parameters
 * follow its documentation and messages follow the patterns of the open-source zone directives
 * (limit_req_zone), with the same 32k minimum zone size.
 */

import type { KeyvalType } from '../../engine/keyval/keyval-zone.ts';
import { parseTimeMs } from '../../engine/scalar-values.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { KeyvalSpec } from '../model.ts';
import {
  complexValue,
  defineVariable,
  httpOf,
  ref,
  sharedMemoryAdd,
  variableName,
  zoneSizeArg,
} from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const TYPES: readonly KeyvalType[] = ['string', 'ip', 'prefix'];

/** `keyval_zone zone=name:size [state=file] [timeout=time] [type=string|ip|prefix] [sync];` */
function keyvalZone(d: Directive, scope: Scope): void {
  let name = '';
  let sizeBytes = 0;
  let stateFile: string | null = null;
  let timeoutMs: number | null = null;
  let type: KeyvalType = 'string';
  let sync = false;
  for (const arg of d.args) {
    if (arg.startsWith('zone=')) {
      ({ name, sizeBytes } = zoneSizeArg(arg, d));
    } else if (arg.startsWith('state=')) {
      if (arg.length === 6) throw configError(`invalid parameter "${arg}"`, d);
      stateFile = arg.slice(6);
    } else if (arg.startsWith('timeout=')) {
      const ms = parseTimeMs(arg.slice(8));
      if (ms === null || ms === 0) throw configError(`invalid timeout value "${arg}"`, d);
      timeoutMs = ms;
    } else if (arg.startsWith('type=')) {
      const value = TYPES.find((t) => t === arg.slice(5));
      if (!value) throw configError(`invalid type value "${arg}"`, d);
      type = value;
    } else if (arg === 'sync') {
      sync = true;
    } else {
      throw configError(`invalid parameter "${arg}"`, d);
    }
  }
  if (name === '') throw configError(`"${d.name}" must have "zone" parameter`, d);
  if (sync && timeoutMs === null) throw configError('"sync" requires "timeout"', d);
  const zone = sharedMemoryAdd(name, sizeBytes, 'keyval', d, scope);
  if (zone.definedKey !== null) throw configError(`duplicate zone "${name}"`, d);
  zone.definedKey = '';
  httpOf(scope).keyvalZones.push({ name, sizeBytes, stateFile, timeoutMs, type, sync, source: ref(d) });
}

/** `keyval key $variable zone=name;` — the zone may be declared before or after. */
function keyval(d: Directive, scope: Scope): void {
  const key = complexValue(d.args[0]!, d, scope);
  const variable = variableName(d.args[1]!, d);
  const zoneArg = d.args[2]!;
  if (!zoneArg.startsWith('zone=') || zoneArg.length === 5)
    throw configError(`invalid parameter "${zoneArg}"`, d);
  const zone = zoneArg.slice(5);
  sharedMemoryAdd(zone, 0, 'keyval', d, scope);
  const spec: KeyvalSpec = { key, variable, zone, source: ref(d) };
  defineVariable(variable, spec, d, scope);
  httpOf(scope).keyvals.push(spec);
}

export const keyvalDirectives: readonly DirectiveSpec[] = [
  { name: 'keyval_zone', contexts: ['http'], args: [1, 2, 3, 4, 5], handle: keyvalZone },
  { name: 'keyval', contexts: ['http'], args: [3], handle: keyval },
];
