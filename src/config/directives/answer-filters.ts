/**
 * What a level gives its answers beyond `add_header`: ngx_http_headers_filter's `expires` and
 * ngx_http_core_module's `limit_rate` / `limit_rate_after` (http, server, location, and a
 * location's `if`, whose block rewrite-if.ts reads with these handlers).
 */
import { parseExpires } from '../../engine/http/expires.ts';
import { parseSize } from '../../engine/scalar-values.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { complexValue, duplicate, levelOf } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

/** `expires [modified] time | epoch | max | off` (ngx_http_headers_expires). */
function expires(d: Directive, scope: Scope): void {
  const answer = levelOf(scope).answer;
  if (answer.expires !== undefined) throw duplicate(d);
  if (d.args.length === 2 && d.args[0] !== 'modified')
    throw configError(`"${d.name}" directive invalid value`, d);
  const kind = d.args.length === 2 ? 'modified' : 'access';
  const raw = d.args.at(-1)!;
  const value = complexValue(raw, d, scope);
  if (value.parts.some((part) => 'variable' in part)) {
    answer.expires = { kind, timeS: 0, value };
    return;
  }
  const read = parseExpires(raw, kind);
  if ('error' in read) throw configError(`"${d.name}" directive ${read.error}`, d);
  answer.expires = { ...read, value: null };
}

/** `limit_rate` / `limit_rate_after` (ngx_http_set_complex_value_size_slot): a size or a value with variables. */
function rateSize(d: Directive, scope: Scope): void {
  const answer = levelOf(scope).answer;
  const key = d.name === 'limit_rate' ? 'limitRate' : 'limitRateAfter';
  if (answer[key] !== undefined) throw duplicate(d);
  const value = complexValue(d.args[0]!, d, scope);
  if (!value.parts.some((part) => 'variable' in part) && parseSize(d.args[0]!) === null)
    throw configError(`"${d.name}" directive invalid value`, d);
  answer[key] = value;
}

const HSL = ['http', 'server', 'location'] as const;

export const answerFilterDirectives: readonly DirectiveSpec[] = [
  { name: 'expires', contexts: HSL, args: [1, 2], handle: expires },
  { name: 'limit_rate', contexts: HSL, args: [1], handle: rateSize },
  { name: 'limit_rate_after', contexts: HSL, args: [1], handle: rateSize },
];
