/**
 * The Gateway API objects (gateway.networking.k8s.io/v1, standard channel) and NGINX Gateway Fabric's
 * `RateLimitPolicy` (gateway.nginx.org/v1alpha1), as plain data: only the fields the translator reads,
 * everything optional because objects from users are untrusted until validated.
 */
import type { KubeObject } from '../objects.ts';

export const GATEWAY_GROUP = 'gateway.networking.k8s.io';
export const GATEWAY_VERSION = 'v1';
export const NGF_GROUP = 'gateway.nginx.org';
export const NGF_VERSION = 'v1alpha1';
/** The `spec.controllerName` of the GatewayClasses limitswitch serves. */
export const CONTROLLER_NAME = 'limitswitch.io/gateway-controller';

export interface Condition {
  readonly type: string;
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
  readonly lastTransitionTime?: string;
}

export interface GatewayClass extends KubeObject {
  readonly spec?: { readonly controllerName?: string };
  readonly status?: { readonly conditions?: readonly Condition[] };
}

export interface SecretObjectReference {
  readonly group?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
}

export interface Listener {
  readonly name?: string;
  readonly hostname?: string;
  readonly port?: number;
  readonly protocol?: string;
  readonly tls?: {
    readonly mode?: string;
    readonly certificateRefs?: readonly SecretObjectReference[];
  };
  readonly allowedRoutes?: {
    readonly namespaces?: { readonly from?: string };
    readonly kinds?: readonly { readonly group?: string; readonly kind?: string }[];
  };
}

export interface ListenerStatus {
  readonly name: string;
  readonly supportedKinds: readonly { readonly group: string; readonly kind: string }[];
  readonly attachedRoutes: number;
  readonly conditions: readonly Condition[];
}

export interface Gateway extends KubeObject {
  readonly spec?: {
    readonly gatewayClassName?: string;
    readonly listeners?: readonly Listener[];
  };
  readonly status?: {
    readonly conditions?: readonly Condition[];
    readonly listeners?: readonly ListenerStatus[];
  };
}

export interface ParentReference {
  readonly group?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly sectionName?: string;
  readonly port?: number;
}

export interface HTTPHeaderMatch {
  readonly type?: string;
  readonly name?: string;
  readonly value?: string;
}

export interface HTTPRouteMatch {
  readonly path?: { readonly type?: string; readonly value?: string };
  readonly headers?: readonly HTTPHeaderMatch[];
  readonly queryParams?: readonly HTTPHeaderMatch[];
  readonly method?: string;
}

export interface HTTPBackendRef {
  readonly group?: string;
  readonly kind?: string;
  readonly name?: string;
  readonly namespace?: string;
  readonly port?: number;
  readonly weight?: number;
  readonly filters?: readonly HTTPRouteFilter[];
}

export interface HTTPRouteFilter {
  readonly type?: string;
  readonly [field: string]: unknown;
}

export interface HTTPRouteRule {
  readonly name?: string;
  readonly matches?: readonly HTTPRouteMatch[];
  readonly filters?: readonly HTTPRouteFilter[];
  readonly backendRefs?: readonly HTTPBackendRef[];
}

export interface RouteParentStatus {
  readonly parentRef: ParentReference;
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

export interface HTTPRoute extends KubeObject {
  readonly spec?: {
    readonly parentRefs?: readonly ParentReference[];
    readonly hostnames?: readonly string[];
    readonly rules?: readonly HTTPRouteRule[];
  };
  readonly status?: { readonly parents?: readonly RouteParentStatus[] };
}

export interface RateLimitRule {
  readonly rate?: string;
  readonly key?: string;
  readonly zoneSize?: string;
  readonly burst?: number;
  readonly delay?: number;
  readonly noDelay?: boolean;
}

export interface PolicyTargetReference {
  readonly group?: string;
  readonly kind?: string;
  readonly name?: string;
}

export interface PolicyAncestorStatus {
  readonly ancestorRef: ParentReference;
  readonly controllerName: string;
  readonly conditions: readonly Condition[];
}

export interface RateLimitPolicy extends KubeObject {
  readonly spec?: {
    readonly targetRefs?: readonly PolicyTargetReference[];
    readonly rateLimit?: {
      readonly dryRun?: boolean;
      readonly logLevel?: string;
      readonly rejectCode?: number;
      readonly local?: { readonly rules?: readonly RateLimitRule[] };
    };
  };
  readonly status?: { readonly ancestors?: readonly PolicyAncestorStatus[] };
}

/** What a replica in Gateway API mode reads. */
export interface GatewayObjects {
  readonly gatewayClasses: readonly GatewayClass[];
  readonly gateways: readonly Gateway[];
  readonly httpRoutes: readonly HTTPRoute[];
  readonly rateLimitPolicies: readonly RateLimitPolicy[];
}

export const NO_GATEWAY_OBJECTS: GatewayObjects = {
  gatewayClasses: [],
  gateways: [],
  httpRoutes: [],
  rateLimitPolicies: [],
};
