/**
 * `geo [$address] $variable { … }`: the value of the most specific network holding the address
 * (`$remote_addr` by default), or with `ranges` the first range of its /16 holding it
 * (net/geo-ranges.ts), else `default` (empty when absent). An address that does not parse is looked
 * up as 255.255.255.255, as nginx looks up INADDR_NONE. With `proxy` networks, a request from one is
 * looked up by its `X-Forwarded-For` (the last address, or with `proxy_recursive` the first untrusted
 * one from the right), as ngx_http_geo_addr does. Used for allowlists: a geo that yields `""` for
 * trusted clients makes their limit_req key empty, so they are not accounted.
 */
import type { ComplexValue } from '../complex-value.ts';
import { type NginxAddr, parseAddr, parseCidr, parseClientAddr } from '../net/address-text.ts';
import { CidrTable } from '../net/cidr-table.ts';
import { forwardedAddr } from '../net/forwarded-addr.ts';
import { type GeoRangePiece, GeoRanges } from '../net/geo-ranges.ts';
import type { RequestContext } from './request-context.ts';
import type { VariableGetter, VariableTable } from './variable-table.ts';

export interface GeoDefinition {
  readonly address: ComplexValue;
  readonly variable: string;
  readonly defaultValue: string;
  readonly entries: readonly { readonly cidr: string; readonly value: string }[];
  /** `ranges`: the table's pieces (then `entries` is empty). */
  readonly ranges?: readonly GeoRangePiece[];
  /** `proxy` networks, whose requests are looked up by their `X-Forwarded-For`. */
  readonly proxies?: readonly string[];
  readonly proxyRecursive?: boolean;
}

/** Builds the evaluator; throws on an invalid CIDR (the config layer validates first). */
export function compileGeo(geo: GeoDefinition, table: VariableTable): VariableGetter {
  const addressOf = lookedUpAddress(geo, table);
  const fallback = geo.defaultValue;
  if (geo.ranges !== undefined) {
    const ranges = GeoRanges.of(geo.ranges);
    return (ctx) => {
      const addr = addressOf(ctx);
      return ranges.lookup(addr === null || addr.v4 < 0 ? 0xffffffff : addr.v4) ?? fallback;
    };
  }
  const networks = new CidrTable<string>();
  for (const entry of geo.entries) {
    if (!networks.set(entry.cidr, entry.value)) throw new RangeError(`invalid network "${entry.cidr}"`);
  }
  const unparsed = networks.lookupV4(0xffffffff) ?? fallback;
  if (geo.proxies === undefined) {
    // the address text straight to the table, parsed once (an allowlist's geo is on every request)
    const address = table.compile(geo.address);
    return (ctx) => {
      const text = address(ctx);
      return networks.lookup(text) ?? (parseClientAddr(text) === null ? unparsed : fallback);
    };
  }
  return (ctx) => {
    const addr = addressOf(ctx);
    return addr === null ? unparsed : (networks.lookup(addr.text) ?? fallback);
  };
}

/** ngx_http_geo_addr: the address, past the `proxy` networks; null when it does not parse. */
function lookedUpAddress(
  geo: GeoDefinition,
  table: VariableTable,
): (ctx: RequestContext) => NginxAddr | null {
  const address = table.compile(geo.address);
  const proxies = (geo.proxies ?? []).map((text) => {
    const cidr = parseCidr(text);
    if (cidr === null) throw new RangeError(`invalid network "${text}"`);
    return cidr;
  });
  if (proxies.length === 0) return (ctx) => parseAddr(address(ctx));
  const recursive = geo.proxyRecursive === true;
  return (ctx) => {
    const addr = parseAddr(address(ctx));
    const forwarded = ctx.facts.headers['x-forwarded-for'];
    if (addr === null || forwarded === undefined) return addr;
    return forwardedAddr(addr, [forwarded], proxies, recursive) ?? addr;
  };
}
