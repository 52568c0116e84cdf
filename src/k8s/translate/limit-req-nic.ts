/**
 * The NGINX Ingress Controller's `nginx.org/limit-req-*` annotations, as its template writes them: one
 * `limit_req_zone` per Ingress named `<namespace>/<name>`, and in every location of the Ingress a
 * `limit_req` line followed by `limit_req_dry_run`, `limit_req_log_level` and `limit_req_status`.
 * With zone sync (NIC's ConfigMap `zone-sync`, or limitswitch's per-Ingress annotation) the zone is
 * `<namespace>/<name>_sync` with `sync`, and `limit-req-scale` is not used (NIC PR #7521).
 */

import { formatRate } from './annotation-values.ts';
import type { AnnotationValues } from './annotations.ts';
import { directive, quoteArg } from './nginx-text.ts';
import { scaleRate } from './scale-rate.ts';

export interface NicLimitReq {
  /** The `limit_req_zone` line (http level). */
  readonly zoneLine: string;
  /** Lines for each location. */
  readonly locationLines: readonly string[];
  /** NIC's warning when `limit-req-scale` is set on a synced zone (the scale is not used). */
  readonly warning: string | null;
}

/**
 * Null when `nginx.org/limit-req-rate` is not set (limiting off). `replicas`: live replica count;
 * `sync`: the zone is cluster-wide (NIC's `zone-sync`), named `<ns>/<name>_sync`.
 */
export function nicLimitReq(
  values: AnnotationValues,
  namespace: string,
  name: string,
  replicas: number | null,
  sync = false,
): NicLimitReq | null {
  const rate = values.limitReqRate;
  if (!rate) return null;
  const zone = `${namespace}/${name}${sync ? '_sync' : ''}`;
  const scaled = values.limitReqScale && replicas !== null;
  const effective = scaled && !sync ? scaleRate(rate, replicas) : rate;
  // biome-ignore lint/suspicious/noTemplateCurlyInString: an nginx variable, not a template
  const key = values.limitReqKey ?? '${binary_remote_addr}';
  const size = values.limitReqZoneSize ?? '10m';
  const zoneArgs = [quoteArg(key), quoteArg(`zone=${zone}:${size}`), `rate=${formatRate(effective)}`];
  if (sync) zoneArgs.push('sync');
  const zoneLine = directive('limit_req_zone', ...zoneArgs);

  const args = [quoteArg(`zone=${zone}`)];
  if (values.limitReqBurst) args.push(`burst=${values.limitReqBurst}`);
  if (values.limitReqNoDelay) args.push('nodelay');
  else if (values.limitReqDelay) args.push(`delay=${values.limitReqDelay}`);
  const lines = [directive('limit_req', ...args)];
  if (values.limitReqDryRun) lines.push(directive('limit_req_dry_run', 'on'));
  lines.push(directive('limit_req_log_level', values.limitReqLogLevel ?? 'error'));
  lines.push(directive('limit_req_status', String(values.limitReqRejectCode ?? 429)));
  const warning =
    sync && scaled
      ? `Ingress ${namespace}/${name}: both zone sync and rate limit scale are enabled, the rate limit scale value will not be used.`
      : null;
  return { zoneLine, locationLines: lines, warning };
}
