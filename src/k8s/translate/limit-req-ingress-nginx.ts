/**
 * ingress-nginx's `limit-rps`/`limit-rpm`/`limit-burst-multiplier`/`limit-allowlist`, as its template
 * writes them, so users leaving ingress-nginx keep their limits: zones `<ns>_<name>_<uid>_{rpm,rps}` of
 * 5m keyed by `$limit_<id>`, which a `geo`/`map` pair empties for allowlisted clients (an empty key is
 * not limited); burst = rate × multiplier (default 5); always `nodelay`; rpm is checked before rps.
 * `sync` (limitswitch's `limitswitch.io/zone-sync`) makes the zones cluster-wide under the same names.
 */
import type { AnnotationValues } from './annotations.ts';
import { directive, quoteArg } from './nginx-text.ts';

export interface IngressNginxLimits {
  /** http-level lines: the `geo`, the `map`, the zones. */
  readonly httpLines: readonly string[];
  readonly locationLines: readonly string[];
}

/**
 * ingress-nginx's zone id: base64url of the zone name without padding. Valid object names never yield
 * `-`, but nginx would read `$limit_ab-c` as `$limit_ab` then "-c", so a `-` is written as `_`.
 */
export function rateLimitId(zoneName: string): string {
  return Buffer.from(zoneName, 'utf8').toString('base64url').replaceAll('-', '_');
}

/** Null when neither `limit-rps` nor `limit-rpm` is set to a positive value. */
export function ingressNginxLimits(
  values: AnnotationValues,
  namespace: string,
  name: string,
  uid: string,
  keyVariable: string,
  sync = false,
): IngressNginxLimits | null {
  const rps = values.limitRps ?? 0;
  const rpm = values.limitRpm ?? 0;
  if (rps === 0 && rpm === 0) return null;
  const multiplier = values.limitBurstMultiplier ?? 5;
  const allowlist = values.limitAllowlist ?? values.limitWhitelist ?? [];
  const zoneName = `${namespace}_${name}_${uid}`;
  const id = rateLimitId(zoneName);

  const http: string[] = [`# Ratelimit ${zoneName}`, `geo $remote_addr $allowlist_${id} {`, '    default 0;'];
  for (const cidr of allowlist) http.push(`    ${cidr} 1;`);
  http.push('}', `map $allowlist_${id} $limit_${id} {`, `    0 ${quoteArg(keyVariable)};`, '    1 "";', '}');
  const location: string[] = [];
  const syncArg = sync ? ['sync'] : [];
  if (rpm > 0) {
    http.push(
      directive('limit_req_zone', `$limit_${id}`, `zone=${zoneName}_rpm:5m`, `rate=${rpm}r/m`, ...syncArg),
    );
    location.push(directive('limit_req', `zone=${zoneName}_rpm`, `burst=${rpm * multiplier}`, 'nodelay'));
  }
  if (rps > 0) {
    http.push(
      directive('limit_req_zone', `$limit_${id}`, `zone=${zoneName}_rps:5m`, `rate=${rps}r/s`, ...syncArg),
    );
    location.push(directive('limit_req', `zone=${zoneName}_rps`, `burst=${rps * multiplier}`, 'nodelay'));
  }
  return { httpLines: http, locationLines: location };
}
