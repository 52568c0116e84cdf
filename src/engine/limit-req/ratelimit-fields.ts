/**
 * The IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-11) for a limit_req
 * decision — the `limit_req_ratelimit_headers` extension. nginx's leaky bucket as a quota: the
 * policy allows `q` = burst + 1 requests over `w` = the seconds the bucket takes to drain them
 * (burst + 1) / rate; `r` is what the client may still send without waiting (the burst left after
 * this request), `t` the seconds until the bucket is empty — for a refused request, until it would
 * pass again. The policy's name is the zone's, as a String.
 */
import type { LimitReqOutcome } from './limit-req.ts';

/** `RateLimit-Policy` and `RateLimit`, as header name/value pairs; empty when no zone decided. */
export function rateLimitFields(out: LimitReqOutcome): string[] {
  const zone = out.zone;
  if (zone === null) return [];
  const rateMilli = zone.rateMilli;
  const burstMilli = out.burstMilli;
  const excessMilli = out.excessMilli;
  const name = `"${zone.name.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  const quota = Math.floor(burstMilli / 1000) + 1;
  const windowS = Math.max(1, Math.ceil((burstMilli + 1000) / rateMilli));
  const refused = out.status === 'REJECTED' || out.status === 'REJECTED_DRY_RUN';
  const remaining = refused ? 0 : Math.max(0, Math.floor((burstMilli - excessMilli) / 1000));
  const resetS = refused
    ? Math.max(1, Math.ceil((excessMilli - burstMilli) / rateMilli))
    : Math.ceil(excessMilli / rateMilli);
  return [
    'ratelimit-policy',
    `${name};q=${quota};w=${windowS}`,
    'ratelimit',
    `${name};r=${remaining};t=${resetS}`,
  ];
}
