/**
 * The address forms nginx reads, built on ip-text.ts: `addr[:port]` (ngx_parse_addr_port) for realip,
 * CIDR blocks (ngx_ptocidr, ngx_cidr_match) for allow/deny, geo, set_real_ip_from and `type=ip` keys,
 * and `host:port` (ngx_parse_url) for listen and upstream servers. Host names are taken as written;
 * nothing is resolved. The single home of address text: config, control plane and replica use these.
 */
import { INADDR_NONE, inet6Ntop, ipv4Text, mappedIpv4, parseIpv4, parseIpv6 } from './ip-text.ts';

/** An address to match. IPv4-mapped IPv6 has both forms: it matches IPv4 ranges, as in nginx. */
export interface IpAddr {
  /** The IPv4 address as an unsigned 32-bit integer (also for IPv4-mapped IPv6), else -1. */
  readonly v4: number;
  /** The 16 bytes of an IPv6 address, else null. */
  readonly v6: Uint8Array | null;
}

/** A parsed address as nginx holds it after ngx_parse_addr. */
export interface NginxAddr extends IpAddr {
  /** As nginx prints it (`$remote_addr`): `10.1.2.3` for `010.1.2.3`, `::ffff:1.2.3.4` stays so. */
  readonly text: string;
  /** 0 when none was given. */
  readonly port: number;
}

/** ngx_parse_addr: an IPv4 or IPv6 address without port, or null (so is 255.255.255.255). */
export function parseAddr(text: string, port = 0): NginxAddr | null {
  const v4 = parseIpv4(text);
  if (v4 >= 0) return v4 === INADDR_NONE ? null : { text: ipv4Text(v4), port, v4, v6: null };
  const v6 = parseIpv6(text);
  if (v6 === null) return null;
  return { text: inet6Ntop(v6), port, v4: mappedIpv4(v6), v6 };
}

/** ngx_parse_addr_port: `addr`, then `addr:port` split at the first `:`, or `[v6]:port`; port 1..65535. */
export function parseAddrPort(text: string): NginxAddr | null {
  const bare = parseAddr(text);
  if (bare !== null) return bare;
  let addrText: string;
  let portText: string;
  if (text.charCodeAt(0) === 91 /* [ */) {
    const close = text.indexOf(']');
    if (close < 0 || close === text.length - 1 || text.charCodeAt(close + 1) !== 58) return null;
    addrText = text.slice(1, close);
    portText = text.slice(close + 2);
  } else {
    const colon = text.indexOf(':');
    if (colon < 0) return null;
    addrText = text.slice(0, colon);
    portText = text.slice(colon + 1);
  }
  if (!/^[0-9]+$/.test(portText)) return null;
  const port = Number(portText);
  if (port < 1 || port > 65535) return null;
  return parseAddr(addrText, port);
}

/**
 * A client address to match against ranges (a socket peer, a variable's value). Beyond parseAddr, it
 * takes 255.255.255.255 and ignores the zone id node appends to link-local peers (`fe80::1%eth0`):
 * nginx matches the socket's address alone. IPv4 allocates only the result.
 */
export function parseClientAddr(text: string): IpAddr | null {
  const v4 = parseIpv4(text);
  if (v4 >= 0) return { v4, v6: null };
  const zone = text.indexOf('%');
  const v6 = parseIpv6(text, 0, zone > 0 && zone < text.length - 1 ? zone : text.length);
  return v6 === null ? null : { v4: mappedIpv4(v6), v6 };
}

/** 127.0.0.0/8 and ::1, IPv4-mapped forms included. */
export function isLoopback(text: string): boolean {
  const addr = parseClientAddr(text);
  if (addr === null) return false;
  if (addr.v4 >= 0) return addr.v4 >>> 24 === 127;
  return addr.v6!.every((byte, i) => byte === (i === 15 ? 1 : 0));
}

/**
 * The socket peer as `$remote_addr`: a dual-stack listener reports IPv4 clients as `::ffff:a.b.c.d`,
 * which nginx (ipv6only listeners) would see as plain IPv4.
 */
export function normalizePeerAddress(address: string | undefined): string {
  if (address === undefined) return '';
  if (address.charCodeAt(0) === 58 && address.startsWith('::ffff:') && address.includes('.', 7)) {
    return address.slice(7);
  }
  return address;
}

/** A CIDR block, its host bits cleared. An IPv4-mapped IPv6 block stays IPv6, as in nginx. */
export interface Cidr {
  /** The IPv4 network, or -1 for an IPv6 block. */
  readonly v4: number;
  /** The IPv6 network, or null for an IPv4 block. */
  readonly v6: Uint8Array | null;
  readonly bits: number;
  /** Host bits were set: nginx warns "low address bits of … are meaningless" and clears them. */
  readonly lowBits: boolean;
}

/**
 * ngx_ptocidr: `10.0.0.0/8`, `192.168.1.1`, `2001:db8::/32`, `::1`; the prefix is decimal digits only
 * (`/0032` is 32). 255.255.255.255 is taken too: geo and set_real_ip_from accept it (only allow/deny in
 * nginx refuse it). Null when invalid.
 */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf('/');
  const end = slash === -1 ? text.length : slash;
  const v4 = parseIpv4(text, 0, end);
  const v6 = v4 < 0 ? parseIpv6(text, 0, end) : null;
  if (v4 < 0 && v6 === null) return null;
  const maxBits = v6 === null ? 32 : 128;
  let bits = maxBits;
  if (slash !== -1) {
    const prefix = text.slice(slash + 1);
    if (!/^[0-9]+$/.test(prefix) || Number(prefix) > maxBits) return null;
    bits = Number(prefix);
  }
  if (v6 === null) {
    const network = (v4 & ipv4Mask(bits)) >>> 0;
    return { v4: network, v6: null, bits, lowBits: network !== v4 };
  }
  let lowBits = false;
  for (let i = 0; i < 16; i++) {
    const masked = v6[i]! & byteMask(bits, i);
    if (masked !== v6[i]) lowBits = true;
    v6[i] = masked;
  }
  return { v4: -1, v6, bits, lowBits };
}

/** ngx_cidr_match for one block: IPv4 (and IPv4-mapped) addresses match IPv4 blocks, other IPv6 IPv6. */
export function cidrMatch(cidr: Cidr, addr: IpAddr): boolean {
  if (cidr.v6 === null) return addr.v4 >= 0 && (addr.v4 & ipv4Mask(cidr.bits)) >>> 0 === cidr.v4;
  const bytes = addr.v6;
  if (bytes === null || addr.v4 >= 0) return false;
  for (let i = 0; i < 16; i++) if ((bytes[i]! & byteMask(cidr.bits, i)) !== cidr.v6[i]) return false;
  return true;
}

/** The block as nginx prints addresses: `10.0.0.0/8`, `2001:db8::/32`; equal blocks print equal. */
export function cidrText(cidr: Cidr): string {
  return `${cidr.v6 === null ? ipv4Text(cidr.v4) : inet6Ntop(cidr.v6)}/${cidr.bits}`;
}

export function ipv4Mask(bits: number): number {
  return bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
}

function byteMask(bits: number, index: number): number {
  const keep = Math.max(0, Math.min(8, bits - index * 8));
  return (0xff << (8 - keep)) & 0xff;
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
    if (end === -1 || parseIpv6(text, 1, end) === null) return { error: 'invalid host' };
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

/**
 * A UNIX-domain address as nginx prints it (ngx_sock_ntop): `unix:/path` for a socket with a path,
 * `unix:` alone for a client's (its socket has none). Such an address has no port (ngx_inet_get_port
 * gives 0), which is how a `listen unix:` is held beside the TCP ones.
 */
export const UNIX_PREFIX = 'unix:';

/** The host name HTTP gives a UNIX-domain address (nginx's `$proxy_host` for `http://unix:/path`). */
export const UNIX_HOST = 'localhost';

/** sun_path's size on Linux: the path and its terminating zero must fit. */
const SUN_PATH_BYTES = 108;

export function isUnixAddress(text: string | null): boolean {
  return text?.startsWith(UNIX_PREFIX) === true;
}

/**
 * A written `unix:path` (ngx_parse_url takes the prefix in any case) with the prefix as nginx prints
 * it, lower-case; null for any other address.
 */
export function unixAddressOf(text: string): string | null {
  return text.slice(0, UNIX_PREFIX.length).toLowerCase() === UNIX_PREFIX
    ? UNIX_PREFIX + text.slice(UNIX_PREFIX.length)
    : null;
}

/** ngx_parse_unix_domain_url's checks of the path in `unix:path` (the prefix already seen). */
export function unixPathError(text: string): string | null {
  const path = text.slice(UNIX_PREFIX.length);
  if (path.length === 0) return 'no path in the unix domain socket';
  if (Buffer.byteLength(path) + 1 > SUN_PATH_BYTES) return 'too long path in the unix domain socket';
  return null;
}

/**
 * `unix:/path[:uri]` of a `proxy_pass` URL (ngx_parse_unix_domain_url with a URI part): the address up
 * to the first `:` after the prefix, and what follows that `:`, the URI (null without one).
 */
export function splitUnixUrl(text: string): { readonly address: string; readonly uri: string | null } {
  const colon = text.indexOf(':', UNIX_PREFIX.length);
  return colon === -1
    ? { address: text, uri: null }
    : { address: text.slice(0, colon), uri: text.slice(colon + 1) };
}

/**
 * A socket address as nginx prints it with its port (ngx_sock_ntop): `127.0.0.1:8080`, `[::1]:80`,
 * `unix:/path` (no port). Upstream servers are named so (`$upstream_addr`).
 */
export function socketAddressText(host: string, port: number): string {
  if (isUnixAddress(host)) return host;
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * The address as nginx prints it in listen messages: `0.0.0.0:80`, `127.0.0.1:8080`, `[::1]:80`,
 * `unix:/path`.
 */
export function listenAddressText(host: string | null, port: number): string {
  return host === null ? `0.0.0.0:${port}` : socketAddressText(host, port);
}
