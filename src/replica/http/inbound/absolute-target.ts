/**
 * An absolute-form request target (`GET http://host:port/path?q HTTP/1.1`) as nginx reads it
 * (ngx_http_parse_request_line, ngx_http_process_request_line): any scheme, then a host of letters,
 * digits, dots and dashes or an IP literal in brackets, an optional port of digits, then the path.
 * The host, validated as a Host header is, lowercased and without a trailing dot, stands for the Host
 * header in `$host` and server selection (`$http_host` stays the header); `$request_uri`, the URI
 * locations see and the request sent upstream are the path form. A host nginx refuses is its 400.
 */
import { validateHost } from '../../../engine/http/request-head.ts';

/** The target, split; or `INVALID_HOST`: nginx's `client sent invalid host in request line`. */
export interface OriginForm {
  /** The path and query (`/` when the target has none). */
  readonly path: string;
  /** The host, as nginx keeps it for `$host` (lowercased, no port, no trailing dot). */
  readonly host: string;
}

export const INVALID_HOST = 0;

/** `scheme://`: what makes a target absolute-form. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;
/** After the scheme: a host name or IP literal, an optional `:port`, then the path (or nothing). */
const AUTHORITY = /^(\[[0-9A-Za-z:._~!$&'()*+,;=-]*\]|[0-9A-Za-z.-]*)(?::[0-9]*)?(?=[/?]|$)/;

/** Null: not absolute-form (an origin form, `*`, …), left as it is. */
export function originForm(target: string): OriginForm | typeof INVALID_HOST | null {
  if (target.charCodeAt(0) === 0x2f /* / */) return null;
  const scheme = SCHEME.exec(target);
  if (scheme === null) return null;
  const rest = target.slice(scheme[0].length);
  const authority = AUTHORITY.exec(rest);
  if (authority === null) return INVALID_HOST;
  const host = authority[1]!;
  if (!validateHost(host)) return INVALID_HOST;
  const tail = rest.slice(authority[0].length);
  return {
    path: tail.charCodeAt(0) === 0x2f ? tail : `/${tail}`,
    host: (host.endsWith('.') ? host.slice(0, -1) : host).toLowerCase(),
  };
}
