/**
 * The HTTPRoute `RequestRedirect` filter as an nginx `return`: `scheme`, `hostname`, `port`,
 * `path.type: ReplaceFullPath` and `statusCode` (301 and 302 of the standard channel, 303, 307, 308 of
 * the extended). A changed scheme without a port drops the port (the scheme's well-known one); an
 * unchanged one keeps the request's Host. `ReplacePrefixMatch` needs a rewrite and is refused.
 */
import type { HTTPRouteFilter } from './gateway-objects.ts';

export interface Redirect {
  readonly code: number;
  /** The `return` URL (with nginx variables). */
  readonly url: string;
}

const CODES = [301, 302, 303, 307, 308];
const HOSTNAME = /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function readRedirect(f: HTTPRouteFilter, field: string): Redirect | { error: string } {
  const r = (f.requestRedirect ?? {}) as {
    scheme?: string;
    hostname?: string;
    port?: number;
    statusCode?: number;
    path?: { type?: string; replaceFullPath?: string };
  };
  const code = r.statusCode ?? 302;
  if (!CODES.includes(code))
    return { error: `${field}.requestRedirect.statusCode: ${code} is not a redirect code` };
  if (r.scheme !== undefined && r.scheme !== 'http' && r.scheme !== 'https')
    return { error: `${field}.requestRedirect.scheme: ${r.scheme} must be http or https` };
  if (r.hostname !== undefined && (!HOSTNAME.test(r.hostname) || r.hostname.startsWith('*')))
    return { error: `${field}.requestRedirect.hostname: "${r.hostname}" is not a hostname` };
  if (r.port !== undefined && !(Number.isInteger(r.port) && r.port >= 1 && r.port <= 65535))
    return { error: `${field}.requestRedirect.port: ${r.port} is not a port` };
  let path = '$request_uri';
  if (r.path !== undefined) {
    if (
      r.path.type !== 'ReplaceFullPath' ||
      !r.path.replaceFullPath?.startsWith('/') ||
      /[\s;{}$"'\\]/.test(r.path.replaceFullPath)
    )
      return {
        error: `${field}.requestRedirect.path: only ReplaceFullPath with a plain path is supported by limitswitch`,
      };
    path = r.path.replaceFullPath;
  }
  const scheme = r.scheme ?? '$scheme';
  const host = r.hostname ?? '$host';
  const port = r.port !== undefined ? `:${r.port}` : '';
  return { code, url: `${scheme}://${host}${port}${path}` };
}
