/**
 * HTTPRoutes → the rule matches each served hostname answers, and the route's status per parent.
 * A parentRef to one of our Gateways attaches where a listener (by `sectionName`/`port`) allows the
 * route's namespace and shares a hostname with it; each rule's backendRefs (Services of the route's
 * namespace, with weights) become one upstream. What the replica cannot honour is refused loudly:
 * filters other than `RequestRedirect` and `URLRewrite`'s path (the route is not accepted, reason `UnsupportedValue`) and other
 * backend kinds or namespaces
 * (`ResolvedRefs=False`; requests for that rule get 500, as the spec asks).
 */

import type { TranslationProblem } from '../objects.ts';
import { byAge, keyOf, refOf } from '../objects.ts';
import { type BackendIndex, resolveBackend } from '../translate/backends.ts';
import type { UpstreamFragment } from '../translate/fragment.ts';
import { condition } from './conditions.ts';
import type { ListenerPlan, Scheme } from './gateway-listeners.ts';
import {
  CONTROLLER_NAME,
  type Condition,
  GATEWAY_GROUP,
  GATEWAY_VERSION,
  type HTTPRoute,
  type HTTPRouteFilter,
  type HTTPRouteMatch,
  type ParentReference,
  type RouteParentStatus,
} from './gateway-objects.ts';
import { intersectHostnames } from './hostnames.ts';
import { type Redirect, readRedirect } from './request-redirect.ts';
import type { MatchCondition, PathType } from './route-match.ts';
import { type PathRewrite, readUrlRewrite } from './url-rewrite.ts';

export interface RouteEntry {
  readonly route: HTTPRoute;
  readonly routeKey: string;
  readonly ruleIndex: number;
  readonly matchIndex: number;
  /** The server's name; `''` for a listener and route without hostnames (the default server). */
  readonly host: string;
  readonly schemes: Set<Scheme>;
  /** `namespace/name` of the Gateways it is attached through. */
  readonly gateways: Set<string>;
  readonly condition: MatchCondition;
  /** The rule's upstream; null: no usable backend (answered with 500). */
  readonly upstream: string | null;
  /** The rule's `RequestRedirect`: answered with it instead of proxying. */
  readonly redirect: Redirect | null;
  /** The rule's `URLRewrite` path: the backend receives the rewritten path. */
  readonly rewrite: PathRewrite | null;
}

export interface RouteAttachment {
  readonly entries: readonly RouteEntry[];
  readonly upstreams: readonly UpstreamFragment[];
  /** Route key → its parents' statuses (ours only). */
  readonly parents: ReadonlyMap<string, readonly RouteParentStatus[]>;
  /** Listener → number of routes attached. */
  readonly attached: ReadonlyMap<ListenerPlan, number>;
  readonly problems: readonly TranslationProblem[];
}

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'CONNECT', 'OPTIONS', 'TRACE', 'PATCH'];
const HEADER_NAME = /^[A-Za-z0-9-]+$/;
const QUERY_NAME = /^[A-Za-z0-9_]+$/;

/** A rule match as a condition, or why it cannot be served. */
function readMatch(m: HTTPRouteMatch, field: string): MatchCondition | { error: string } {
  const pathType = (m.path?.type ?? 'PathPrefix') as PathType;
  const path = m.path?.value ?? '/';
  if (!['Exact', 'PathPrefix', 'RegularExpression'].includes(pathType))
    return { error: `${field}.path.type: ${pathType} is not supported` };
  if (pathType !== 'RegularExpression' && !path.startsWith('/'))
    return { error: `${field}.path.value: "${path}" must start with "/"` };
  if (/[\s;{}]/.test(path)) return { error: `${field}.path.value: "${path}" holds a space, ";", "{" or "}"` };
  const method = m.method ?? null;
  if (method !== null && !METHODS.includes(method))
    return { error: `${field}.method: ${method} is not supported` };
  const pairs = (list: HTTPRouteMatch['headers'], what: string, name: RegExp, lower: boolean) => {
    const out: MatchCondition['headers'][number][] = [];
    for (const [i, h] of (list ?? []).entries()) {
      const type = h.type ?? 'Exact';
      if (type !== 'Exact' && type !== 'RegularExpression')
        return { error: `${field}.${what}[${i}].type: ${type} is not supported` };
      if (!h.name || !name.test(h.name))
        return {
          error: `${field}.${what}[${i}].name: "${h.name ?? ''}" cannot be matched through an nginx variable`,
        };
      const n = lower ? h.name.toLowerCase() : h.name;
      if (out.some((o) => o.name === n)) continue; // the spec: only the first of a name counts
      out.push({ name: n, type, value: h.value ?? '' });
    }
    return out;
  };
  const headers = pairs(m.headers, 'headers', HEADER_NAME, true);
  if ('error' in headers) return headers;
  const queryParams = pairs(m.queryParams, 'queryParams', QUERY_NAME, false);
  if ('error' in queryParams) return queryParams;
  return { pathType, path, method, headers, queryParams };
}

function parentKey(ref: ParentReference, routeNs: string): string {
  return `${ref.namespace ?? routeNs}/${ref.name ?? ''}`;
}

function isGatewayParent(ref: ParentReference): boolean {
  return (ref.group ?? GATEWAY_GROUP) === GATEWAY_GROUP && (ref.kind ?? 'Gateway') === 'Gateway';
}

function lcm(a: number, b: number): number {
  const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));
  return (a / gcd(a, b)) * b;
}

/** A backendRef that cannot be used, as its route's `ResolvedRefs=False` says it. */
interface RefProblem {
  readonly reason: string;
  readonly field: string;
  readonly message: string;
}

/** One upstream for a rule's backendRefs: each Service's endpoints share its weight. */
function ruleUpstream(
  route: HTTPRoute,
  ruleIndex: number,
  backends: BackendIndex,
): { upstream: UpstreamFragment | null; problems: RefProblem[] } {
  const ns = route.metadata?.namespace ?? 'default';
  const problems: RefProblem[] = [];
  const groups: { servers: readonly string[]; weight: number; note: string | null }[] = [];
  for (const [i, b] of (route.spec?.rules?.[ruleIndex]?.backendRefs ?? []).entries()) {
    const field = `spec.rules[${ruleIndex}].backendRefs[${i}]`;
    if ((b.group ?? '') !== '' || (b.kind ?? 'Service') !== 'Service') {
      problems.push({ reason: 'InvalidKind', field, message: 'only Services are supported' });
      continue;
    }
    if ((b.namespace ?? ns) !== ns) {
      problems.push({
        reason: 'RefNotPermitted',
        field,
        message: `Service ${b.namespace}/${b.name} is in another namespace (ReferenceGrants are not read)`,
      });
      continue;
    }
    if (!b.name || b.port === undefined) {
      problems.push({
        reason: 'UnsupportedValue',
        field,
        message: 'a Service backend needs a name and a port',
      });
      continue;
    }
    const weight = b.weight ?? 1;
    if (weight === 0) continue;
    const resolved = resolveBackend(backends, ns, { service: b.name, port: b.port });
    if (resolved.note?.endsWith('not found')) {
      problems.push({ reason: 'BackendNotFound', field, message: resolved.note });
      continue;
    }
    groups.push({ servers: resolved.servers, weight, note: resolved.note });
  }
  if (groups.length === 0) return { upstream: null, problems };
  const common = groups.reduce((m, g) => lcm(m, g.servers.length), 1);
  const servers = groups.flatMap((g) => {
    const w = (g.weight * common) / g.servers.length;
    return g.servers.map((s) => (w === 1 ? s : `${s} weight=${w}`));
  });
  const name = `gw-${ns}-${route.metadata?.name ?? ''}-rule${ruleIndex}`;
  const note = groups.find((g) => g.note !== null)?.note ?? null;
  return { upstream: { name, servers, note }, problems };
}

export function attachRoutes(
  routes: readonly HTTPRoute[],
  listeners: readonly ListenerPlan[],
  backends: BackendIndex,
): RouteAttachment {
  const entries = new Map<string, RouteEntry>();
  const upstreams: UpstreamFragment[] = [];
  const parents = new Map<string, RouteParentStatus[]>();
  const attached = new Map<ListenerPlan, number>();
  const problems: TranslationProblem[] = [];
  const gatewayKeys = new Set(listeners.map((l) => l.gatewayKey));

  for (const route of [...routes].sort(byAge)) {
    const ns = route.metadata?.namespace ?? 'default';
    const rkey = keyOf(route);
    const ref = refOf(route, 'HTTPRoute', `${GATEWAY_GROUP}/${GATEWAY_VERSION}`);
    const statuses: RouteParentStatus[] = [];
    const rules = route.spec?.rules ?? [];
    // what holds for the whole route: filters, matches, backends
    let refusal: string | null = null;
    const conditionsOf: (MatchCondition | null)[][] = [];
    const redirectOf: (Redirect | null)[] = [];
    const rewriteOf: (PathRewrite | null)[] = [];
    for (const [ri, rule] of rules.entries()) {
      const filters = [...(rule.filters ?? []), ...(rule.backendRefs ?? []).flatMap((b) => b.filters ?? [])];
      const others = filters.filter(
        (f, i) =>
          !((f.type === 'RequestRedirect' || f.type === 'URLRewrite') && i < (rule.filters ?? []).length),
      );
      if (others.length > 0 && refusal === null)
        refusal = `spec.rules[${ri}]: filter ${others[0]!.type ?? '(no type)'} is not supported by limitswitch`;
      const redirects = (rule.filters ?? []).filter((f) => f.type === 'RequestRedirect');
      let redirect: Redirect | null = null;
      if (redirects.length > 1 && refusal === null)
        refusal = `spec.rules[${ri}].filters: more than one RequestRedirect`;
      else if (redirects.length === 1) {
        const read = readRedirect(
          redirects[0]!,
          `spec.rules[${ri}].filters[${(rule.filters ?? []).indexOf(redirects[0]!)}]`,
        );
        if ('error' in read) refusal ??= read.error;
        else redirect = read;
      }
      redirectOf.push(redirect);
      const matches = rule.matches && rule.matches.length > 0 ? rule.matches : [{}];
      const rewrite = ruleRewrite(rule.filters ?? [], matches, ri, redirect !== null);
      if ('error' in rewrite) refusal ??= rewrite.error;
      rewriteOf.push('error' in rewrite ? null : rewrite.rewrite);
      conditionsOf.push(
        matches.map((m, mi) => {
          const read = readMatch(m, `spec.rules[${ri}].matches[${mi}]`);
          if ('error' in read) {
            refusal ??= read.error;
            return null;
          }
          return read;
        }),
      );
    }
    const ruleUpstreams = rules.map((_, ri) => ruleUpstream(route, ri, backends));
    const refProblems = ruleUpstreams.flatMap((u) => u.problems);

    for (const parent of route.spec?.parentRefs ?? []) {
      if (!isGatewayParent(parent) || !gatewayKeys.has(parentKey(parent, ns))) continue;
      const gwKey = parentKey(parent, ns);
      const status = (ok: boolean, reason: string, message: string, resolved: Condition) =>
        statuses.push({
          parentRef: parent,
          controllerName: CONTROLLER_NAME,
          conditions: [condition(route, 'Accepted', ok, reason, message), resolved],
        });
      const resolved =
        refProblems.length === 0
          ? condition(route, 'ResolvedRefs', true, 'ResolvedRefs', 'All references are resolved')
          : condition(
              route,
              'ResolvedRefs',
              false,
              refProblems[0]!.reason,
              `${refProblems[0]!.field}: ${refProblems[0]!.message}`,
            );
      const candidates = listeners.filter(
        (l) =>
          l.gatewayKey === gwKey &&
          (parent.sectionName === undefined || parent.sectionName === l.name) &&
          (parent.port === undefined || parent.port === (l.scheme === 'http' ? 80 : 443)),
      );
      if (candidates.length === 0) {
        status(
          false,
          'NoMatchingParent',
          `Gateway ${gwKey} has no listener ${parent.sectionName ?? ''}`.trim(),
          resolved,
        );
        continue;
      }
      const allowed = candidates.filter(
        (l) => l.usable && (l.allowsAllNamespaces || l.gateway.metadata?.namespace === ns),
      );
      if (allowed.length === 0) {
        status(
          false,
          'NotAllowedByListeners',
          'no usable listener allows routes from this namespace',
          resolved,
        );
        continue;
      }
      const hosts = allowed.map((l) => ({
        l,
        hosts: intersectHostnames(l.hostname, route.spec?.hostnames ?? []),
      }));
      if (hosts.every((h) => h.hosts.length === 0)) {
        status(
          false,
          'NoMatchingListenerHostname',
          'no listener hostname matches the route hostnames',
          resolved,
        );
        continue;
      }
      if (refusal !== null) {
        status(false, 'UnsupportedValue', refusal, resolved);
        problems.push({ object: ref, field: refusal.split(':')[0]!, error: refusal, severity: 'error' });
        continue;
      }
      status(true, 'Accepted', 'The route is accepted', resolved);
      for (const { l, hosts: names } of hosts) {
        if (names.length === 0) continue;
        attached.set(l, (attached.get(l) ?? 0) + 1);
        for (const host of names) {
          for (const [ri, conds] of conditionsOf.entries()) {
            for (const [mi, c] of conds.entries()) {
              const id = `${rkey}#${ri}#${mi}#${host}`;
              const e = entries.get(id) ?? {
                route,
                routeKey: rkey,
                ruleIndex: ri,
                matchIndex: mi,
                host,
                schemes: new Set<Scheme>(),
                gateways: new Set<string>(),
                condition: c!,
                upstream: ruleUpstreams[ri]!.upstream?.name ?? null,
                redirect: redirectOf[ri] ?? null,
                rewrite: rewriteOf[ri] ?? null,
              };
              e.schemes.add(l.scheme);
              e.gateways.add(gwKey);
              entries.set(id, e);
            }
          }
        }
      }
    }
    if (statuses.some((s) => s.conditions[0]!.status === 'True'))
      for (const u of ruleUpstreams) if (u.upstream) upstreams.push(u.upstream);
    for (const p of refProblems)
      problems.push({ object: ref, field: p.field, error: p.message, severity: 'warning' });
    if (statuses.length > 0) parents.set(rkey, statuses);
  }
  return { entries: [...entries.values()], upstreams, parents, attached, problems };
}

/** A rule's one `URLRewrite` (none: null); `ReplacePrefixMatch` needs every match to be a `PathPrefix`. */
function ruleRewrite(
  filters: readonly HTTPRouteFilter[],
  matches: readonly HTTPRouteMatch[],
  ri: number,
  redirects: boolean,
): { rewrite: PathRewrite | null } | { error: string } {
  const found = filters.filter((f) => f.type === 'URLRewrite');
  if (found.length === 0) return { rewrite: null };
  const field = `spec.rules[${ri}].filters[${filters.indexOf(found[0]!)}]`;
  if (found.length > 1) return { error: `spec.rules[${ri}].filters: more than one URLRewrite` };
  if (redirects) return { error: `${field}: URLRewrite and RequestRedirect in one rule` };
  const read = readUrlRewrite(found[0]!, field);
  if ('error' in read) return read;
  if (
    read.type === 'ReplacePrefixMatch' &&
    matches.some((m) => (m.path?.type ?? 'PathPrefix') !== 'PathPrefix')
  )
    return { error: `${field}.urlRewrite.path: ReplacePrefixMatch needs PathPrefix matches` };
  return { rewrite: read };
}
