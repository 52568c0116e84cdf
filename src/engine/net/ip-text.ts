/**
 * One IP address as text, read and printed as nginx's ngx_inet.c does: ngx_inet_addr (dotted IPv4),
 * ngx_inet6_addr and ngx_inet6_ntop (how `$remote_addr` prints IPv6). Hand-written: the replica reads
 * the client address of every request, and the IPv4 path allocates nothing.
 */

/**
 * ngx_inet_addr's failure value, 255.255.255.255: nginx cannot tell that address from an error, so where
 * it reads one address (ngx_parse_addr, an IPv6 tail) 255.255.255.255 is refused.
 */
export const INADDR_NONE = 0xffffffff;

/**
 * ngx_inet_addr over `text[start, end)`: digits and dots only, exactly three dots, octets ≤ 255, leading
 * zeros read as decimal, an empty octet as 0 (nginx accepts `1..2.3`). The address as an unsigned
 * 32-bit integer (255.255.255.255 included: see INADDR_NONE), or -1.
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
  return dots === 3 ? addr * 256 + octet : -1;
}

/** Dotted text of an unsigned 32-bit IPv4 address. */
export function ipv4Text(v4: number): string {
  return `${v4 >>> 24}.${(v4 >>> 16) & 255}.${(v4 >>> 8) & 255}.${v4 & 255}`;
}

/**
 * ngx_inet6_addr over `text[start, end)`: up to 8 groups of 1–4 hex digits, one `::`, an optional
 * dotted IPv4 tail (read by ngx_inet_addr, so `::1..2.3` is ::1.0.2.3), and — nginx's quirk — one
 * leading `:` skipped (`:1:2:3:4:5:6:7:8`). No zone ids. The 16 bytes, or null.
 */
export function parseIpv6(text: string, start = 0, end = text.length): Uint8Array | null {
  if (start >= end) return null;
  const addr = new Uint8Array(16);
  let at = 0;
  let zero = -1;
  let digit = -1;
  let nibbles = 0;
  let word = 0;
  let groups = 8;
  let i = text.charCodeAt(start) === 58 ? start + 1 : start;
  for (; i < end; i++) {
    let c = text.charCodeAt(i);
    if (c === 58 /* : */) {
      digit = i + 1;
      if (nibbles === 0) {
        if (zero !== -1) return null;
        zero = at;
        continue;
      }
      addr[at++] = word >> 8;
      addr[at++] = word & 0xff;
      if (--groups === 0) return null;
      nibbles = 0;
      word = 0;
      continue;
    }
    if (c === 46 /* . */ && nibbles > 0) {
      if (groups < 2 || digit === -1) return null;
      const v4 = parseIpv4(text, digit, end);
      if (v4 < 0 || v4 === INADDR_NONE) return null;
      addr[at++] = v4 >>> 24;
      addr[at++] = (v4 >>> 16) & 0xff;
      word = v4 & 0xffff;
      groups--;
      break;
    }
    if (++nibbles > 4) return null;
    if (c >= 48 && c <= 57) {
      word = word * 16 + (c - 48);
      continue;
    }
    c |= 0x20;
    if (c < 97 || c > 102) return null;
    word = word * 16 + (c - 87);
  }
  if (nibbles === 0 && zero === -1) return null;
  addr[at++] = word >> 8;
  addr[at++] = word & 0xff;
  if (--groups === 0) return zero === -1 ? addr : null;
  if (zero === -1) return null;
  // What followed `::` moves to the end; the gap left is the compressed zero groups.
  addr.copyWithin(zero + groups * 2, zero, at);
  addr.fill(0, zero, zero + groups * 2);
  return addr;
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

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`), else -1. */
export function mappedIpv4(b: Uint8Array): number {
  for (let i = 0; i < 10; i++) if (b[i] !== 0) return -1;
  if (b[10] !== 0xff || b[11] !== 0xff) return -1;
  return ((b[12]! << 24) | (b[13]! << 16) | (b[14]! << 8) | b[15]!) >>> 0;
}
