/**
 * What the data path learns of a request after its decision — the servers it tried, the answer's head,
 * the time gone — which nginx's late variables read (ngx_http_upstream.c's `$upstream_*`,
 * ngx_http_variables.c's `$request_time`, `$status`, `$connection*`): read where nginx reads them,
 * add_header on the answer's head, the access log at the end. The replica fills it in; the engine only
 * reads it, so it stays free of clocks and sockets.
 */

/** One entry of nginx's `r->upstream_states`: a server tried (or, peer null, an internal redirect). */
export interface UpstreamState {
  /** `host:port` of the server (the group's name when none was live); null: a redirect's separator. */
  peer: string | null;
  /** The answer's status, or nginx's for the failure (502, 504); 0: none (`-`). */
  status: number;
  /** ms from the try's start; -1: not reached (`-`). */
  connectMs: number;
  headerMs: number;
  responseMs: number;
  /** `$upstream_response_length`: the body's bytes. */
  responseLength: number;
  /** `$upstream_bytes_received`: head and body. */
  bytesReceived: number;
  /** `$upstream_bytes_sent`. */
  bytesSent: number;
}

/** A fresh try of `peer`, as ngx_http_upstream_connect starts one. */
export function newUpstreamState(peer: string | null): UpstreamState {
  const unknown = peer === null ? 0 : -1;
  return {
    peer,
    status: 0,
    connectMs: unknown,
    headerMs: unknown,
    responseMs: unknown,
    responseLength: 0,
    bytesReceived: 0,
    bytesSent: 0,
  };
}

/** What the replica reports of a request in progress. */
export interface RequestProgress {
  /** nginx's `r->upstream_states`, in order. */
  readonly upstreamStates: readonly UpstreamState[];
  /** The upstream answer's head as `[name, value, …]`, as the server sent it; null before one. */
  readonly upstreamHeaders: readonly string[] | null;
  /** ms since the request began, on a clock that stands still within one turn of the event loop. */
  readonly elapsedMs: number;
  /** The answer's status once its head is known; 0 before. */
  readonly status: number;
  /** The answer's head as written to the client (`$sent_http_*`), `[name, value, …]`; null before. */
  readonly sentHeaders?: readonly string[] | null;
  /** `$proxy_host` and `$proxy_port`: the `proxy_pass` target's host (with its port unless 80), its port. */
  readonly proxyHost?: string;
  readonly proxyPort?: string;
  /** The answer's body rate, bytes/s, once its writing began (`$limit_rate` then); 0: none. */
  readonly limitRate?: number;
  /** `$body_bytes_sent` once the answer is out. */
  readonly bodyBytesSent?: number;
  /** Once the answer is out: the connection stays open; the `Keep-Alive: timeout=` value sent, s (null: none). */
  readonly keepAlive?: boolean;
  readonly keepAliveHeaderS?: number | null;
  /** `$time_local`, `$time_iso8601`: the local time when a variable is read, as nginx prints it. */
  readonly timeLocal?: string;
  readonly timeIso8601?: string;
  /**
   * `$request_body`: the body once read whole into memory (a byte string); '' before, without one, when
   * it streamed to the server or went to a file (ngx_http_variable_request_body's not found).
   */
  readonly requestBody?: string;
  /** `$request_body_file`: the file the body was written to; '' when none. */
  readonly requestBodyFile?: string;
}

/**
 * The states joined as nginx joins them: `, ` between the servers of one upstream, ` : ` where an
 * internal redirect went to another (the separator's own entry is skipped).
 */
export function joinStates(states: readonly UpstreamState[], one: (state: UpstreamState) => string): string {
  let out = '';
  for (let i = 0; i < states.length; i++) {
    out += one(states[i]!);
    if (i + 1 === states.length) break;
    if (states[i + 1]!.peer !== null) out += ', ';
    else {
      out += ' : ';
      i++;
    }
  }
  return out;
}

/** `%T.%03M` of ms, `-` for -1 (a negative time is printed as 0). */
export function secondsText(ms: number): string {
  if (ms === -1) return '-';
  const whole = Math.max(0, Math.floor(ms));
  return `${Math.floor(whole / 1000)}.${String(whole % 1000).padStart(3, '0')}`;
}

/** ngx_http_variable_unknown_header: the first field whose name, `-` read as `_`, is `wanted`. */
export function headerByVariableName(headers: readonly string[] | null, wanted: string): string {
  if (headers === null) return '';
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    if (name.length === wanted.length && name.toLowerCase().replaceAll('-', '_') === wanted)
      return headers[i + 1]!;
  }
  return '';
}

/** The fields ngx_http_header_filter writes itself, outside `r->headers_out.headers`: never found. */
const FILTER_WRITTEN: ReadonlySet<string> = new Set(['server', 'date']);

/**
 * `$sent_http_NAME` (ngx_http_variable_unknown_header_out): the first field of the answer's head so
 * named; `Cache-Control` and `Link` all of theirs joined with `, ` (ngx_http_variable_headers).
 */
export function sentHeaderValue(headers: readonly string[] | null, wanted: string): string {
  if (headers === null || FILTER_WRITTEN.has(wanted)) return '';
  if (wanted !== 'cache_control' && wanted !== 'link') return headerByVariableName(headers, wanted);
  const values: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase().replaceAll('-', '_') === wanted) values.push(headers[i + 1]!);
  }
  return values.join(', ');
}

/** ngx_http_parse_set_cookie_lines: `name`'s value in the first `Set-Cookie` line that starts with it. */
export function setCookieValue(headers: readonly string[] | null, name: string): string {
  if (headers === null) return '';
  const lower = name.toLowerCase();
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i]!.toLowerCase() !== 'set-cookie') continue;
    const value = headers[i + 1]!;
    if (name.length >= value.length || value.slice(0, name.length).toLowerCase() !== lower) continue;
    let at = name.length;
    while (at < value.length && value[at] === ' ') at++;
    if (value[at] !== '=') continue;
    at++;
    while (at < value.length && value[at] === ' ') at++;
    const end = value.indexOf(';', at);
    return value.slice(at, end === -1 ? value.length : end);
  }
  return '';
}
