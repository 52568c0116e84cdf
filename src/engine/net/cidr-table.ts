/**
 * Longest-prefix match of addresses against CIDR ranges, as nginx's radix tree does for `geo` and
 * NGINX Plus for `keyval_zone type=ip`. IPv4 is matched as uint32 per prefix length; IPv6 as hex
 * strings per prefix length. IPv4-mapped IPv6 addresses (`::ffff:a.b.c.d`) are matched as IPv4.
 */
import { type Cidr, ipv4Mask, parseCidr, parseClientAddr } from './address-text.ts';
import { mappedIpv4, parseIpv4 } from './ip-text.ts';

/**
 * parseCidr as the engine matches ranges: an IPv4-mapped range of /96 or longer is the IPv4 range inside
 * it (`::ffff:10.0.0.0/104` is 10.0.0.0/8), so that IPv4 clients fall in it.
 */
export function parseRange(text: string): Cidr | null {
  const cidr = parseCidr(text);
  if (cidr === null || cidr.v6 === null || cidr.bits < 96) return cidr;
  const v4 = mappedIpv4(cidr.v6);
  return v4 < 0 ? cidr : { v4, v6: null, bits: cidr.bits - 96, lowBits: cidr.lowBits };
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
    const range = parseRange(cidr);
    if (range === null) return false;
    if (range.v6 === null) setCounting(this, this.bucket(this.v4, this.v4Bits, range.bits), range.v4, value);
    else setCounting(this, this.bucket(this.v6, this.v6Bits, range.bits), toHex(range.v6), value);
    return true;
  }

  delete(cidr: string): boolean {
    const range = parseRange(cidr);
    if (range === null) return false;
    const removed =
      range.v6 === null
        ? this.v4.get(range.bits)?.delete(range.v4)
        : this.v6.get(range.bits)?.delete(toHex(range.v6));
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
    if (v4 >= 0) return this.lookupV4(v4);
    const parsed = parseClientAddr(address);
    if (parsed === null) return undefined;
    if (parsed.v4 >= 0) return this.lookupV4(parsed.v4);
    const hex = toHex(parsed.v6!);
    for (const bits of this.v6Bits) {
      const hit = this.v6.get(bits)!.get(maskV6(hex, bits));
      if (hit !== undefined) return hit;
    }
    return undefined;
  }

  lookupV4(address: number): T | undefined {
    for (const bits of this.v4Bits) {
      const hit = this.v4.get(bits)!.get((address & ipv4Mask(bits)) >>> 0);
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

function setCounting<K, T>(table: { size: number }, bucket: Map<K, T>, key: K, value: T): void {
  if (!bucket.has(key)) table.size++;
  bucket.set(key, value);
}

function maskV6(hex: string, bits: number): string {
  const fullNibbles = bits >> 2;
  const rest = bits & 3;
  let out = hex.slice(0, fullNibbles);
  if (rest !== 0) out += (Number.parseInt(hex[fullNibbles]!, 16) & (0xf << (4 - rest)) & 0xf).toString(16);
  return out.padEnd(32, '0');
}

function toHex(bytes: Uint8Array): string {
  let hex = '';
  for (const b of bytes) hex += b.toString(16).padStart(2, '0');
  return hex;
}
