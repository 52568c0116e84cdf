/**
 * Longest-prefix match of addresses against CIDR ranges, as nginx's radix tree does for `geo` and
 * NGINX Plus for `keyval_zone type=ip`. IPv4 is matched as uint32 per prefix length; IPv6 as hex
 * strings per prefix length. IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are matched as IPv4.
 */
import ipaddr from 'ipaddr.js';

export type ParsedCidr =
  | { readonly v4: number; readonly bits: number }
  | { readonly v6: string; readonly bits: number };

/** Parses `a.b.c.d`, `a.b.c.d/n`, IPv6 and IPv6/n. Host bits are cleared. Returns null when invalid. */
export function parseCidr(text: string): ParsedCidr | null {
  const slash = text.indexOf('/');
  const addressText = slash === -1 ? text : text.slice(0, slash);
  const bitsText = slash === -1 ? null : text.slice(slash + 1);
  const v4 = parseIpv4(addressText);
  if (v4 !== null) {
    const bits = bitsText === null ? 32 : parseBits(bitsText, 32);
    if (bits === null) return null;
    return { v4: maskV4(v4, bits), bits };
  }
  if (!ipaddr.IPv6.isValid(addressText)) return null;
  const v6 = ipaddr.IPv6.parse(addressText);
  const bits = bitsText === null ? 128 : parseBits(bitsText, 128);
  if (bits === null) return null;
  if (v6.isIPv4MappedAddress() && bits >= 96) {
    return { v4: maskV4(bytesToU32(v6.toIPv4Address().toByteArray()), bits - 96), bits: bits - 96 };
  }
  return { v6: maskV6(toHex(v6.toByteArray()), bits), bits };
}

/** Parses a textual address (no prefix) into the same shape, or null. */
export function parseAddress(text: string): ParsedCidr | null {
  return text.includes('/') ? null : parseCidr(text);
}

export class CidrTable<T> {
  /** Prefix lengths present, longest first. */
  private v4Bits: number[] = [];
  private readonly v4 = new Map<number, Map<number, T>>();
  private v6Bits: number[] = [];
  private readonly v6 = new Map<number, Map<string, T>>();
  size = 0;

  /** Adds or replaces a range; false when `cidr` is not a valid address or CIDR. */
  set(cidr: string, value: T): boolean {
    const parsed = parseCidr(cidr);
    if (parsed === null) return false;
    if ('v4' in parsed) setCounting(this, this.bucket(this.v4, this.v4Bits, parsed.bits), parsed.v4, value);
    else setCounting(this, this.bucket(this.v6, this.v6Bits, parsed.bits), parsed.v6, value);
    return true;
  }

  delete(cidr: string): boolean {
    const parsed = parseCidr(cidr);
    if (parsed === null) return false;
    const removed =
      'v4' in parsed
        ? this.v4.get(parsed.bits)?.delete(parsed.v4)
        : this.v6.get(parsed.bits)?.delete(parsed.v6);
    if (removed) this.size--;
    return removed === true;
  }

  clear(): void {
    this.v4.clear();
    this.v6.clear();
    this.v4Bits = [];
    this.v6Bits = [];
    this.size = 0;
  }

  /** The value of the most specific range containing `address`, or undefined. */
  lookup(address: string): T | undefined {
    const v4 = parseIpv4(address);
    if (v4 !== null) return this.lookupV4(v4);
    const parsed = parseAddress(address);
    if (parsed === null) return undefined;
    if ('v4' in parsed) return this.lookupV4(parsed.v4);
    for (const bits of this.v6Bits) {
      const hit = this.v6.get(bits)!.get(maskV6(parsed.v6, bits));
      if (hit !== undefined) return hit;
    }
    return undefined;
  }

  lookupV4(address: number): T | undefined {
    for (const bits of this.v4Bits) {
      const hit = this.v4.get(bits)!.get(maskV4(address, bits));
      if (hit !== undefined) return hit;
    }
    return undefined;
  }

  private bucket<K>(byBits: Map<number, Map<K, T>>, order: number[], bits: number): Map<K, T> {
    let bucket = byBits.get(bits);
    if (bucket === undefined) {
      bucket = new Map();
      byBits.set(bits, bucket);
      order.push(bits);
      order.sort((a, b) => b - a);
    }
    return bucket;
  }
}

/** Fast dotted-quad parser; null for anything else (including leading zeros nginx would reject). */
export function parseIpv4(text: string): number | null {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      octet = octet * 10 + (c - 48);
      if (++digits > 3 || octet > 255) return null;
    } else if (c === 46 && digits > 0 && dots < 3) {
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
    } else {
      return null;
    }
  }
  if (dots !== 3 || digits === 0) return null;
  return value * 256 + octet;
}

function setCounting<K, T>(table: { size: number }, bucket: Map<K, T>, key: K, value: T): void {
  if (!bucket.has(key)) table.size++;
  bucket.set(key, value);
}

function parseBits(text: string, max: number): number | null {
  if (!/^\d{1,3}$/.test(text)) return null;
  const bits = Number(text);
  return bits <= max ? bits : null;
}

function maskV4(address: number, bits: number): number {
  return bits === 0 ? 0 : (address & (0xffffffff << (32 - bits))) >>> 0;
}

function maskV6(hex: string, bits: number): string {
  const fullNibbles = bits >> 2;
  const rest = bits & 3;
  let out = hex.slice(0, fullNibbles);
  if (rest !== 0) out += (Number.parseInt(hex[fullNibbles]!, 16) & (0xf << (4 - rest)) & 0xf).toString(16);
  return out.padEnd(32, '0');
}

function bytesToU32(bytes: number[]): number {
  return ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
}

function toHex(bytes: number[]): string {
  return bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
}
