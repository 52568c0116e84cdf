/**
 * Gateway API objects → their share of the config and the status each object should carry. Pure: the
 * caller supplies the Services, the TLS Secrets and a probe that checks a piece of config alone (so a
 * policy or route nginx would refuse is reported on its own status and left out, never taking the
 * others down with it).
 */

import type { TranslationProblem } from '../objects.ts';
import { keyOf, refOf } from '../objects.ts';
import type { BackendIndex } from '../translate/backends.ts';
import type { IngressFragment } from '../translate/fragment.ts';
import type { TlsSecretView } from '../translate/tls-secrets.ts';
import { condition, RATE_LIMIT_POLICY_AFFECTED } from './conditions.ts';
import { type ListenerPlan, planGateways } from './gateway-listeners.ts';
import {
  CONTROLLER_NAME,
  type Condition,
  GATEWAY_GROUP,
  type GatewayObjects,
  type ParentReference,
  type PolicyAncestorStatus,
  type RateLimitPolicy,
  type RouteParentStatus,
} from './gateway-objects.ts';
import { entriesOf, renderGateways } from './gateway-render.ts';
import { type ReadPolicy, readRateLimitPolicy, settleConflicts } from './rate-limit-policy.ts';
import { attachRoutes, type RouteEntry } from './route-attachment.ts';

export type GatewayKind = 'GatewayClass' | 'Gateway' | 'HTTPRoute' | 'RateLimitPolicy';

export interface StatusUpdate {
  readonly kind: GatewayKind;
  /** Null for the cluster-scoped GatewayClass. */
  readonly namespace: string | null;
  readonly name: string;
  readonly status: Readonly<Record<string, unknown>>;
}

export interface GatewayTranslation {
  readonly fragments: readonly IngressFragment[];
  readonly httpBlocks: readonly { readonly lines: readonly string[]; readonly field: string }[];
  readonly problems: readonly TranslationProblem[];
  readonly statuses: readonly StatusUpdate[];
}

/** Checks config pieces alone: the error nginx's parser gives, or null. */
export type GatewayProbe = (
  fragments: readonly IngressFragment[],
  httpBlocks: GatewayTranslation['httpBlocks'],
) => string | null;

export interface GatewayContext {
  readonly backends: BackendIndex;
  readonly secrets: TlsSecretView;
  readonly probe: GatewayProbe;
}

function ours<T extends { controllerName: string }>(
  existing: readonly T[] | undefined,
  mine: readonly T[],
): T[] {
  return [...(existing ?? []).filter((s) => s.controllerName !== CONTROLLER_NAME), ...mine];
}

export function translateGateways(objs: GatewayObjects, ctx: GatewayContext): GatewayTranslation {
  const problems: TranslationProblem[] = [];
  const statuses: StatusUpdate[] = [];
  const plan = planGateways(objs.gatewayClasses, objs.gateways, ctx.secrets);
  const usable = plan.listeners.filter((l) => l.usable);

  // policies: each checked alone, then NGF's conflict rule
  const invalid = new Map<RateLimitPolicy, string>();
  const valid: ReadPolicy[] = [];
  for (const p of objs.rateLimitPolicies) {
    const read = readRateLimitPolicy(p);
    if ('error' in read) {
      invalid.set(p, `${read.field}: ${read.error}`);
      continue;
    }
    valid.push(read.policy);
  }
  const { applied: settled, conflicted } = settleConflicts(valid);

  let attachment = attachRoutes(objs.httpRoutes, plan.listeners, ctx.backends);
  // a route whose matches nginx refuses (a bad regular expression) is left out on its own
  const refusedRoutes = new Map<string, string>();
  for (const key of new Set(attachment.entries.map((e) => e.routeKey))) {
    const own = attachment.entries.filter((e) => e.routeKey === key);
    const alone = renderGateways(usable, own, [], []);
    const error = ctx.probe(alone.fragments, alone.httpBlocks);
    if (error !== null) refusedRoutes.set(key, error);
  }
  if (refusedRoutes.size > 0)
    attachment = attachRoutes(
      objs.httpRoutes.filter((r) => !refusedRoutes.has(keyOf(r))),
      plan.listeners,
      ctx.backends,
    );
  const applied: ReadPolicy[] = [];
  for (const p of settled) {
    const alone = renderGateways(usable, entriesOf(p, attachment.entries), attachment.upstreams, [p]);
    const error =
      entriesOf(p, attachment.entries).length === 0 ? null : ctx.probe(alone.fragments, alone.httpBlocks);
    if (error === null) applied.push(p);
    else invalid.set(p.source, error);
  }
  const rendered = renderGateways(usable, attachment.entries, attachment.upstreams, applied);
  problems.push(...attachment.problems);

  // statuses
  for (const c of plan.classes) {
    statuses.push({
      kind: 'GatewayClass',
      namespace: null,
      name: c.metadata?.name ?? '',
      status: {
        conditions: [condition(c, 'Accepted', true, 'Accepted', 'GatewayClass is accepted by limitswitch')],
      },
    });
  }
  const affected = (e: RouteEntry) => applied.some((p) => entriesOf(p, [e]).length > 0);
  for (const gw of plan.gateways) {
    const mine = plan.listeners.filter((l) => l.gateway === gw);
    const anyUsable = mine.some((l) => l.usable);
    const conditions: Condition[] = [
      anyUsable
        ? condition(gw, 'Accepted', true, 'Accepted', 'Gateway is accepted')
        : condition(gw, 'Accepted', false, 'ListenersNotValid', 'no listener is valid'),
      anyUsable
        ? condition(gw, 'Programmed', true, 'Programmed', 'Gateway is programmed on the replicas')
        : condition(gw, 'Programmed', false, 'Invalid', 'no listener is valid'),
    ];
    if (
      applied.some(
        (p) =>
          p.targetKind === 'Gateway' &&
          p.ref.namespace === gw.metadata?.namespace &&
          p.targets.some((t) => t.name === gw.metadata?.name),
      )
    )
      conditions.push(
        condition(
          gw,
          RATE_LIMIT_POLICY_AFFECTED,
          true,
          'PolicyAffected',
          'The RateLimitPolicy is applied to the resource.',
        ),
      );
    statuses.push({
      kind: 'Gateway',
      namespace: gw.metadata?.namespace ?? 'default',
      name: gw.metadata?.name ?? '',
      status: {
        conditions,
        listeners: mine.map((l: ListenerPlan) => ({
          name: l.name,
          supportedKinds: [{ group: GATEWAY_GROUP, kind: 'HTTPRoute' }],
          attachedRoutes: attachment.attached.get(l) ?? 0,
          conditions: l.conditions,
        })),
      },
    });
    problems.push(...problemsOfListeners(mine));
  }
  for (const route of objs.httpRoutes) {
    const key = keyOf(route);
    let parents: readonly RouteParentStatus[] | undefined = attachment.parents.get(key);
    const refused = refusedRoutes.get(key);
    if (refused !== undefined) {
      parents = (attachRoutes([route], plan.listeners, ctx.backends).parents.get(key) ?? []).map((s) => ({
        ...s,
        conditions: [condition(route, 'Accepted', false, 'UnsupportedValue', refused), s.conditions[1]!],
      }));
      problems.push({
        object: {
          kind: 'HTTPRoute',
          apiVersion: `${GATEWAY_GROUP}/v1`,
          namespace: route.metadata?.namespace ?? 'default',
          name: route.metadata?.name ?? '',
        },
        field: 'spec.rules',
        error: refused,
        severity: 'error',
      });
    }
    if (parents === undefined) {
      // no longer attached to any of our Gateways: our entries leave its status
      if (route.status?.parents?.some((s) => s.controllerName === CONTROLLER_NAME))
        statuses.push({
          kind: 'HTTPRoute',
          namespace: route.metadata?.namespace ?? 'default',
          name: route.metadata?.name ?? '',
          status: { parents: ours(route.status.parents, []) },
        });
      continue;
    }
    const isAffected = attachment.entries.some((e) => e.routeKey === key && affected(e));
    const withPolicy = parents.map((s) =>
      isAffected
        ? {
            ...s,
            conditions: [
              ...s.conditions,
              condition(
                route,
                RATE_LIMIT_POLICY_AFFECTED,
                true,
                'PolicyAffected',
                'The RateLimitPolicy is applied to the resource.',
              ),
            ],
          }
        : s,
    );
    statuses.push({
      kind: 'HTTPRoute',
      namespace: route.metadata?.namespace ?? 'default',
      name: route.metadata?.name ?? '',
      status: { parents: ours(route.status?.parents, withPolicy) },
    });
  }
  for (const p of objs.rateLimitPolicies) {
    const read = valid.find((v) => v.source === p);
    const ns = p.metadata?.namespace ?? 'default';
    const ancestors = ancestorsOf(p, read, attachment.entries, plan.gateways.map(keyOf));
    let accepted: Condition;
    const error = invalid.get(p);
    const winner = read ? conflicted.get(read) : undefined;
    if (error !== undefined) accepted = condition(p, 'Accepted', false, 'Invalid', error);
    else if (winner !== undefined)
      accepted = condition(
        p,
        'Accepted',
        false,
        'Conflicted',
        `Conflicts with RateLimitPolicy ${winner.key}, which is older: both set dryRun, logLevel or rejectCode on one target`,
      );
    else if (ancestors.found) accepted = condition(p, 'Accepted', true, 'Accepted', 'The Policy is accepted');
    else
      accepted = condition(
        p,
        'Accepted',
        false,
        'TargetNotFound',
        'no target is an HTTPRoute or Gateway served by limitswitch',
      );
    if (accepted.status === 'False') {
      problems.push({
        object: {
          kind: 'RateLimitPolicy',
          apiVersion: 'gateway.nginx.org/v1alpha1',
          namespace: ns,
          name: p.metadata?.name ?? '',
        },
        field: 'spec',
        error: `${accepted.reason}: ${accepted.message}`,
        severity: accepted.reason === 'Invalid' ? 'error' : 'warning',
      });
    }
    // GEP-713's Programmed, in NGF's words: applied, or overridden by the policy it conflicts with
    const programmed =
      accepted.reason === 'Accepted'
        ? [condition(p, 'Programmed', true, 'Programmed', 'Policy is programmed in the data plane')]
        : accepted.reason === 'Conflicted'
          ? [
              condition(
                p,
                'Programmed',
                false,
                'Overridden',
                'Policy is overridden by a conflicting policy of greater precedence',
              ),
            ]
          : [];
    const mine: PolicyAncestorStatus[] = ancestors.refs.map((ancestorRef) => ({
      ancestorRef,
      controllerName: CONTROLLER_NAME,
      conditions: [accepted, ...programmed],
    }));
    statuses.push({
      kind: 'RateLimitPolicy',
      namespace: ns,
      name: p.metadata?.name ?? '',
      status: { ancestors: ours(p.status?.ancestors, mine) },
    });
  }
  return { fragments: rendered.fragments, httpBlocks: rendered.httpBlocks, problems, statuses };
}

function problemsOfListeners(listeners: readonly ListenerPlan[]): TranslationProblem[] {
  return listeners.flatMap((l) => {
    const bad = l.conditions.find((c) =>
      c.type === 'Conflicted' ? c.status === 'True' : c.status === 'False',
    );
    if (!bad || l.usable) return [];
    return [
      {
        object: refOf(l.gateway, 'Gateway', `${GATEWAY_GROUP}/v1`),
        field: `spec.listeners[${l.name}]`,
        error: `${bad.reason}: ${bad.message}`,
        severity: 'warning' as const,
      },
    ];
  });
}

/** The Gateways a policy's targets reach (its PolicyStatus ancestors); the target itself when none. */
function ancestorsOf(
  p: RateLimitPolicy,
  read: ReadPolicy | undefined,
  entries: readonly RouteEntry[],
  gateways: readonly string[],
): { refs: ParentReference[]; found: boolean } {
  const ns = p.metadata?.namespace ?? 'default';
  const keys = new Set<string>();
  for (const t of p.spec?.targetRefs ?? []) {
    if (t.kind === 'Gateway' && gateways.includes(`${ns}/${t.name}`)) keys.add(`${ns}/${t.name}`);
    if (t.kind === 'HTTPRoute')
      for (const e of entries) if (e.routeKey === `${ns}/${t.name}`) for (const g of e.gateways) keys.add(g);
  }
  const found = read !== undefined && keys.size > 0;
  if (keys.size > 0) {
    return {
      refs: [...keys].sort().map((k) => ({
        group: GATEWAY_GROUP,
        kind: 'Gateway',
        namespace: k.split('/')[0]!,
        name: k.split('/')[1]!,
      })),
      found,
    };
  }
  const first = p.spec?.targetRefs?.[0];
  return {
    refs: first
      ? [
          {
            group: first.group ?? GATEWAY_GROUP,
            kind: first.kind ?? 'HTTPRoute',
            namespace: ns,
            name: first.name ?? '',
          },
        ]
      : [],
    found,
  };
}
