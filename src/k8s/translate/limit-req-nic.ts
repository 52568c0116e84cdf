/**
 * The NGINX Ingress Controller's `nginx.org/limit-req-*` annotations, as its template writes them: one
 * `limit_req_zone` per Ingress named `<namespace>/<name>`, and in every location of the Ingress a
 * `limit_req` line followed by `limit_req_dry_run`, `limit_req_log_level` and `limit_req_status`.
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
}

/** Null when `nginx.org/limit-req-rate` is not set (limiting off). `replicas`: live replica count. */
export function nicLimitReq(
  values: AnnotationValues,
  namespace: string,
  name: string,
  replicas: number | null,
): NicLimitReq | null {
  const rate = values.limitReqRate;
  if (!rate) return null;
  const zone = `${namespace}/${name}`;
  const effective = values.limitReqScale && replicas !== null ? scaleRate(rate, replicas) : rate;
  // biome-ignore lint/suspicious/noTemplateCurlyInString: an nginx variable, not a template
  const key = values.limitReqKey ?? '${binary_remote_addr}';
  const size = values.limitReqZoneSize ?? '10m';
  const zoneLine = directive(
    'limit_req_zone',
    quoteArg(key),
    quoteArg(`zone=${zone}:${size}`),
    `rate=${formatRate(effective)}`,
  );

  const args = [quoteArg(`zone=${zone}`)];
  if (values.limitReqBurst) args.push(`burst=${values.limitReqBurst}`);
  if (values.limitReqNoDelay) args.push('nodelay');
  else if (values.limitReqDelay) args.push(`delay=${values.limitReqDelay}`);
  const lines = [directive('limit_req', ...args)];
  if (values.limitReqDryRun) lines.push(directive('limit_req_dry_run', 'on'));
  lines.push(directive('limit_req_log_level', values.limitReqLogLevel ?? 'error'));
  lines.push(directive('limit_req_status', String(values.limitReqRejectCode ?? 429)));
  return { zoneLine, locationLines: lines };
}
