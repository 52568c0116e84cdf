/**
 * The proxy module's directives for how a location's requests go to its servers:
 * `proxy_next_upstream` (ngx_conf_set_bitmask_slot: lines add up, `off` wins), `proxy_next_upstream_tries`
 * (a number), `proxy_next_upstream_timeout` (a time), `proxy_pass_request_headers` and
 * `proxy_pass_request_body`, `proxy_intercept_errors` (flags), `proxy_ignore_headers` (a bitmask: lines add
 * up, names in any case), `proxy_hide_header` and `proxy_pass_header` (a field name a line, lines add up)
 * — into the level's `proxyRules` (src/engine/http/proxy-rules.ts).
 */
import {
  IGNORABLE_UPSTREAM_HEADERS,
  type IgnorableUpstreamHeader,
  type NextUpstreamCondition,
  type ProxyRules,
} from '../../engine/http/proxy-rules.ts';
import { atoi, parseTimeMs } from '../../engine/scalar-values.ts';
import type { LevelBuilder } from '../builders.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { duplicate, flagArg, levelOf } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const CONDITIONS: ReadonlySet<string> = new Set<NextUpstreamCondition>([
  'off',
  'error',
  'timeout',
  'invalid_header',
  'http_500',
  'http_502',
  'http_503',
  'http_504',
  'http_403',
  'http_404',
  'http_429',
  'non_idempotent',
]);

type OwnRules = { -readonly [K in keyof ProxyRules]?: ProxyRules[K] };

function own(scope: Scope): OwnRules {
  const level: LevelBuilder = levelOf(scope);
  level.proxyRules ??= {};
  return level.proxyRules;
}

/** `proxy_next_upstream condition …;` — `updating` is the cache's (there is none here: it never applies). */
function nextUpstream(d: Directive, scope: Scope): void {
  const rules = own(scope);
  const conditions = new Set(rules.nextUpstream);
  for (const value of d.args) {
    if (value === 'updating') continue;
    if (!CONDITIONS.has(value)) throw configError(`invalid value "${value}"`, d);
    conditions.add(value as NextUpstreamCondition);
  }
  rules.nextUpstream = conditions;
}

/** `proxy_ignore_headers field …;` — ngx_conf_set_bitmask_slot: nginx's names, compared without case. */
function ignoreHeaders(d: Directive, scope: Scope): void {
  const rules = own(scope);
  const fields = new Set(rules.ignoreHeaders);
  for (const value of d.args) {
    const field = IGNORABLE_UPSTREAM_HEADERS.find((name) => name.toLowerCase() === value.toLowerCase());
    if (field === undefined) throw configError(`invalid value "${value}"`, d);
    fields.add(field as IgnorableUpstreamHeader);
  }
  rules.ignoreHeaders = fields;
}

/** `proxy_hide_header field;` / `proxy_pass_header field;` — ngx_conf_set_str_array_slot. */
function headerList(field: 'hideHeaders' | 'passHeaders'): (d: Directive, scope: Scope) => void {
  return (d, scope) => {
    const rules = own(scope);
    rules[field] = new Set(rules[field]).add(d.args[0]!.toLowerCase());
  };
}

/**
 * `proxy_redirect off;` is what the replica does: a server's `Location` and `Refresh` are relayed as
 * they are. nginx's rewriting of them (`default`, nginx's own default, and `redirect replacement`) is
 * not done, so those forms are refused rather than accepted and ignored.
 */
function redirect(d: Directive): void {
  if (d.args.length === 1 && d.args[0] === 'off') return;
  throw configError(
    '"proxy_redirect" is not supported by limitswitch (only "proxy_redirect off": a server\'s Location is relayed as it is)',
    d,
  );
}

function tries(d: Directive, scope: Scope): void {
  const rules = own(scope);
  if (rules.nextUpstreamTries !== undefined) throw duplicate(d);
  const n = atoi(d.args[0]!);
  if (n === null) throw configError(`"${d.name}" directive invalid number`, d);
  rules.nextUpstreamTries = n;
}

function timeout(d: Directive, scope: Scope): void {
  const rules = own(scope);
  if (rules.nextUpstreamTimeoutMs !== undefined) throw duplicate(d);
  const ms = parseTimeMs(d.args[0]!);
  if (ms === null) throw configError(`"${d.name}" directive invalid value`, d);
  rules.nextUpstreamTimeoutMs = ms;
}

function pass(
  field: 'passRequestHeaders' | 'passRequestBody' | 'interceptErrors',
): (d: Directive, scope: Scope) => void {
  return (d, scope) => {
    const rules = own(scope);
    if (rules[field] !== undefined) throw duplicate(d);
    rules[field] = flagArg(d);
  };
}

const LEVELS = ['http', 'server', 'location'] as const;

export const proxyRuleDirectives: readonly DirectiveSpec[] = [
  { name: 'proxy_next_upstream', contexts: LEVELS, args: '1+', handle: nextUpstream },
  { name: 'proxy_next_upstream_tries', contexts: LEVELS, args: [1], handle: tries },
  { name: 'proxy_next_upstream_timeout', contexts: LEVELS, args: [1], handle: timeout },
  { name: 'proxy_pass_request_headers', contexts: LEVELS, args: [1], handle: pass('passRequestHeaders') },
  { name: 'proxy_pass_request_body', contexts: LEVELS, args: [1], handle: pass('passRequestBody') },
  { name: 'proxy_intercept_errors', contexts: LEVELS, args: [1], handle: pass('interceptErrors') },
  { name: 'proxy_ignore_headers', contexts: LEVELS, args: '1+', handle: ignoreHeaders },
  { name: 'proxy_hide_header', contexts: LEVELS, args: [1], handle: headerList('hideHeaders') },
  { name: 'proxy_redirect', contexts: LEVELS, args: [1, 2], handle: redirect },
  { name: 'proxy_pass_header', contexts: LEVELS, args: [1], handle: headerList('passHeaders') },
];
