/**
 * An Ingress's limit annotations → one RateLimitPolicy's `rateLimit`, limiting as the Ingress did:
 * NIC's `nginx.org/limit-req-*` (its defaults written out: reject code 429, log level error — NGF's
 * would be 503 and nginx's), then ingress-nginx's `limit-rpm` and `limit-rps` (its real defaults:
 * burst = rate × `limit-burst-multiplier`, 5; always nodelay; 5m zones; the key of the ConfigMap's
 * `limit-conn-zone-variable`; its `limit-req-status-code`, 503). What a RateLimitPolicy cannot hold is
 * said, never dropped silently.
 */
import type { RateLimitRule } from '../gateway/gateway-objects.ts';
import { formatRate } from '../translate/annotation-values.ts';
import { ANNOTATIONS, type AnnotationValues } from '../translate/annotations.ts';
import type { GlobalSettings } from '../translate/configmap-settings.ts';

export interface MigratedLimits {
  readonly rateLimit: {
    dryRun?: boolean;
    logLevel?: string;
    rejectCode?: number;
    local: { rules: RateLimitRule[] };
  } | null;
  readonly sync: boolean;
  /** `annotation: message` lines (warnings) and errors. */
  readonly warnings: readonly string[];
  readonly errors: readonly string[];
}

const LOG_LEVELS = ['info', 'notice', 'warn', 'error'];

/** NGF's key pattern has no `${name}`: `${a}` becomes `$a` where the next character ends the name. */
export function ngfKey(key: string): string | null {
  let out = '';
  for (let i = 0; i < key.length; i++) {
    const open = key.startsWith('${', i) ? key.indexOf('}', i) : -1;
    if (open === -1) {
      out += key[i];
      continue;
    }
    const name = key.slice(i + 2, open);
    if (/^\w/.test(key[open + 1] ?? '')) return null;
    out += `$${name}`;
    i = open;
  }
  return /^(?:[^ \t\r\n;{}#$]+|\$\w+)+$/.test(out) ? out : null;
}

/** NGF's size pattern is `^\d{1,4}(k|m)?$`: the same size in the smallest unit that fits. */
export function ngfSize(size: string): string | null {
  const m = /^(\d+)([kKmM]?)$/.exec(size);
  if (!m) return null;
  const bytes =
    Number(m[1]) * (m[2]!.toLowerCase() === 'm' ? 1 << 20 : m[2]!.toLowerCase() === 'k' ? 1 << 10 : 1);
  for (const [unit, scale] of [
    ['', 1],
    ['k', 1 << 10],
    ['m', 1 << 20],
  ] as const)
    if (bytes % scale === 0 && bytes / scale <= 9999) return `${bytes / scale}${unit}`;
  return null;
}

export function migrateLimits(values: AnnotationValues, settings: GlobalSettings): MigratedLimits {
  const warnings: string[] = [];
  const errors: string[] = [];
  const rules: RateLimitRule[] = [];
  let dryRun: boolean | undefined;
  let logLevel: string | undefined;
  let rejectCode: number | undefined;
  const nic = ANNOTATIONS;
  if (values.limitReqRate) {
    const rule: { -readonly [K in keyof RateLimitRule]: RateLimitRule[K] } = {
      rate: formatRate(values.limitReqRate),
    };
    // biome-ignore lint/suspicious/noTemplateCurlyInString: NIC's default key, an nginx variable
    const key = ngfKey(values.limitReqKey ?? '${binary_remote_addr}');
    if (key === null)
      errors.push(
        `${nic.limitReqKey.name}: "${values.limitReqKey}" cannot be written as a RateLimitPolicy key`,
      );
    else rule.key = key;
    const size = ngfSize(values.limitReqZoneSize ?? '10m');
    if (size === null)
      errors.push(
        `${nic.limitReqZoneSize.name}: "${values.limitReqZoneSize}" cannot be written as a RateLimitPolicy zoneSize`,
      );
    else rule.zoneSize = size;
    if (values.limitReqBurst) rule.burst = values.limitReqBurst;
    if (values.limitReqNoDelay) {
      rule.noDelay = true;
      if (values.limitReqDelay)
        warnings.push(
          `${nic.limitReqDelay.name}: ignored with ${nic.limitReqNoDelay.name}, as NIC ignores it`,
        );
    } else if (values.limitReqDelay) rule.delay = values.limitReqDelay;
    rules.push(rule);
    if (values.limitReqDryRun) dryRun = true;
    logLevel = values.limitReqLogLevel ?? 'error';
    if (!LOG_LEVELS.includes(logLevel)) {
      errors.push(
        `${nic.limitReqLogLevel.name}: "${logLevel}" is not a RateLimitPolicy logLevel (info, notice, warn, error)`,
      );
      logLevel = undefined;
    }
    rejectCode = values.limitReqRejectCode ?? 429;
    if (rejectCode < 400 || rejectCode > 599) {
      errors.push(`${nic.limitReqRejectCode.name}: ${rejectCode} is outside a RateLimitPolicy's 400-599`);
      rejectCode = undefined;
    }
    if (values.limitReqScale && !(values.zoneSync ?? settings.zoneSync))
      warnings.push(
        `${nic.limitReqScale.name}: not carried over (a RateLimitPolicy has no scale); ${nic.zoneSync.name}: "true" gives one budget for all replicas instead`,
      );
  } else {
    for (const id of [
      'limitReqKey',
      'limitReqZoneSize',
      'limitReqBurst',
      'limitReqDelay',
      'limitReqNoDelay',
      'limitReqDryRun',
      'limitReqLogLevel',
      'limitReqRejectCode',
      'limitReqScale',
    ] as const)
      if (values[id] !== undefined)
        warnings.push(`${nic[id].name}: ignored without ${nic.limitReqRate.name}, as NIC ignores it`);
  }
  const multiplier = values.limitBurstMultiplier ?? 5;
  const key = ngfKey(settings.limitConnZoneVariable);
  for (const [id, unit] of [
    ['limitRpm', 'm'],
    ['limitRps', 's'],
  ] as const) {
    const rate = values[id];
    if (!rate) continue;
    if (key === null) {
      errors.push(
        `ConfigMap limit-conn-zone-variable: "${settings.limitConnZoneVariable}" cannot be written as a RateLimitPolicy key`,
      );
      continue;
    }
    rules.push({ rate: `${rate}r/${unit}`, key, zoneSize: '5m', burst: rate * multiplier, noDelay: true });
  }
  if ((values.limitRps || values.limitRpm) && !values.limitReqRate)
    rejectCode = settings.limitReqStatus ?? 503;
  for (const id of ['limitAllowlist', 'limitWhitelist'] as const)
    if (values[id] !== undefined)
      warnings.push(
        `${nic[id].name}: not carried over: a RateLimitPolicy has no exemption list (its clients are limited)`,
      );
  if (rules.length === 0) return { rateLimit: null, sync: false, warnings, errors };
  return {
    rateLimit: {
      ...(dryRun ? { dryRun } : {}),
      ...(logLevel !== undefined ? { logLevel } : {}),
      ...(rejectCode !== undefined ? { rejectCode } : {}),
      local: { rules },
    },
    sync: values.zoneSync ?? (values.limitReqRate ? settings.zoneSync : false),
    warnings,
    errors,
  };
}
