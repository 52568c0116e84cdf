/**
 * ngx_http_proxy_module's `proxy_pass`, its timeouts (`proxy_connect_timeout`, `proxy_read_timeout`,
 * `proxy_send_timeout`), `proxy_set_header` (the request head sent upstream), and `proxy_http_version`,
 * which with it decides whether a location tunnels WebSocket upgrades (see proxy-upgrade.ts); `proxy_next_upstream*` and `proxy_pass_request_*`
 * are proxy-rules.ts'. Other proxy_* directives only tune the proxying and are in the ignored list.
 */

import { parseHostPort, splitUnixUrl, unixAddressOf, unixPathError } from '../../engine/net/address-text.ts';
import { parseTimeMs } from '../../engine/scalar-values.ts';
import type { LevelBuilder, LocationBuilder } from '../builders.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { complexValue, duplicate, httpOf, levelOf, ref } from './helpers.ts';
import { proxyRuleDirectives } from './proxy-rules.ts';
import type { DirectiveSpec, Scope } from './types.ts';

/** Locations that already had a proxy_pass (it may since have been replaced by `api`). */
const proxied = new WeakSet<LocationBuilder>();

/**
 * `proxy_pass http://host[:port][/uri];` (`https://`: TLS to the servers, proxy-ssl.ts's settings),
 * `http://unix:/path[:uri]`, or a URL with variables (resolved per request).
 */
function proxyPass(d: Directive, scope: Scope): void {
  const location = scope.location!;
  if (proxied.has(location)) throw duplicate(d);
  proxied.add(location);
  const url = d.args[0]!;
  location.proxyPass = url;
  location.api = null;
  if (url.includes('$')) {
    complexValue(url, d, scope);
    return;
  }
  const scheme = /^https?:\/\//i.exec(url);
  if (!scheme) throw configError('invalid URL prefix', d);
  const rest = url.slice(scheme[0].length);
  const hasUri = unixAddressOf(rest) === null ? hostTarget(d, scope, rest) : unixTarget(d, scheme[0], rest);
  if (hasUri && (location.named || location.match === '~' || location.match === '~*'))
    throw configError(
      '"proxy_pass" cannot have URI part in location given by regular expression, or inside named location, ' +
        'or inside "if" statement, or inside "limit_except" block',
      d,
    );
}

/** `host[:port][/uri]`, its host checked when the configuration is whole (finish.ts); true with a URI. */
function hostTarget(d: Directive, scope: Scope, rest: string): boolean {
  const uriStart = rest.search(/[/?]/);
  const authority = uriStart === -1 ? rest : rest.slice(0, uriStart);
  const parsed = parseHostPort(authority, false);
  if (parsed.error !== undefined || parsed.host === null)
    throw configError(`${parsed.error ?? 'invalid host'} in upstream "${rest}"`, d);
  httpOf(scope).proxyTargets.push({ host: parsed.host, port: parsed.port, source: ref(d) });
  return uriStart !== -1;
}

/**
 * `unix:/path[:uri]` (ngx_parse_unix_domain_url: the URI follows the path's first `:`; an empty one is
 * none); true with a URI. TLS over it is refused: the upstream client's TLS connects to TCP addresses.
 */
function unixTarget(d: Directive, scheme: string, rest: string): boolean {
  if (scheme.toLowerCase() === 'https://')
    throw configError('"proxy_pass https://unix:" is not supported by limitswitch', d);
  const { address, uri } = splitUnixUrl(rest);
  const error = unixPathError(address);
  if (error !== null) throw configError(`${error} in upstream "${rest}"`, d);
  return uri !== null && uri !== '';
}

type TimeoutField = 'proxyConnectTimeoutMs' | 'proxyReadTimeoutMs' | 'proxySendTimeoutMs';

/** `proxy_*_timeout time;` — ngx_conf_set_msec_slot. */
function timeout(field: TimeoutField): (d: Directive, scope: Scope) => void {
  return (d, scope) => {
    const level: LevelBuilder = levelOf(scope);
    if (level[field] !== null) throw duplicate(d);
    const ms = parseTimeMs(d.args[0]!);
    if (ms === null) throw configError(`"${d.name}" directive invalid value`, d);
    level[field] = ms;
  };
}

/** `proxy_http_version 1.0 | 1.1;` — ngx_conf_set_enum_slot. */
function httpVersion(d: Directive, scope: Scope): void {
  const level = levelOf(scope);
  if (level.proxyHttpVersion !== null) throw duplicate(d);
  const value = d.args[0]!;
  if (value !== '1.0' && value !== '1.1') throw configError(`invalid value "${value}"`, d);
  level.proxyHttpVersion = value;
}

/** Names whose lines frame the body: the upstream client writes them from the body it sends. */
const FRAMING = new Set(['content-length', 'transfer-encoding']);

/**
 * `proxy_set_header field value;` — the value a complex value (its variables checked when the whole
 * configuration loads), evaluated per request (src/engine/http/proxy-headers.ts); written empty, the
 * field is not sent. A level's lines replace the enclosing level's (merge.ts).
 */
function setHeader(d: Directive, scope: Scope): void {
  const [field, value] = d.args as [string, string];
  if (value !== '' && FRAMING.has(field.toLowerCase()))
    throw configError(`a "${field}" value in "proxy_set_header" is not supported by limitswitch`, d);
  const level = levelOf(scope);
  level.proxySetHeaders ??= [];
  level.proxySetHeaders.push({ field, value, complex: value === '' ? null : complexValue(value, d, scope) });
}

const LEVELS = ['http', 'server', 'location'] as const;

export const proxyDirectives: readonly DirectiveSpec[] = [
  { name: 'proxy_pass', contexts: ['location'], args: [1], handle: proxyPass },
  { name: 'proxy_connect_timeout', contexts: LEVELS, args: [1], handle: timeout('proxyConnectTimeoutMs') },
  { name: 'proxy_read_timeout', contexts: LEVELS, args: [1], handle: timeout('proxyReadTimeoutMs') },
  { name: 'proxy_send_timeout', contexts: LEVELS, args: [1], handle: timeout('proxySendTimeoutMs') },
  { name: 'proxy_http_version', contexts: LEVELS, args: [1], handle: httpVersion },
  { name: 'proxy_set_header', contexts: LEVELS, args: [2], handle: setHeader },
  ...proxyRuleDirectives,
];
