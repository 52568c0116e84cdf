/**
 * nginx's realip module (`set_real_ip_from`, `real_ip_header`, `real_ip_recursive`): when the peer is
 * trusted, `$remote_addr` comes from a request header, walked right to left exactly as
 * ngx_http_get_forwarded_addr does. The CIDR list is compiled once; matching is integer work.
 */
import type { RealIpConf } from '../../../config/model.ts';
import {
  type Cidr,
  cidrMatch,
  type NginxAddr,
  parseAddrPort,
  parseCidr,
} from '../../../engine/net/address-text.ts';
import { LimitswitchError } from '../../../shared/errors.ts';

const DECLINED = 0;
const OK = 1;
const DONE = 2;

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
    for (const cidr of this.#from) if (cidrMatch(cidr, addr)) return true;
    return false;
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
    if (lines.length === 0) return null;
    const state = { addr: peer };
    let rc = DECLINED;
    let found = false;
    for (let i = lines.length - 1; i >= 0; i--) {
      rc = this.#walk(state, lines[i]!);
      if (!this.#recursive) break;
      if (rc === DECLINED && found) {
        rc = DONE;
        break;
      }
      if (rc !== OK) break;
      found = true;
    }
    return rc === DECLINED ? null : state.addr;
  }

  /** ngx_http_get_forwarded_addr_internal over one header line. */
  #walk(state: { addr: NginxAddr }, value: string): number {
    let found = false;
    let len = value.length;
    let p: number;
    do {
      if (!this.matches(state.addr)) return found ? DONE : DECLINED;
      for (p = len - 1; p > 0; p--, len--) {
        const c = value.charCodeAt(p);
        if (c !== 32 && c !== 44) break;
      }
      for (; p > 0; p--) {
        const c = value.charCodeAt(p);
        if (c === 32 || c === 44) {
          p++;
          break;
        }
      }
      const parsed = len > 0 ? parseAddrPort(value.slice(p, len)) : null;
      if (parsed === null) return found ? DONE : DECLINED;
      state.addr = parsed;
      found = true;
      len = p - 1;
    } while (this.#recursive && p > 0);
    return OK;
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
