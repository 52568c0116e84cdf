/**
 * ngx_http_headers_filter_module's `add_header name value [always];` in http, server and location:
 * the value is a complex value, evaluated when the answer's head is known; an empty one adds nothing.
 * A level's `add_header` lines replace the enclosing level's (merge.ts).
 */

import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { AddHeaderSpec } from '../model.ts';
import { complexValue, levelOf } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

/** Reads one `add_header` line (ngx_http_headers_add). */
export function parseAddHeader(d: Directive, scope: Scope): AddHeaderSpec {
  const [name, value, flag] = d.args as [string, string, string | undefined];
  if (flag !== undefined && flag !== 'always') throw configError(`invalid parameter "${flag}"`, d);
  return {
    name,
    // an empty value is compiled to nothing at all, as nginx does
    value: value === '' ? null : complexValue(value, d, scope),
    always: flag !== undefined,
  };
}

/**
 * `add_header` inside a location's `if` (its block is read by rewrite-if.ts): nginx allows it there
 * (NGX_HTTP_LIF_CONF), not in a server's `if`.
 */
export function ifAddHeader(d: Directive, scope: Scope): AddHeaderSpec {
  if (scope.location === null) throw configError(`"${d.name}" directive is not allowed here`, d);
  if (d.block) throw configError(`directive "${d.name}" is not terminated by ";"`, d);
  if (d.args.length < 2 || d.args.length > 3)
    throw configError(`invalid number of arguments in "${d.name}" directive`, d);
  const spec = parseAddHeader(d, scope);
  // an `if` regex's captures are not kept (if-condition.ts), so `$1` there would read stale ones
  if (spec.value?.parts.some((p) => 'variable' in p && /^\d$/.test(p.variable)))
    throw configError(
      'regular expression captures in "add_header" inside "if" are not supported by limitswitch',
      d,
    );
  return spec;
}

function addHeader(d: Directive, scope: Scope): void {
  const level = levelOf(scope);
  level.addHeaders ??= [];
  level.addHeaders.push(parseAddHeader(d, scope));
}

export const addHeaderDirectives: readonly DirectiveSpec[] = [
  { name: 'add_header', contexts: ['http', 'server', 'location'], args: [2, 3], handle: addHeader },
];
