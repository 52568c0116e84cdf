/**
 * Address text as nginx reads and prints it: ngx_inet_addr (strict dotted IPv4), ngx_parse_addr_port
 * (`addr`, `addr:port`, `[v6]:port`) and ngx_inet6_ntop (how `$remote_addr` prints an IPv6 address).
 * The realip module goes through exactly these, so `$remote_addr` taken from a header matches nginx's.
 */
import ipaddr from 'ipaddr.js';

/** A parsed address. IPv4-mapped IPv6 stays IPv6 (nginx prints it so) but matches IPv4 CIDRs. */
export interface NginxAddr {
  /** As nginx prints it (`$remote_addr`). */
  readonly text: string;
  /** 0 when none was given. */
  readonly port: number;
  /** The IPv4 address as an unsigned 32-bit integer (also for IPv4-mapped IPv6), else -1. */
  readonly v4: number;
  /** The 16 bytes of an IPv6 address, else null. */
  readonly v6: Uint8Array | null;
}

/**
 * ngx_inet_addr over `text[start, end)`: digits and dots only, exactly three dots, octets ≤ 255, empty
 * octets count as 0 (nginx accepts `1..2.3`). Returns -1 when invalid — also for 255.255.255.255,
 * which nginx cannot tell from INADDR_NONE.
 */
export function parseIpv4(text: string, start = 0, end = text.length): number {
  let addr = 0;
  let octet = 0;
  let dots = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      octet = octet * 10 + (c - 48);
      if (octet > 255) return -1;
    } else if (c === 46) {
      addr = addr * 256 + octet;
      octet = 0;
      dots++;
    } else {
      return -1;
    }
  }
  if (dots !== 3) return -1;
  addr = addr * 256 + octet;
  return addr === 0xffffffff ? -1 : addr;
}

/** Dotted text of an unsigned 32-bit IPv4 address. */
export function ipv4Text(v4: number): string {
  return `${v4 >>> 24}.${(v4 >>> 16) & 255}.${(v4 >>> 8) & 255}.${v4 & 255}`;
}

/**
 * ngx_inet6_addr's job, done by ipaddr.js. Zone ids (`%eth0`) are not addresses to nginx. A dotted
 * tail is turned into two hex groups first: ipaddr.js would read `::2.2.2.2` as `::ffff:2.2.2.2`.
 */
export function parseIpv6(text: string): Uint8Array | null {
  if (text.length === 0 || text.includes('%')) return null;
  const lastColon = text.lastIndexOf(':');
  if (lastColon < 0) return null;
  if (text.includes('.', lastColon)) {
    const v4 = parseIpv4(text, lastColon + 1);
    if (v4 < 0) return null;
    text = `${text.slice(0, lastColon + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  if (!ipaddr.IPv6.isValid(text)) return null;
  return Uint8Array.from(ipaddr.IPv6.parse(text).toByteArray());
}

/** ngx_inet6_ntop: longest run (first wins) of ≥ 2 zero groups compressed; IPv4 tail for ::ffff:a.b.c.d. */
export function inet6Ntop(p: Uint8Array): string {
  let zero = -1;
  let last = -1;
  let max = 1;
  let n = 0;
  for (let i = 0; i < 16; i += 2) {
    if (p[i] || p[i + 1]) {
      if (max < n) {
        zero = last;
        max = n;
      }
      n = 0;
      continue;
    }
    if (n++ === 0) last = i;
  }
  if (max < n) {
    zero = last;
    max = n;
  }
  let out = '';
  let groups = 16;
  if (zero === 0) {
    if (
      (max === 5 && p[10] === 0xff && p[11] === 0xff) ||
      max === 6 ||
      (max === 7 && p[14] !== 0 && p[15] !== 1)
    ) {
      groups = 12;
    }
    out += ':';
  }
  for (let i = 0; i < groups; i += 2) {
    if (i === zero) {
      out += ':';
      i += (max - 1) * 2;
      continue;
    }
    out += (p[i]! * 256 + p[i + 1]!).toString(16);
    if (i < 14) out += ':';
  }
  if (groups === 12) out += `${p[12]}.${p[13]}.${p[14]}.${p[15]}`;
  return out;
}

function mappedV4(b: Uint8Array): number {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return -1;
  if (b[10] !== 0xff || b[11] !== 0xff) return -1;
  return ((b[12]! << 24) | (b[13]! << 16) | (b[14]! << 8) | b[15]!) >>> 0;
}

/** ngx_parse_addr: an IPv4 or IPv6 address without port, or null. */
export function parseAddr(text: string, port = 0): NginxAddr | null {
  const v4 = parseIpv4(text);
  if (v4 >= 0) return { text: ipv4Text(v4), port, v4, v6: null };
  const v6 = parseIpv6(text);
  if (v6 === null) return null;
  return { text: inet6Ntop(v6), port, v4: mappedV4(v6), v6 };
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
