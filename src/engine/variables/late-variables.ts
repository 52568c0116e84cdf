/**
 * The variables whose values come after the decision (request-progress.ts): the upstream module's
 * `$upstream_*`, and `$request_time`, `$status`, `$connection`, `$connection_requests`,
 * `$connection_time`, `$body_bytes_sent`, `$time_local`, `$time_iso8601`, `$request`, `$remote_user`, `$limit_rate`. nginx marks them all non-cacheable: each read sees the request as it is then.
 */

import type { RequestContext } from './request-context.ts';
import {
  headerByVariableName,
  joinStates,
  type RequestProgress,
  secondsText,
  sentHeaderValue,
  setCookieValue,
  type UpstreamState,
} from './request-progress.ts';

type Getter = (ctx: RequestContext) => string;

/** Over the upstream states; empty (nginx's not found) before any server was tried. */
function states(one: (state: UpstreamState) => string): Getter {
  return (ctx) => {
    const list = ctx.facts.progress?.upstreamStates;
    return list === undefined || list.length === 0 ? '' : joinStates(list, one);
  };
}

function progress(ctx: RequestContext): RequestProgress | undefined {
  return ctx.facts.progress;
}

/** The exact names, each non-cacheable. */
export const LATE_VARIABLES: Readonly<Record<string, Getter>> = {
  upstream_addr: states((s) => s.peer ?? ''),
  upstream_status: states((s) => (s.status === 0 ? '-' : String(s.status))),
  upstream_connect_time: states((s) => secondsText(s.connectMs)),
  upstream_header_time: states((s) => secondsText(s.headerMs)),
  upstream_response_time: states((s) => secondsText(s.responseMs)),
  upstream_response_length: states((s) => String(s.responseLength)),
  upstream_bytes_received: states((s) => String(s.bytesReceived)),
  upstream_bytes_sent: states((s) => String(s.bytesSent)),
  request_time: (ctx) => {
    const now = progress(ctx);
    return secondsText(now === undefined ? 0 : now.elapsedMs);
  },
  // ngx_http_variable_status: `%03ui`, 000 before the answer's head
  status: (ctx) => String(progress(ctx)?.status ?? 0).padStart(3, '0'),
  connection: (ctx) => String(ctx.facts.connectionNumber ?? 0),
  connection_requests: (ctx) => String(ctx.facts.connectionRequests ?? 0),
  connection_time: (ctx) => secondsText(ctx.facts.connectionMs ?? 0),
  proxy_host: (ctx) => progress(ctx)?.proxyHost ?? '',
  proxy_port: (ctx) => progress(ctx)?.proxyPort ?? '',
  body_bytes_sent: (ctx) => String(progress(ctx)?.bodyBytesSent ?? 0),
  time_local: (ctx) => progress(ctx)?.timeLocal ?? '',
  time_iso8601: (ctx) => progress(ctx)?.timeIso8601 ?? '',
  // the request line as it came (an HTTP/2 request's made up as nginx makes it)
  request: (ctx) => {
    const protocol = ctx.facts.protocol ?? 'HTTP/1.1';
    // HTTP/0.9's simple request has no version on its line
    return protocol === ''
      ? `${ctx.facts.method} ${ctx.facts.target}`
      : `${ctx.facts.method} ${ctx.facts.target} ${protocol}`;
  },
  // no auth_basic here: never found
  remote_user: () => '',
  // `set $limit_rate`'s, else the rate the answer is written at (ngx_http_variable_request_get_size)
  limit_rate: (ctx) => String(ctx.limitRate ?? progress(ctx)?.limitRate ?? 0),
  // known once the answer is out: ngx_http_variable_sent_connection, _sent_keep_alive
  sent_http_connection: (ctx) => {
    const done = progress(ctx);
    return done?.status === 101 ? 'upgrade' : done?.keepAlive === true ? 'keep-alive' : 'close';
  },
  sent_http_keep_alive: (ctx) => {
    const done = progress(ctx);
    const seconds = done?.keepAliveHeaderS ?? null;
    return done?.keepAlive === true && seconds !== null ? `timeout=${seconds}` : '';
  },
};

/**
 * The families: `$upstream_http_NAME` (the answer's field), `$upstream_cookie_NAME` (its Set-Cookie),
 * `$sent_http_NAME` (the client answer's field).
 */
export const LATE_VARIABLE_PREFIXES: readonly string[] = ['upstream_http_', 'upstream_cookie_', 'sent_http_'];

/** The getter of a late variable (exact or of a family), or undefined. */
export function lateGetter(name: string): Getter | undefined {
  const exact = LATE_VARIABLES[name];
  if (exact !== undefined) return exact;
  if (name.startsWith('upstream_http_')) {
    const wanted = name.slice(14).toLowerCase();
    return (ctx) => headerByVariableName(progress(ctx)?.upstreamHeaders ?? null, wanted);
  }
  if (name.startsWith('sent_http_')) {
    const wanted = name.slice(10).toLowerCase();
    return (ctx) => sentHeaderValue(progress(ctx)?.sentHeaders ?? null, wanted);
  }
  if (name.startsWith('upstream_cookie_')) {
    const cookie = name.slice(16);
    return (ctx) => setCookieValue(progress(ctx)?.upstreamHeaders ?? null, cookie);
  }
  return undefined;
}

/** Whether `name` is one of these (all non-cacheable). */
export function isLateVariable(name: string): boolean {
  if (Object.hasOwn(LATE_VARIABLES, name)) return true;
  return LATE_VARIABLE_PREFIXES.some((prefix) => name.startsWith(prefix) && name.length > prefix.length);
}
