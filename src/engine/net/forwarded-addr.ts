/**
 * ngx_http_get_forwarded_addr: the address a request came from once trusted proxies are looked
 * through, walking a header (`X-Forwarded-For` or realip's `real_ip_header`) right to left. Without
 * `recursive`, the last address of the last line is taken when the peer is trusted; with it, the walk
 * goes on while each address taken is trusted too, and the first untrusted one is the answer. Used by
 * the realip module and by geo's `proxy`/`proxy_recursive`.
 */
import { type Cidr, cidrMatch, type NginxAddr, parseAddrPort } from './address-text.ts';

const DECLINED = 0;
const OK = 1;
const DONE = 2;

/**
 * The address past the trusted proxies in `lines` (the header's lines in order), or null when nginx
 * keeps `peer` (not trusted, no line, or its last entry unparseable).
 */
export function forwardedAddr(
  peer: NginxAddr,
  lines: readonly string[],
  trusted: readonly Cidr[],
  recursive: boolean,
): NginxAddr | null {
  if (lines.length === 0) return null;
  const state = { addr: peer };
  let rc = DECLINED;
  let found = false;
  for (let i = lines.length - 1; i >= 0; i--) {
    rc = walk(state, lines[i]!, trusted, recursive);
    if (!recursive) break;
    if (rc === DECLINED && found) {
      rc = DONE;
      break;
    }
    if (rc !== OK) break;
    found = true;
  }
  return rc === DECLINED ? null : state.addr;
}

export function isTrusted(addr: NginxAddr, trusted: readonly Cidr[]): boolean {
  for (const cidr of trusted) if (cidrMatch(cidr, addr)) return true;
  return false;
}

/** ngx_http_get_forwarded_addr_internal over one header line. */
function walk(
  state: { addr: NginxAddr },
  value: string,
  trusted: readonly Cidr[],
  recursive: boolean,
): number {
  let found = false;
  let len = value.length;
  let p: number;
  do {
    if (!isTrusted(state.addr, trusted)) return found ? DONE : DECLINED;
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
  } while (recursive && p > 0);
  return OK;
}
