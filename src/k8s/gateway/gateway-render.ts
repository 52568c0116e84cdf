/**
 * The Gateway API's share of the config: one routing map (`$gw_route`: which rule match a request
 * selects, route-match.ts), the upstream it names (`$gw_upstream`), and per RateLimitPolicy rule a
 * zone whose key is the policy's key only for requests that selected a route (or Gateway) the policy
 * targets — elsewhere it is empty, and an empty key is not accounted, so the limits of one route never
 * touch another's requests even where they share a location. Each served hostname is one server with a
 * location per path (their limit settings) and a catch-all `/`; every location answers 404 when no
 * match is selected and 500 when the selected rule has no backend, then proxies.
 */
import { createdMs, refOf } from '../objects.ts';
import type {
  IngressFragment,
  LocationFragment,
  ServerFragment,
  UpstreamFragment,
} from '../translate/fragment.ts';
import { directive, quoteArg } from '../translate/nginx-text.ts';
import type { ListenerPlan } from './gateway-listeners.ts';
import { GATEWAY_GROUP, GATEWAY_VERSION } from './gateway-objects.ts';
import { POLICY_SWITCH_ZONE, type PolicyZone, type ReadPolicy } from './rate-limit-policy.ts';
import type { RouteEntry } from './route-attachment.ts';
import { comparePrecedence, type MatchSource, matchPattern, sourceText } from './route-match.ts';
import { rewriteArgs } from './url-rewrite.ts';

export const ROUTE_VARIABLE = '$gw_route';
export const UPSTREAM_VARIABLE = '$gw_upstream';

export interface GatewayRender {
  readonly fragments: readonly IngressFragment[];
  readonly httpBlocks: readonly { readonly lines: readonly string[]; readonly field: string }[];
}

/** The entries a policy limits: those of its routes, or of every route of its Gateways. */
export function entriesOf(policy: ReadPolicy, entries: readonly RouteEntry[]): RouteEntry[] {
  const ns = policy.ref.namespace;
  const names = new Set(policy.targets.map((t) => `${t.kind}/${ns}/${t.name}`));
  return entries.filter((e) =>
    policy.targetKind === 'Gateway'
      ? [...e.gateways].some((g) => names.has(`Gateway/${g}`))
      : names.has(`HTTPRoute/${e.routeKey}`),
  );
}

function orderEntries(entries: readonly RouteEntry[]): RouteEntry[] {
  return [...entries].sort((a, b) => {
    if (a.host !== b.host) return a.host < b.host ? -1 : 1;
    const p = comparePrecedence(a.condition, b.condition);
    if (p !== 0) return p;
    const ca = a.route.metadata?.creationTimestamp ?? '';
    const cb = b.route.metadata?.creationTimestamp ?? '';
    if (ca !== cb) return String(ca) < String(cb) ? -1 : 1;
    if (a.routeKey !== b.routeKey) return a.routeKey < b.routeKey ? -1 : 1;
    return a.ruleIndex - b.ruleIndex || a.matchIndex - b.matchIndex;
  });
}

function limitReqLine(z: PolicyZone): string {
  const args = [`zone=${z.zone}`];
  if (z.burst) args.push(`burst=${z.burst}`);
  if (z.noDelay) args.push('nodelay');
  if (z.delay) args.push(`delay=${z.delay}`);
  return directive('limit_req', ...args);
}

/** A location's limit settings: the first route policy of its matches that sets each, then the Gateway's. */
function settingsLines(policies: readonly ReadPolicy[]): string[] {
  const route = policies.filter((p) => p.targetKind === 'Route');
  const gateway = policies.filter((p) => p.targetKind === 'Gateway');
  const first = <T>(pick: (p: ReadPolicy) => T | undefined) =>
    [...route, ...gateway].map(pick).find((v) => v !== undefined);
  const lines: string[] = [];
  const logLevel = first((p) => p.logLevel);
  const rejectCode = first((p) => p.rejectCode);
  if (logLevel !== undefined) lines.push(directive('limit_req_log_level', logLevel));
  if (rejectCode !== undefined) lines.push(directive('limit_req_status', String(rejectCode)));
  if (first((p) => p.dryRun) === true) lines.push(directive('limit_req_dry_run', 'on'));
  return lines;
}

/** The nginx location a match's path lands in (NGF's: a prefix is `location /p/` and `location = /p`). */
function locationsFor(e: RouteEntry): { match: LocationFragment['match']; path: string }[] {
  const { pathType, path } = e.condition;
  if (pathType === 'Exact') return [{ match: '=', path }];
  if (pathType === 'RegularExpression') return [{ match: '~', path }];
  const trimmed = path.replace(/\/+$/, '');
  return trimmed === ''
    ? [{ match: 'prefix', path: '/' }]
    : [
        { match: 'prefix', path: `${trimmed}/` },
        { match: '=', path: trimmed },
      ];
}

/** Whether a request nginx puts in location `loc` could select `e` (its zones must be listed there). */
function reachable(e: RouteEntry, loc: { match: LocationFragment['match']; path: string }): boolean {
  const { pathType, path } = e.condition;
  if (pathType === 'RegularExpression' || loc.match === '~' || (loc.match === 'prefix' && loc.path === '/'))
    return true;
  if (pathType === 'Exact') return loc.match === '=' ? path === loc.path : path.startsWith(loc.path);
  const p = path.replace(/\/+$/, '');
  const at = loc.path.replace(/\/+$/, '');
  // an ancestor prefix of the location, or a prefix inside it
  return p === '' || at === p || at.startsWith(`${p}/`) || (loc.match === 'prefix' && p.startsWith(at));
}

export function renderGateways(
  listeners: readonly ListenerPlan[],
  allEntries: readonly RouteEntry[],
  upstreams: readonly UpstreamFragment[],
  policies: readonly ReadPolicy[],
): GatewayRender {
  const entries = orderEntries(allEntries);
  const ids = new Map(entries.map((e, i) => [e, `e${i}`]));
  const usable = listeners.filter((l) => l.usable);
  if (usable.length === 0) return { fragments: [], httpBlocks: [] };

  const source: MatchSource = {
    headers: [...new Set(entries.flatMap((e) => e.condition.headers.map((h) => h.name)))].sort(),
    queryParams: [...new Set(entries.flatMap((e) => e.condition.queryParams.map((q) => q.name)))].sort(),
  };
  const http: string[] = [
    '# Gateway API: the HTTPRoute rule match each request selects (Gateway API precedence)',
  ];
  http.push(`map ${sourceText(source)} ${ROUTE_VARIABLE} {`);
  for (const e of entries) {
    const schemes = e.schemes.size === 2 ? 'both' : [...e.schemes][0]!;
    const pattern = matchPattern(e.condition, schemes, e.host === '' ? '_' : e.host, source);
    http.push(
      `    ${quoteArg(`~${pattern}`)} ${ids.get(e)}; # ${e.routeKey} rule ${e.ruleIndex} match ${e.matchIndex}`,
    );
  }
  http.push('}', `map ${ROUTE_VARIABLE} ${UPSTREAM_VARIABLE} {`);
  for (const e of entries) if (e.upstream !== null) http.push(`    ${ids.get(e)} ${e.upstream};`);
  http.push('}');
  for (const u of [...upstreams].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    http.push(`upstream ${quoteArg(u.name)} {`);
    if (u.note) http.push(`    # ${u.note}: placeholder server`);
    for (const s of u.servers) http.push(`    ${directive('server', s)}`);
    http.push('}');
  }

  const zonesByEntry = new Map<RouteEntry, PolicyZone[]>();
  const policiesByEntry = new Map<RouteEntry, ReadPolicy[]>();
  const switched = policies.filter((p) => p.switched);
  if (switched.length > 0) http.push(directive('keyval_zone', `zone=${POLICY_SWITCH_ZONE}:1m`));
  let n = 0;
  for (const p of policies) {
    const limited = entriesOf(p, entries);
    if (limited.length === 0) continue;
    const sw = p.switched ? `$gw_switch_${switched.indexOf(p)}` : null;
    if (sw !== null) http.push(directive('keyval', quoteArg(p.key), sw, `zone=${POLICY_SWITCH_ZONE}`));
    for (const e of limited) policiesByEntry.set(e, [...(policiesByEntry.get(e) ?? []), p]);
    for (const z of p.zones) {
      const key = `$gw_rl_${n++}`;
      http.push(`# RateLimitPolicy ${p.key}: ${z.zone}`);
      if (sw === null) {
        http.push(`map ${ROUTE_VARIABLE} ${key} {`);
        for (const e of limited) http.push(`    ${ids.get(e)} ${quoteArg(z.key)};`);
      } else {
        // switched off by the keyval value "off" or "0" (`<namespace>/<name>` in gateway_policies)
        http.push(`map "${ROUTE_VARIABLE}|${sw}" ${key} {`);
        for (const e of limited) http.push(`    "${ids.get(e)}|off" "";`, `    "${ids.get(e)}|0" "";`);
        const alternatives = limited.map((e) => ids.get(e)).join('|');
        http.push(`    ${quoteArg(`~^(?:${alternatives})\\|`)} ${quoteArg(z.key)};`);
      }
      http.push('}');
      http.push(
        directive(
          'limit_req_zone',
          key,
          `zone=${z.zone}:${z.size}`,
          `rate=${z.rate}`,
          ...(p.sync ? ['sync'] : []),
        ),
      );
      for (const e of limited) zonesByEntry.set(e, [...(zonesByEntry.get(e) ?? []), z]);
    }
  }

  // servers: every usable listener hostname, owned by the Gateway of its first listener
  const hosts = new Map<string, ListenerPlan[]>();
  for (const l of usable) {
    const host = l.hostname ?? '';
    hosts.set(host, [...(hosts.get(host) ?? []), l]);
  }
  for (const e of entries)
    if (!hosts.has(e.host)) {
      const via = usable.filter((l) => e.gateways.has(l.gatewayKey) && e.schemes.has(l.scheme));
      hosts.set(e.host, via);
    }
  const byGateway = new Map<string, { gateway: ListenerPlan['gateway']; servers: ServerFragment[] }>();
  for (const [host, ls] of [...hosts.entries()].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const owner = ls[0]!;
    const mine = entries.filter((e) => e.host === host);
    const locations = new Map<
      string,
      { match: LocationFragment['match']; path: string; entries: RouteEntry[] }
    >();
    locations.set('prefix /', { match: 'prefix', path: '/', entries: [] });
    for (const e of mine) {
      for (const loc of locationsFor(e)) {
        const id = `${loc.match} ${loc.path}`;
        const at = locations.get(id) ?? { ...loc, entries: [] };
        at.entries.push(e);
        locations.set(id, at);
      }
    }
    // RequestRedirect rules answer before the backend is looked at
    const redirects = mine.flatMap((e) =>
      e.redirect === null
        ? []
        : [
            `if (${ROUTE_VARIABLE} = ${ids.get(e)}) { return ${e.redirect.code} ${quoteArg(e.redirect.url)}; }`,
          ],
    );
    // URLRewrite rules rewrite the path the backend receives, for the match selected
    const rewrites = mine.flatMap((e) => {
      if (e.rewrite === null) return [];
      const [regex, replacement] = rewriteArgs(e.rewrite, e.condition);
      return [`if (${ROUTE_VARIABLE} = ${ids.get(e)}) { rewrite ${quoteArg(regex)} ${replacement} break; }`];
    });
    const tlsListener = ls.find((l) => l.scheme === 'https' && l.certificate !== null);
    const server: ServerFragment = {
      host,
      tls: tlsListener !== undefined,
      tlsSecret: tlsListener?.certificate ?? null,
      sslRedirect: null,
      plainHttp: ls.some((l) => l.scheme === 'http'),
      serverSnippets: [],
      serverSnippetsField: '',
      locations: [...locations.values()].map((loc) => {
        const zones = [
          ...new Set(mine.filter((e) => reachable(e, loc)).flatMap((e) => zonesByEntry.get(e) ?? [])),
        ];
        const limitReq = zones.map(limitReqLine);
        return {
          match: loc.match,
          path: loc.path,
          owner: `Gateway ${owner.gatewayKey}`,
          comments: [...new Set(loc.entries.map((e) => `# HTTPRoute ${e.routeKey}`))],
          snippets: [],
          snippetsField: '',
          upstream: '',
          proxyPass: `http://${UPSTREAM_VARIABLE}`,
          rewriteLines: [
            `if (${ROUTE_VARIABLE} = "") { return 404; }`,
            ...redirects,
            `if (${UPSTREAM_VARIABLE} = "") { return 500; }`,
            ...rewrites,
          ],
          limitLines: [
            ...limitReq,
            ...(limitReq.length === 0
              ? []
              : settingsLines([...new Set(loc.entries.flatMap((e) => policiesByEntry.get(e) ?? []))])),
          ],
        };
      }),
    };
    const slot = byGateway.get(owner.gatewayKey) ?? { gateway: owner.gateway, servers: [] };
    slot.servers.push(server);
    byGateway.set(owner.gatewayKey, slot);
  }
  const fragments = [...byGateway.entries()].map(
    ([key, { gateway, servers }]): IngressFragment => ({
      key: `gateway:${key}`,
      ref: refOf(gateway, 'Gateway', `${GATEWAY_GROUP}/${GATEWAY_VERSION}`),
      role: 'plain',
      createdMs: createdMs(gateway),
      httpBlocks: [],
      upstreams: [],
      servers,
    }),
  );
  return { fragments, httpBlocks: [{ lines: http, field: 'Gateway API' }] };
}
