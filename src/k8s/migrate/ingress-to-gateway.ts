/**
 * Ingresses → Gateway API objects that, rendered by limitswitch, route and limit as the Ingresses do:
 * one GatewayClass (limitswitch's controller) and one Gateway with a listener per host (HTTP, and HTTPS
 * for the hosts of `spec.tls`), one HTTPRoute per Ingress host, and one RateLimitPolicy per Ingress
 * with limits, on its routes (migrate-limits.ts). Every annotation is either carried over or named in
 * a warning; invalid values are errors, worded as `render` words them.
 */
import type {
  Gateway,
  GatewayClass,
  HTTPRoute,
  HTTPRouteRule,
  Listener,
  RateLimitPolicy,
} from '../gateway/gateway-objects.ts';
import { CONTROLLER_NAME, GATEWAY_GROUP, NGF_GROUP, NGF_VERSION } from '../gateway/gateway-objects.ts';
import { ZONE_SYNC_ANNOTATION } from '../gateway/rate-limit-policy.ts';
import type { ConfigMap, Ingress, KubeObject, Service } from '../objects.ts';
import { keyOf } from '../objects.ts';
import {
  type ANNOTATION_IDS,
  ANNOTATION_PREFIXES,
  ANNOTATIONS,
  readAnnotations,
} from '../translate/annotations.ts';
import { readConfigMap } from '../translate/configmap-settings.ts';
import { type NormalBackend, normalizeIngress } from '../translate/ingress-normalize.ts';
import { problemMessage } from '../watch/event-recorder.ts';
import { migrateLimits } from './migrate-limits.ts';
import { migratePath } from './migrate-paths.ts';

export interface MigrateOptions {
  /** An existing GatewayClass to use; default: a `limitswitch` one is printed too. */
  readonly gatewayClass?: string;
  readonly gatewayName?: string;
  /** Default: the Ingresses' namespace when they share one, else `default`. */
  readonly gatewayNamespace?: string;
}

export interface Migration {
  readonly objects: readonly KubeObject[];
  readonly warnings: readonly string[];
  readonly errors: readonly string[];
}

/** The annotations the migration reads (the rest are named in a warning). */
const CARRIED = new Set<string>([
  'kubernetes.io/ingress.class',
  ...[
    'limitReqRate',
    'limitReqKey',
    'limitReqZoneSize',
    'limitReqBurst',
    'limitReqDelay',
    'limitReqNoDelay',
    'limitReqRejectCode',
    'limitReqDryRun',
    'limitReqLogLevel',
    'limitReqScale',
    'zoneSync',
    'limitRps',
    'limitRpm',
    'limitBurstMultiplier',
    'limitAllowlist',
    'limitWhitelist',
    'sslRedirect',
    'ingressNginxSslRedirect',
    'useRegex',
    'rewriteTarget',
  ].map((id) => ANNOTATIONS[id as (typeof ANNOTATION_IDS)[number]].name),
]);

function sectionName(scheme: 'http' | 'https', host: string): string {
  return host === ''
    ? scheme
    : `${scheme}-${host.replace(/^\*\./, 'wildcard.').replaceAll('.', '-')}`.slice(0, 253);
}

export function migrateIngresses(
  ingresses: readonly Ingress[],
  configMap: ConfigMap | null,
  services: readonly Service[],
  options: MigrateOptions = {},
): Migration {
  const warnings: string[] = [];
  const errors: string[] = [];
  const { settings, problems: cmProblems } = readConfigMap(configMap, null);
  for (const p of cmProblems) errors.push(`ConfigMap: ${problemMessage(p)}`);
  const namespaces = [...new Set(ingresses.map((i) => i.metadata?.namespace ?? 'default'))];
  const gwNs = options.gatewayNamespace ?? (namespaces.length === 1 ? namespaces[0]! : 'default');
  const gwName = options.gatewayName ?? 'limitswitch';
  const className = options.gatewayClass ?? 'limitswitch';
  const listeners = new Map<string, Listener>();
  const routes: HTTPRoute[] = [];
  const policies: RateLimitPolicy[] = [];

  for (const ing of ingresses) {
    const key = keyOf(ing);
    const say = (list: string[]) => (text: string) => list.push(`Ingress ${key}: ${text}`);
    const warn = say(warnings);
    const fail = say(errors);
    const annotations = ing.metadata?.annotations ?? {};
    for (const name of Object.keys(annotations).sort())
      if (ANNOTATION_PREFIXES.some((p) => name.startsWith(p)) && !CARRIED.has(name))
        warn(`${name}: not carried over (a Gateway API object has no place for it)`);
    const { ingress, problems } = normalizeIngress(ing);
    const { values, problems: annotationProblems } = readAnnotations(annotations, ingress.ref);
    const bad = [...problems, ...annotationProblems].filter((p) => p.severity === 'error');
    for (const p of bad) fail(problemMessage(p));
    if (bad.length > 0) continue;
    const ns = ingress.ref.namespace;
    const port = (b: NormalBackend): number | null => {
      if (typeof b.port === 'number') return b.port;
      const svc = services.find(
        (s) => s.metadata?.name === b.service && (s.metadata?.namespace ?? 'default') === ns,
      );
      const found = svc?.spec?.ports?.find((p) => p.name === b.port)?.port;
      if (found === undefined)
        fail(`Service ${ns}/${b.service} port "${b.port}": give the Service (-f) so its number is known`);
      return found ?? null;
    };
    const tlsHosts = new Map(ingress.tls.flatMap((t) => t.hosts.map((h) => [h, t.secretName] as const)));
    const redirect =
      values.ingressNginxSslRedirect !== undefined
        ? values.ingressNginxSslRedirect
        : (values.sslRedirect ?? true);
    const rules =
      ingress.rules.length > 0 || !ingress.defaultBackend
        ? ingress.rules
        : [{ host: '', paths: [], field: 'spec' }];
    const myRoutes: string[] = [];
    rules.forEach((rule, i) => {
      const routeRules: HTTPRouteRule[] = [];
      for (const p of rule.paths) {
        const backendPort = port(p.backend);
        if (backendPort === null) continue;
        const migrated = migratePath(values, p, warn);
        routeRules.push({
          matches: [migrated.match],
          ...(migrated.filters.length === 0 ? {} : { filters: migrated.filters }),
          backendRefs: [{ name: p.backend.service, port: backendPort }],
        });
      }
      if (ingress.defaultBackend && !rule.paths.some((p) => p.path === '/')) {
        const backendPort = port(ingress.defaultBackend);
        if (backendPort !== null)
          routeRules.push({
            matches: [{ path: { type: 'PathPrefix', value: '/' } }],
            backendRefs: [{ name: ingress.defaultBackend.service, port: backendPort }],
          });
      }
      if (routeRules.length === 0) return;
      const secret = tlsHosts.get(rule.host);
      const parents: { scheme: 'http' | 'https'; listener: Listener }[] = [];
      if (secret === undefined || !redirect)
        parents.push({
          scheme: 'http',
          listener: { protocol: 'HTTP', port: 80, ...(rule.host ? { hostname: rule.host } : {}) },
        });
      if (secret !== undefined) {
        if (secret === null || rule.host === '')
          warn(`spec.tls: host "${rule.host}" has no secretName; served over HTTP only`);
        else {
          if (ns !== gwNs)
            warn(
              `spec.tls: Secret ${ns}/${secret} is in another namespace than the Gateway (${gwNs}); a ReferenceGrant is needed, which limitswitch does not read: put the Gateway in ${ns} (--gateway-namespace)`,
            );
          parents.push({
            scheme: 'https',
            listener: {
              protocol: 'HTTPS',
              port: 443,
              hostname: rule.host,
              tls: {
                mode: 'Terminate',
                certificateRefs: [
                  { kind: 'Secret', name: secret, ...(ns !== gwNs ? { namespace: ns } : {}) },
                ],
              },
            },
          });
          // ssl-redirect (on by default): plain HTTP is redirected, NIC with 301, ingress-nginx with 308
          if (redirect) {
            const http = sectionName('http', rule.host);
            listeners.set(http, {
              name: http,
              protocol: 'HTTP',
              port: 80,
              hostname: rule.host,
              allowedRoutes: { namespaces: { from: 'All' } },
            });
            routes.push({
              apiVersion: `${GATEWAY_GROUP}/v1`,
              kind: 'HTTPRoute',
              metadata: {
                name: `${rules.length === 1 ? ingress.ref.name : `${ingress.ref.name}-${i}`}-ssl-redirect`,
                namespace: ns,
              },
              spec: {
                parentRefs: [{ name: gwName, namespace: gwNs, sectionName: http }],
                hostnames: [rule.host],
                rules: [
                  {
                    filters: [
                      {
                        type: 'RequestRedirect',
                        requestRedirect: {
                          scheme: 'https',
                          statusCode: values.ingressNginxSslRedirect !== undefined ? 308 : 301,
                        },
                      },
                    ],
                  },
                ],
              },
            });
          }
        }
      }
      for (const { scheme, listener } of parents) {
        const name = sectionName(scheme, rule.host);
        listeners.set(name, { name, ...listener, allowedRoutes: { namespaces: { from: 'All' } } });
      }
      const routeName = rules.length === 1 ? ingress.ref.name : `${ingress.ref.name}-${i}`;
      myRoutes.push(routeName);
      routes.push({
        apiVersion: `${GATEWAY_GROUP}/v1`,
        kind: 'HTTPRoute',
        metadata: { name: routeName, namespace: ns },
        spec: {
          parentRefs: parents.map(({ scheme }) => ({
            name: gwName,
            namespace: gwNs,
            sectionName: sectionName(scheme, rule.host),
          })),
          ...(rule.host ? { hostnames: [rule.host] } : {}),
          rules: routeRules,
        },
      });
    });
    const limits = migrateLimits(values, settings);
    for (const w of limits.warnings) warn(w);
    for (const e of limits.errors) fail(e);
    if (limits.rateLimit && myRoutes.length > 0) {
      if (myRoutes.length > 16) fail('more than 16 routes for one RateLimitPolicy');
      const annotationsOut: Record<string, string> = {};
      if (limits.sync) annotationsOut[ZONE_SYNC_ANNOTATION] = 'true';
      policies.push({
        apiVersion: `${NGF_GROUP}/${NGF_VERSION}`,
        kind: 'RateLimitPolicy',
        metadata: {
          name: `${ingress.ref.name}-rate-limit`,
          namespace: ns,
          ...(limits.sync ? { annotations: annotationsOut } : {}),
        },
        spec: {
          targetRefs: myRoutes.map((name) => ({ group: GATEWAY_GROUP, kind: 'HTTPRoute', name })),
          rateLimit: limits.rateLimit,
        },
      });
    } else if (limits.rateLimit) warn('its limits have no route to apply to (no paths)');
  }
  const objects: KubeObject[] = [];
  if (!options.gatewayClass) {
    const gc: GatewayClass = {
      apiVersion: `${GATEWAY_GROUP}/v1`,
      kind: 'GatewayClass',
      metadata: { name: className },
      spec: { controllerName: CONTROLLER_NAME },
    };
    objects.push(gc);
  }
  const gw: Gateway = {
    apiVersion: `${GATEWAY_GROUP}/v1`,
    kind: 'Gateway',
    metadata: { name: gwName, namespace: gwNs },
    spec: { gatewayClassName: className, listeners: [...listeners.values()] },
  };
  if (listeners.size > 0) objects.push(gw);
  objects.push(...routes, ...policies);
  return { objects, warnings, errors };
}
