/**
 * nginx's realip module (`set_real_ip_from`, `real_ip_header`, `real_ip_recursive`): when the peer is
 * trusted, `$remote_addr` comes from a request header, walked right to left exactly as
 * ngx_http_get_forwarded_addr does (engine/net/forwarded-addr.ts). The CIDR list is compiled once;
 * matching is integer work.
 */
import type { RealIpConf } from '../../../config/model.ts';
import { type Cidr, type NginxAddr, parseCidr } from '../../../engine/net/address-text.ts';
import { forwardedAddr, isTrusted } from '../../../engine/net/forwarded-addr.ts';
import { LimitswitchError } from '../../../shared/errors.ts';

/** The compiled realip settings of one level. */
export class RealIpResolver {
  readonly #from: readonly Cidr[];
  /** Lower-case header name. */
  readonly #header: string;
  /** Only `real_ip_header X-Forwarded-For` (spelled so) walks every header line; others use the first. */
  readonly #allLines: boolean;
  readonly #recursive: boolean;

  constructor(conf: RealIpConf) {
    this.#from = conf.trustedFrom.map(trustedCidr);
    this.#header = conf.header.toLowerCase();
    this.#allLines = conf.header === 'X-Forwarded-For';
    this.#recursive = conf.recursive;
  }

  /** ngx_cidr_match: IPv4 (and IPv4-mapped IPv6) against IPv4 entries, other IPv6 against IPv6 entries. */
  matches(addr: NginxAddr): boolean {
    return isTrusted(addr, this.#from);
  }

  /**
   * The address the request is attributed to, or null when nginx would keep the peer (peer not trusted,
   * header absent, or its last entry unparseable). `peer` is the socket address.
   */
  resolve(peer: NginxAddr, rawHeaders: readonly string[]): NginxAddr | null {
    const lines: string[] = [];
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!;
      if (name.length === this.#header.length && name.toLowerCase() === this.#header) {
        lines.push(rawHeaders[i + 1]!);
        if (!this.#allLines) break;
      }
    }
    return forwardedAddr(peer, lines, this.#from, this.#recursive);
  }
}

/** A `set_real_ip_from` entry; nginx clears host bits (with a warning when the config loads). */
function trustedCidr(text: string): Cidr {
  const cidr = parseCidr(text);
  if (cidr === null) {
    throw new LimitswitchError('RL_ERR_CONFIG_INVALID', `host not found in set_real_ip_from "${text}"`);
  }
  return cidr;
}

/** Compiles a level's realip settings; null when `set_real_ip_from` is empty (the module is inactive). */
export function compileRealIp(conf: RealIpConf | null | undefined): RealIpResolver | null {
  if (!conf || conf.trustedFrom.length === 0) return null;
  return new RealIpResolver(conf);
}
