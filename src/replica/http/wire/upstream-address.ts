/**
 * A server's address as the upstream client uses it: where to connect (a TCP `host:port`, or the path
 * of a UNIX-domain socket, `unix:/path`), and the Host it writes when the request carries none (what
 * HTTP calls a UNIX-domain address: `localhost`).
 */
import {
  isUnixAddress,
  socketAddressText,
  UNIX_HOST,
  UNIX_PREFIX,
} from '../../../engine/net/address-text.ts';

/** `host`: a name or an address (IPv6 without brackets), or `unix:/path` (`port` 0). */
export function connectAddress(
  host: string,
  port: number,
): { readonly path: string } | { readonly host: string; readonly port: number } {
  return isUnixAddress(host) ? { path: host.slice(UNIX_PREFIX.length) } : { host, port };
}

/** The request head's `host:` line for a request without a Host of its own. */
export function defaultHostLine(host: string, port: number): string {
  return `host: ${isUnixAddress(host) ? UNIX_HOST : socketAddressText(host, port)}\r\n`;
}
