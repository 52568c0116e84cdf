/**
 * ngx_http_core_module's location level and the rewrite-phase `return`, plus NGINX Plus `api`
 * (`if` is in rewrite-if.ts).
 */

import { atoi } from '../../engine/scalar-values.ts';
import { newLocation } from '../builders.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { LocationMatch, ReturnSpec } from '../model.ts';
import { compileRegex, namedCaptures } from '../regex.ts';
import { complexValue, defineVariable, duplicate, httpOf, ref } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const MODIFIERS: Record<string, LocationMatch> = { '=': '=', '^~': '^~', '~': '~', '~*': '~*' };

/** `location [= | ^~ | ~ | ~*] uri { … }`, `location @name { … }`, with nginx's nesting rules. */
function location(d: Directive, scope: Scope): void {
  let match: LocationMatch;
  let pattern: string;
  if (d.args.length === 2) {
    const modifier = MODIFIERS[d.args[0]!];
    if (!modifier) throw configError(`invalid location modifier "${d.args[0]}"`, d);
    match = modifier;
    pattern = d.args[1]!;
  } else {
    const name = d.args[0]!;
    if (name.startsWith('=')) [match, pattern] = ['=', name.slice(1)];
    else if (name.startsWith('^~')) [match, pattern] = ['^~', name.slice(2)];
    else if (name.startsWith('~*')) [match, pattern] = ['~*', name.slice(2)];
    else if (name.startsWith('~')) [match, pattern] = ['~', name.slice(1)];
    else [match, pattern] = ['prefix', name];
  }
  const regex = match === '~' || match === '~*';
  const named = d.args.length === 1 && match === 'prefix' && pattern.startsWith('@');
  const compiled = regex ? compileRegex(pattern, match === '~*', d) : null;
  if (regex) {
    for (const capture of namedCaptures(pattern))
      if (!httpOf(scope).variables.has(capture)) defineVariable(capture, {}, d, scope);
  }

  const parent = scope.location;
  if (parent) {
    if (parent.match === '=')
      throw configError(`location "${pattern}" cannot be inside the exact location "${parent.pattern}"`, d);
    if (parent.named)
      throw configError(`location "${pattern}" cannot be inside the named location "${parent.pattern}"`, d);
    if (named) throw configError(`named location "${pattern}" can be on the server level only`, d);
    if (!regex && !pattern.startsWith(parent.pattern))
      throw configError(`location "${pattern}" is outside location "${parent.pattern}"`, d);
  }
  const builder = newLocation(ref(d), match, pattern, compiled, named);
  (parent ?? scope.server!).locations.push(builder);
  scope.session.walkBlock(d, { ...scope, kind: 'location', location: builder });
}

/** `return code [text];`, `return code URL;`, `return URL;` — a step of the level's rewrite script. */
function returnDirective(d: Directive, scope: Scope): void {
  (scope.location ?? scope.server!).script.push({ op: 'return', answer: parseReturn(d, scope) });
}

/** A `return`'s code and text (or URL), checked as nginx checks them. */
export function parseReturn(d: Directive, scope: Scope): ReturnSpec {
  const first = d.args[0]!;
  let code = atoi(first);
  let text: string | null = d.args[1] ?? null;
  if (code === null) {
    if (d.args.length !== 1 || !/^(http:\/\/|https:\/\/|\$scheme)/.test(first))
      throw configError(`invalid return code "${first}"`, d);
    code = 302;
    text = first;
  } else if (code > 999) {
    throw configError(`invalid return code "${first}"`, d);
  }
  const value = text === null ? null : complexValue(text, d, scope);
  return { code, text: value };
}

/** NGINX Plus `api [write=on|off];` — read-only unless `write=on`. */
function api(d: Directive, scope: Scope): void {
  const location = scope.location!;
  if (location.api) throw duplicate(d);
  let write = false;
  for (const arg of d.args) {
    if (arg === 'write=on') write = true;
    else if (arg !== 'write=off') throw configError(`invalid parameter "${arg}"`, d);
  }
  location.api = { write };
  // the content handler set last wins, as between nginx modules
  location.proxyPass = null;
}

export const locationDirectives: readonly DirectiveSpec[] = [
  { name: 'location', contexts: ['server', 'location'], block: true, args: [1, 2], handle: location },
  { name: 'return', contexts: ['server', 'location'], args: [1, 2], handle: returnDirective },
  { name: 'api', contexts: ['location'], args: [0, 1], handle: api },
];
