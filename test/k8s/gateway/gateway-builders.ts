/** Builders for Gateway API objects and NGF RateLimitPolicies in tests. */
import type {
  Gateway,
  GatewayClass,
  HTTPRoute,
  HTTPRouteRule,
  Listener,
  RateLimitPolicy,
} from '../../../src/k8s/gateway/gateway-objects.ts';

const created = (s: number) => new Date(Date.UTC(2024, 0, 1) + s * 1000).toISOString();

export function gatewayClass(
  name = 'limitswitch',
  controllerName = 'limitswitch.io/gateway-controller',
): GatewayClass {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'GatewayClass',
    metadata: { name, uid: `uid-gc-${name}`, creationTimestamp: created(0) },
    spec: { controllerName },
  };
}

export function gateway(
  name: string,
  listeners: Listener[] = [{ name: 'http', protocol: 'HTTP', port: 80, hostname: 'cafe.example.com' }],
  opts: { className?: string; created?: number; ns?: string } = {},
): Gateway {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'Gateway',
    metadata: {
      name,
      namespace: opts.ns ?? 'default',
      uid: `uid-gw-${name}`,
      generation: 1,
      creationTimestamp: created(opts.created ?? 1),
    },
    spec: { gatewayClassName: opts.className ?? 'limitswitch', listeners },
  };
}

/** A rule: `path` (PathPrefix unless `type`) to `svc:80`, with optional extra match fields. */
export function rule(
  path: string,
  svc: string,
  extra: {
    type?: string;
    method?: string;
    headers?: { name: string; value: string; type?: string }[];
    port?: number;
  } = {},
): HTTPRouteRule {
  return {
    matches: [
      {
        path: { type: extra.type ?? 'PathPrefix', value: path },
        ...(extra.method ? { method: extra.method } : {}),
        ...(extra.headers ? { headers: extra.headers } : {}),
      },
    ],
    backendRefs: [{ name: svc, port: extra.port ?? 80 }],
  };
}

export function httpRoute(
  name: string,
  rules: HTTPRouteRule[],
  opts: { gateway?: string; hostnames?: string[]; created?: number; ns?: string; sectionName?: string } = {},
): HTTPRoute {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      name,
      namespace: opts.ns ?? 'default',
      uid: `uid-route-${name}`,
      generation: 1,
      creationTimestamp: created(opts.created ?? 2),
    },
    spec: {
      parentRefs: [
        { name: opts.gateway ?? 'cafe', ...(opts.sectionName ? { sectionName: opts.sectionName } : {}) },
      ],
      hostnames: opts.hostnames ?? ['cafe.example.com'],
      rules,
    },
  };
}

export function rateLimitPolicy(
  name: string,
  target: { kind?: string; name: string } | { kind?: string; name: string }[],
  rateLimit: NonNullable<RateLimitPolicy['spec']>['rateLimit'],
  opts: { created?: number; annotations?: Record<string, string>; ns?: string } = {},
): RateLimitPolicy {
  const targets = Array.isArray(target) ? target : [target];
  return {
    apiVersion: 'gateway.nginx.org/v1alpha1',
    kind: 'RateLimitPolicy',
    metadata: {
      name,
      namespace: opts.ns ?? 'default',
      uid: `uid-rlp-${name}`,
      generation: 1,
      creationTimestamp: created(opts.created ?? 3),
      annotations: opts.annotations ?? {},
    },
    spec: {
      targetRefs: targets.map((t) => ({
        group: 'gateway.networking.k8s.io',
        kind: t.kind ?? 'HTTPRoute',
        name: t.name,
      })),
      rateLimit,
    },
  };
}
