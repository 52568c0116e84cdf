/**
 * Textual IP addresses and CIDR ranges, as `type=ip` keyval keys and `--allow` take them: IPv4 only in
 * dotted four-part decimal (no `127.1` or hex shorthands nginx would not read), IPv6 without a zone id.
 */
import ipaddr from 'ipaddr.js';

/** `10.0.0.1`, `10.0.0.0/8`, `2001:db8::/32`, `::1`. */
export function isIpOrCidr(text: string): boolean {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const v4 = ipaddr.IPv4.isValidFourPartDecimal(address);
  const v6 = !v4 && !address.includes('%') && ipaddr.IPv6.isValid(address);
  if (!v4 && !v6) return false;
  if (slash < 0) return true;
  const bits = text.slice(slash + 1);
  if (!/^[0-9]{1,3}$/.test(bits)) return false;
  return Number(bits) <= (v4 ? 32 : 128);
}

/** A parsed range; IPv4-mapped IPv6 clients are matched as IPv4. */
export interface IpRange {
  readonly text: string;
  contains(address: string): boolean;
}

/** Parse `CIDR` or a bare address (a /32 or /128); throws with the offending text. */
export function parseIpRange(text: string): IpRange {
  if (!isIpOrCidr(text)) throw new Error(`invalid address or CIDR "${text}"`);
  const withBits = text.includes('/')
    ? text
    : `${text}/${ipaddr.IPv4.isValidFourPartDecimal(text) ? 32 : 128}`;
  const [network, bits] = ipaddr.parseCIDR(withBits);
  return {
    text,
    contains(address: string): boolean {
      if (!ipaddr.isValid(address)) return false;
      const parsed = ipaddr.process(address);
      return parsed.kind() === network.kind() && parsed.match(network, bits);
    },
  };
}

/** 127.0.0.0/8, ::1 and their IPv4-mapped forms. */
export function isLoopback(address: string): boolean {
  return ipaddr.isValid(address) && ipaddr.process(address).range() === 'loopback';
}
