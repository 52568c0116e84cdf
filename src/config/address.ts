/**
 * Addresses in directives: CIDR blocks (ngx_ptocidr) for allow/deny, set_real_ip_from and geo, and
 * `host:port` (ngx_parse_url) for listen and upstream servers. Host names are taken as written; unlike
 * nginx, nothing is resolved while the configuration loads.
 */
import { isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';

export interface ParsedCidr {
  readonly family: 4 | 6;
  /** The network with host bits cleared, e.g. `10.0.0.0/8`; equal networks compare equal. */
  readonly network: string;
  /** True when the address has bits set beyond the prefix (nginx warns and clears them). */
  readonly lowBits: boolean;
}

/** nginx's strict dotted quad: four decimal parts, each 0..255. */
export function parseIPv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4) return null;
  const octets = parts.map((part) => (/^[0-9]{1,3}$/.test(part) ? Number(part) : 256));
  return octets.every((octet) => octet <= 255) ? octets : null;
}

/** `10.0.0.0/8`, `192.168.1.1`, `2001:db8::/32`, `::1`; `null` when nginx would not accept it. */
export function parseCidr(text: string): ParsedCidr | null {
  const slash = text.indexOf('/');
  const address = slash === -1 ? text : text.slice(0, slash);
  const ipv4 = parseIPv4(address);
  const bytes = ipv4 ?? (isIPv6(address) && !address.includes('%') ? ipv6Bytes(address) : null);
  if (!bytes) return null;
  const family = ipv4 ? 4 : 6;
  const maxBits = bytes.length * 8;
  let bits = maxBits;
  if (slash !== -1) {
    const prefix = text.slice(slash + 1);
    if (!/^[0-9]+$/.test(prefix) || Number(prefix) > maxBits) return null;
    bits = Number(prefix);
  }
  let lowBits = false;
  const masked = bytes.map((byte, i) => {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    const mask = keep === 0 ? 0 : (0xff << (8 - keep)) & 0xff;
    if ((byte & ~mask & 0xff) !== 0) lowBits = true;
    return byte & mask;
  });
  const network = family === 4 ? masked.join('.') : ipaddr.fromByteArray(masked).toString();
  return { family, network: `${network}/${bits}`, lowBits };
}

function ipv6Bytes(address: string): number[] {
  return ipaddr.IPv6.parse(address).toByteArray();
}

export type HostPort =
  | { readonly host: string | null; readonly port: number | null; readonly error?: undefined }
  | { readonly error: 'invalid port' | 'invalid host' | 'no host' };

/**
 * `host:port`, `host`, `[v6]:port`, `*:port`; for `listen` also a bare `port`. A `null` host is the
 * wildcard (`*` or omitted); a `null` port means "not written" (the caller applies its default).
 */
export function parseHostPort(text: string, listen: boolean): HostPort {
  let host: string;
  let portText: string | null = null;
  if (text.startsWith('[')) {
    const end = text.indexOf(']');
    if (end === -1 || !isIPv6(text.slice(1, end))) return { error: 'invalid host' };
    host = text.slice(1, end);
    const rest = text.slice(end + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return { error: 'invalid host' };
      portText = rest.slice(1);
    }
  } else {
    const colon = text.lastIndexOf(':');
    if (colon === -1) {
      if (listen && /^[0-9]+$/.test(text)) return portOnly(text);
      host = text;
    } else {
      host = text.slice(0, colon);
      portText = text.slice(colon + 1);
      if (host.includes(':')) return { error: 'invalid host' };
    }
    if (host === '') return { error: 'no host' };
    if (host !== '*' && !/^[A-Za-z0-9._-]+$/.test(host)) return { error: 'invalid host' };
  }
  if (portText === null) return { host: host === '*' ? null : host, port: null };
  const port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : 0;
  if (port < 1 || port > 65535) return { error: 'invalid port' };
  return { host: host === '*' ? null : host, port };
}

function portOnly(text: string): HostPort {
  const port = text.length <= 5 ? Number(text) : 0;
  return port >= 1 && port <= 65535 ? { host: null, port } : { error: 'invalid port' };
}

/** The address as nginx prints it in listen messages: `0.0.0.0:80`, `127.0.0.1:8080`, `[::1]:80`. */
export function listenAddressText(host: string | null, port: number): string {
  if (host === null) return `0.0.0.0:${port}`;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}
