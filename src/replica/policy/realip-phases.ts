/**
 * nginx's realip module as it runs for one request: its handler at POST_READ with the settings of the
 * server the request went to, then at PREACCESS with its location's. The first to find an address
 * (the peer in `set_real_ip_from`, the header there and its address parseable) sets `$remote_addr`
 * and `$remote_port` for the rest of the request, internal redirects included; `$realip_remote_addr`
 * and `$realip_remote_port` keep the peer.
 */
import type { RealIpDefinition } from '../../engine/http/location-handler.ts';
import { parseAddr } from '../../engine/net/address-text.ts';
import type { DownstreamRequest } from '../http/contract/decision.ts';
import { compileRealIp, type RealIpResolver } from '../http/edge/real-ip.ts';

/** A level's settings compiled once (the configuration's objects outlive no reload). */
const resolvers = new WeakMap<RealIpDefinition, RealIpResolver | null>();
/** The requests realip gave an address to (the module's ctx). */
const resolved = new WeakSet<DownstreamRequest>();

/** ngx_http_realip_handler under `realIp`: the request's address from its header, once. */
export function realIpStep(ctx: DownstreamRequest, realIp: RealIpDefinition): void {
  if (realIp.trustedFrom.length === 0 || resolved.has(ctx)) return;
  let resolver = resolvers.get(realIp);
  if (resolver === undefined) {
    resolver = compileRealIp(realIp);
    resolvers.set(realIp, resolver);
  }
  if (resolver === null) return;
  const peer = parseAddr(ctx.realipRemoteAddr, ctx.realipRemotePort);
  if (peer === null || !resolver.matches(peer)) return;
  const real = resolver.resolve(peer, ctx.req.rawHeaders);
  if (real === null) return;
  resolved.add(ctx);
  ctx.remoteAddr = real.text;
  ctx.remotePort = real.port;
}
