/**
 * The proxy module's rules for one location's requests to its servers, after inheritance:
 * `proxy_next_upstream` (when a request goes on to the next server), `proxy_next_upstream_tries`,
 * `proxy_next_upstream_timeout`, `proxy_pass_request_headers`, `proxy_pass_request_body`,
 * `proxy_intercept_errors`, `proxy_ignore_headers`, `proxy_hide_header` and `proxy_pass_header`.
 */

/** `proxy_next_upstream`'s conditions (nginx's NGX_HTTP_UPSTREAM_FT_* bits, by their names); `off` wins. */
export type NextUpstreamCondition =
  | 'off'
  | 'error'
  | 'timeout'
  | 'invalid_header'
  | 'http_500'
  | 'http_502'
  | 'http_503'
  | 'http_504'
  | 'http_403'
  | 'http_404'
  | 'http_429'
  | 'non_idempotent';

/** The statuses `proxy_next_upstream http_NNN` names (ngx_http_upstream_next_errors). */
export const NEXT_UPSTREAM_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504, 403, 404, 429]);

/**
 * The answer fields `proxy_ignore_headers` may name (ngx_http_upstream_ignore_headers_masks). Of
 * these the replica acts only on X-Accel-Limit-Rate; the others drive caching, buffering, charsets
 * and X-Accel-Redirect, which it does not have, so naming them changes nothing.
 */
export const IGNORABLE_UPSTREAM_HEADERS = [
  'X-Accel-Redirect',
  'X-Accel-Expires',
  'X-Accel-Limit-Rate',
  'X-Accel-Buffering',
  'X-Accel-Charset',
  'Expires',
  'Cache-Control',
  'Set-Cookie',
  'Vary',
] as const;

export type IgnorableUpstreamHeader = (typeof IGNORABLE_UPSTREAM_HEADERS)[number];

export interface ProxyRules {
  /** The conditions that send a request on to the next server; empty: `off`. */
  readonly nextUpstream: ReadonlySet<NextUpstreamCondition>;
  /** `proxy_next_upstream_tries` (0: as many as the group has servers). */
  readonly nextUpstreamTries: number;
  /** `proxy_next_upstream_timeout` in ms, from the first try's start (0: none). */
  readonly nextUpstreamTimeoutMs: number;
  readonly passRequestHeaders: boolean;
  readonly passRequestBody: boolean;
  /** `proxy_intercept_errors`: an answer of 300 or more with an `error_page` in force gets the page. */
  readonly interceptErrors: boolean;
  /** `proxy_ignore_headers`: the answer fields whose processing is off (none by default). */
  readonly ignoreHeaders: ReadonlySet<IgnorableUpstreamHeader>;
  /**
   * `proxy_hide_header` and `proxy_pass_header`, lower-cased: answer fields not relayed beyond nginx's
   * defaults (Date, Server, X-Pad, X-Accel-*), and fields relayed that those would hide. Each list is
   * inherited whole from the level above unless the level writes its own.
   */
  readonly hideHeaders: ReadonlySet<string>;
  readonly passHeaders: ReadonlySet<string>;
}

/** nginx's defaults: `proxy_next_upstream error timeout`, no limits, headers and body passed, no interception, nothing ignored. */
export const DEFAULT_PROXY_RULES: ProxyRules = Object.freeze({
  nextUpstream: new Set<NextUpstreamCondition>(['error', 'timeout']),
  nextUpstreamTries: 0,
  nextUpstreamTimeoutMs: 0,
  passRequestHeaders: true,
  passRequestBody: true,
  interceptErrors: false,
  ignoreHeaders: new Set<IgnorableUpstreamHeader>(),
  hideHeaders: new Set<string>(),
  passHeaders: new Set<string>(),
});

/** A level's own rules over the enclosing level's: each directive written at the level wins. */
export function mergeProxyRules(own: Partial<ProxyRules> | null, parent: ProxyRules): ProxyRules {
  return own === null ? parent : { ...parent, ...own };
}

/**
 * ngx_http_upstream_next's test: whether a try that failed with `condition` goes on to another
 * server — the condition named, and `non_idempotent` too once a POST, LOCK or PATCH was sent.
 */
export function nextUpstreamAllows(
  rules: ProxyRules,
  condition: NextUpstreamCondition,
  nonIdempotentSent: boolean,
): boolean {
  if (rules.nextUpstream.has('off') || !rules.nextUpstream.has(condition)) return false;
  return !nonIdempotentSent || rules.nextUpstream.has('non_idempotent');
}
