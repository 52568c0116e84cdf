/**
 * The header lines ngx_http_proxy_create_request writes from the configuration: the `proxy_set_header`
 * lines in force, in their order, then nginx's defaults (ngx_http_proxy_headers) whose names they do
 * not set — `Host $proxy_host`, `Connection close`, the body's `Content-Length` and
 * `Transfer-Encoding`, and `TE`, `Keep-Alive`, `Expect`, `Upgrade` set empty. A value is evaluated
 * for the request; an empty one sends nothing. The client's lines follow, but none whose name the set
 * holds (ngx_http_proxy_init_headers' hash), whatever its value.
 *
 * Connection, Content-Length, Transfer-Encoding and Upgrade are the data path's: it frames the body,
 * keeps the connection, and tunnels an upgrade; they are kept here as names, and a Connection line's
 * value for whether it says `close` (the server then closes the connection after its answer, as it
 * does for nginx: the request is the connection's last).
 */

import type { RequestContext } from '../variables/request-context.ts';
import type { VariableGetter } from '../variables/variable-table.ts';

/** One line of the set to evaluate: its name as written, its compiled value. */
export interface ProxyHeaderLine {
  readonly name: string;
  readonly value: VariableGetter;
}

/** A location's set, compiled. */
export interface ProxyHeaders {
  /** The lines to evaluate per request, in nginx's order; Host among them unless a default. */
  readonly lines: readonly ProxyHeaderLine[];
  /** `Host` is nginx's default, `$proxy_host`: the data path writes it without evaluating anything. */
  readonly hostIsProxyHost: boolean;
  /** Lower-cased names of the whole set: a client's line with one of them is not sent. */
  readonly names: ReadonlySet<string>;
  /** Lengths of those names: a client's name of another length is sent without being lower-cased. */
  readonly nameLengths: ReadonlySet<number>;
  /** A `Connection` line's value (null: none written, or written empty). */
  readonly connection: VariableGetter | null;
  /** The set bound to no request, for a set with no lines to evaluate (nothing is allocated then). */
  readonly unbound: BoundProxyHeaders;
}

/** The set bound to one request: its lines' values, evaluated when the request head is made. */
export interface BoundProxyHeaders {
  readonly headers: ProxyHeaders;
  /** null: the set has no lines to evaluate. */
  readonly ctx: RequestContext | null;
}

/** ngx_http_proxy_headers, by lower-cased name. */
const DEFAULT_NAMES = [
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'te',
  'keep-alive',
  'expect',
  'upgrade',
] as const;

/** The names whose lines the data path writes itself (see the file's comment). */
const DATA_PATH_NAMES: ReadonlySet<string> = new Set([
  'connection',
  'content-length',
  'transfer-encoding',
  'upgrade',
]);

/** One `proxy_set_header` line: its value compiled, null when written empty. */
export interface ProxySetHeaderLine {
  readonly name: string;
  readonly value: VariableGetter | null;
}

/** The set of a location with no `proxy_set_header` lines: nginx's defaults alone. */
export const DEFAULT_PROXY_HEADERS: ProxyHeaders = compileProxyHeaders([]);

/** The set from the lines in force after inheritance (a level's own lines replace the enclosing level's). */
export function compileProxyHeaders(set: readonly ProxySetHeaderLine[]): ProxyHeaders {
  const names = new Set<string>();
  const lines: ProxyHeaderLine[] = [];
  let hostIsProxyHost = true;
  let connection: VariableGetter | null = null;
  for (const line of set) {
    const lower = line.name.toLowerCase();
    names.add(lower);
    if (lower === 'host') hostIsProxyHost = false;
    if (lower === 'connection') connection = line.value;
    if (line.value !== null && !DATA_PATH_NAMES.has(lower))
      lines.push({ name: line.name, value: line.value });
  }
  for (const name of DEFAULT_NAMES) names.add(name);
  const nameLengths = new Set([...names].map((name) => name.length));
  const unbound: { headers: ProxyHeaders | null; ctx: null } = { headers: null, ctx: null };
  const headers: ProxyHeaders = {
    lines,
    hostIsProxyHost,
    names,
    nameLengths,
    connection,
    unbound: unbound as BoundProxyHeaders,
  };
  unbound.headers = headers;
  return headers;
}

/** The set bound to the request (a set with no lines to evaluate is not bound: nothing is allocated). */
export function bindProxyHeaders(headers: ProxyHeaders, ctx: RequestContext): BoundProxyHeaders {
  return headers.lines.length === 0 && headers.connection === null ? headers.unbound : { headers, ctx };
}

/** The set's `Connection` line says `close` for the request (one of its comma-separated tokens, any case). */
export function connectionCloses(bound: BoundProxyHeaders): boolean {
  const { headers, ctx } = bound;
  if (headers.connection === null || ctx === null) return false;
  return headers
    .connection(ctx)
    .split(',')
    .some((token) => token.trim().toLowerCase() === 'close');
}

/**
 * Appends the set's lines with a value for the request to `out` (`[name, value, …]`); `proxyHost` is
 * the default Host's value.
 */
export function writeProxyHeaders(bound: BoundProxyHeaders, proxyHost: string, out: string[]): void {
  const { headers, ctx } = bound;
  if (ctx !== null) {
    for (const line of headers.lines) {
      const value = line.value(ctx);
      if (value !== '') out.push(line.name, value);
    }
  }
  if (headers.hostIsProxyHost) out.push('Host', proxyHost);
}
