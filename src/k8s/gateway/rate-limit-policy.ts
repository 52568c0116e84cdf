/**
 * NGINX Gateway Fabric's `RateLimitPolicy`, read as NGF reads it: its CRD's rules (targetRefs 1–16 of
 * Gateway | HTTPRoute | GRPCRoute in gateway.networking.k8s.io, unique, Gateway not mixed with routes;
 * rate `^\d+r/[sm]$`; key `^(?:[^ \t\r\n;{}#$]+|\$\w+)+$`; zoneSize `^\d{1,4}(k|m)?$`; logLevel
 * info|notice|warn|error; rejectCode 400–599; noDelay not with delay), its generator's defaults (100r/s,
 * `$binary_remote_addr`, 10m) and zone names (`<ns>_rl_<name>_rule<i>`), and its conflict rule: two
 * policies on one target that both set dryRun, logLevel or rejectCode conflict; the oldest wins (then
 * the name), the others are `Conflicted`.
 */

import type { ObjectRef } from '../objects.ts';
import { byAge, keyOf, refOf } from '../objects.ts';
import { GATEWAY_GROUP, NGF_GROUP, NGF_VERSION, type RateLimitPolicy } from './gateway-objects.ts';

/** limitswitch's extensions, as annotations on the policy (NGF has no field for them). */
export const ZONE_SYNC_ANNOTATION = 'limitswitch.io/zone-sync';
export const SWITCH_ANNOTATION = 'limitswitch.io/keyval-switch';
/** The keyval zone a switched policy's on/off value lives in (key: `<namespace>/<name>`). */
export const POLICY_SWITCH_ZONE = 'gateway_policies';

export const DEFAULT_RATE = '100r/s';
export const DEFAULT_KEY = '$binary_remote_addr';
export const DEFAULT_ZONE_SIZE = '10m';

const RATE = /^\d+r\/[sm]$/;
const KEY = /^(?:[^ \t\r\n;{}#$]+|\$\w+)+$/;
const SIZE = /^\d{1,4}(k|m)?$/;
const LOG_LEVELS = ['info', 'notice', 'warn', 'error'];
const TARGET_KINDS = ['Gateway', 'HTTPRoute', 'GRPCRoute'];

export interface PolicyZone {
  /** NGF's zone name, `<ns>_rl_<name>_rule<i>`. */
  readonly zone: string;
  readonly key: string;
  readonly size: string;
  readonly rate: string;
  readonly burst: number;
  readonly delay: number;
  readonly noDelay: boolean;
}

export interface ReadPolicy {
  readonly source: RateLimitPolicy;
  readonly ref: ObjectRef;
  /** `namespace/name`. */
  readonly key: string;
  readonly targetKind: 'Gateway' | 'Route';
  /** Target names by kind (`Gateway`, `HTTPRoute`, `GRPCRoute`), all in the policy's namespace. */
  readonly targets: readonly { readonly kind: string; readonly name: string }[];
  readonly zones: readonly PolicyZone[];
  readonly dryRun: boolean | undefined;
  readonly logLevel: string | undefined;
  readonly rejectCode: number | undefined;
  /** limitswitch: the zones are cluster-wide (`sync`). */
  readonly sync: boolean;
  /** limitswitch: the policy can be switched off through the keyval zone `gateway_policies`. */
  readonly switched: boolean;
}

export type PolicyReading =
  | { readonly policy: ReadPolicy }
  | { readonly error: string; readonly field: string };

function flag(value: string | undefined, name: string): boolean | string {
  if (value === undefined) return false;
  const v = value.trim();
  if (v === 'true') return true;
  if (v === 'false') return false;
  return `annotation ${name}: "${value}" is not "true" or "false"`;
}

/** The policy's spec checked as its CRD and NGF's validator check it; the first problem found. */
export function readRateLimitPolicy(p: RateLimitPolicy): PolicyReading {
  const fail = (field: string, error: string): PolicyReading => ({ field, error });
  const spec = p.spec ?? {};
  const refs = spec.targetRefs ?? [];
  if (refs.length < 1 || refs.length > 16) return fail('spec.targetRefs', 'must have 1 to 16 items');
  const seen = new Set<string>();
  for (const [i, t] of refs.entries()) {
    if (!TARGET_KINDS.includes(t.kind ?? ''))
      return fail(
        `spec.targetRefs[${i}].kind`,
        'TargetRef Kind must be one of: Gateway, HTTPRoute, or GRPCRoute',
      );
    if (t.group !== GATEWAY_GROUP)
      return fail(`spec.targetRefs[${i}].group`, `TargetRef Group must be ${GATEWAY_GROUP}`);
    if (!t.name) return fail(`spec.targetRefs[${i}].name`, 'is required');
    const id = `${t.kind}/${t.name}`;
    if (seen.has(id)) return fail('spec.targetRefs', 'TargetRef Kind and Name combination must be unique');
    seen.add(id);
  }
  const gateways = refs.filter((t) => t.kind === 'Gateway').length;
  if (gateways > 0 && gateways < refs.length)
    return fail('spec.targetRefs', 'Cannot mix Gateway kind with HTTPRoute or GRPCRoute kinds in targetRefs');
  const rl = spec.rateLimit ?? {};
  if (rl.logLevel !== undefined && !LOG_LEVELS.includes(rl.logLevel))
    return fail('spec.rateLimit.logLevel', `"${rl.logLevel}": must be one of ${LOG_LEVELS.join(', ')}`);
  if (
    rl.rejectCode !== undefined &&
    !(Number.isInteger(rl.rejectCode) && rl.rejectCode >= 400 && rl.rejectCode <= 599)
  )
    return fail('spec.rateLimit.rejectCode', `${rl.rejectCode}: must be in 400-599`);
  const meta = p.metadata ?? {};
  const ns = meta.namespace ?? 'default';
  const zones: PolicyZone[] = [];
  for (const [i, r] of (rl.local?.rules ?? []).entries()) {
    const f = `spec.rateLimit.local.rules[${i}]`;
    const rate = r.rate || DEFAULT_RATE;
    if (!RATE.test(rate))
      return fail(`${f}.rate`, `"${rate}": must contain a number followed by 'r/s' or 'r/m'`);
    const key = r.key || DEFAULT_KEY;
    if (!KEY.test(key))
      return fail(
        `${f}.key`,
        `"${key}": must be a valid limit_req key consisting of nginx variables and/or strings without spaces or special characters`,
      );
    const size = r.zoneSize ?? DEFAULT_ZONE_SIZE;
    if (!SIZE.test(size)) return fail(`${f}.zoneSize`, `"${size}": must be a size like 1024, 8k or 10m`);
    for (const n of ['burst', 'delay'] as const) {
      const v = r[n];
      if (v !== undefined && !(Number.isInteger(v) && v >= 0))
        return fail(`${f}.${n}`, `${v}: must be an integer ≥ 0`);
    }
    if (r.noDelay === true && r.delay !== undefined)
      return fail(f, 'NoDelay cannot be true when Delay is also set');
    zones.push({
      zone: `${ns}_rl_${meta.name ?? ''}_rule${i}`,
      key,
      size,
      rate,
      burst: r.burst ?? 0,
      delay: r.delay ?? 0,
      noDelay: r.noDelay === true,
    });
  }
  const annotations = meta.annotations ?? {};
  const sync = flag(annotations[ZONE_SYNC_ANNOTATION], ZONE_SYNC_ANNOTATION);
  if (typeof sync === 'string') return fail(`metadata.annotations[${ZONE_SYNC_ANNOTATION}]`, sync);
  const switched = flag(annotations[SWITCH_ANNOTATION], SWITCH_ANNOTATION);
  if (typeof switched === 'string') return fail(`metadata.annotations[${SWITCH_ANNOTATION}]`, switched);
  return {
    policy: {
      source: p,
      ref: refOf(p, 'RateLimitPolicy', `${NGF_GROUP}/${NGF_VERSION}`),
      key: keyOf(p),
      targetKind: gateways > 0 ? 'Gateway' : 'Route',
      targets: refs.map((t) => ({ kind: t.kind!, name: t.name! })),
      zones,
      dryRun: rl.dryRun,
      logLevel: rl.logLevel,
      rejectCode: rl.rejectCode,
      sync,
      switched,
    },
  };
}

function setsSettings(p: ReadPolicy): { dryRun: boolean; logLevel: boolean; rejectCode: boolean } {
  return {
    dryRun: p.dryRun !== undefined,
    logLevel: p.logLevel !== undefined,
    rejectCode: p.rejectCode !== undefined,
  };
}

/** NGF's `conflicts`: both set dryRun, or both logLevel, or both rejectCode. */
export function policiesConflict(a: ReadPolicy, b: ReadPolicy): boolean {
  const x = setsSettings(a);
  const y = setsSettings(b);
  return (x.dryRun && y.dryRun) || (x.logLevel && y.logLevel) || (x.rejectCode && y.rejectCode);
}

/**
 * Splits policies into the applied ones and the conflicted ones (each with the winner it lost to):
 * on each shared target, a policy that conflicts with an older applied one is not applied at all.
 */
export function settleConflicts(policies: readonly ReadPolicy[]): {
  readonly applied: readonly ReadPolicy[];
  readonly conflicted: ReadonlyMap<ReadPolicy, ReadPolicy>;
} {
  const ordered = [...policies].sort((a, b) => byAge(a.source, b.source));
  const applied: ReadPolicy[] = [];
  const conflicted = new Map<ReadPolicy, ReadPolicy>();
  for (const p of ordered) {
    const ns = p.ref.namespace;
    const winner = applied.find(
      (q) =>
        q.ref.namespace === ns &&
        q.targets.some((t) => p.targets.some((u) => u.kind === t.kind && u.name === t.name)) &&
        policiesConflict(p, q),
    );
    if (winner) conflicted.set(p, winner);
    else applied.push(p);
  }
  return { applied, conflicted };
}
