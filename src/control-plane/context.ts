/**
 * What every route module is handed: the spec, the store (through its gateway), the zones, access
 * control, metrics and the clock. Also the request decorations the app's hooks fill in.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { ControlPlaneMetrics } from '../metrics/control-plane-metrics.ts';
import type { Clock } from '../shared/clock.ts';
import type { AccessControl, Principal } from './access-control.ts';
import type { BrowserChecks } from './browser-checks.ts';
import type { ApiSpec, SpecOperation } from './spec.ts';
import type { StoreGateway } from './store-gateway.ts';
import type { ZoneDirectory } from './zone-directory.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** `$request_id` of this API request (32 hex). */
    limitswitchRequestId: string;
    /** The `{version}` of a versioned API path, once validated; `null` elsewhere. */
    limitswitchApiVersion: number | null;
    /** Who wrote (token id), for the audit trail. */
    limitswitchPrincipal: Principal | null;
  }
  interface FastifyContextConfig {
    /** The spec operation a control-plane route serves. */
    limitswitchOperation?: SpecOperation;
  }
}

/** Identity of this control plane, for `/api/N/nginx`. */
export interface BuildInfo {
  readonly version: string;
  /** When this process loaded its configuration. */
  readonly loadedAtMs: number;
}

/** What `/readyz` of a replica adds about the shared store. */
export interface StoreLink {
  readonly connected: boolean;
  /** Where the enforced state came from: the store, or the state file while the store is away. */
  readonly source: 'none' | 'state-file' | 'store';
  readonly lastError: string | null;
}

export interface ControlPlaneContext {
  readonly spec: ApiSpec;
  readonly gateway: StoreGateway;
  readonly zones: ZoneDirectory;
  readonly access: AccessControl;
  /** Writes only from the API's own clients: Host, Origin, Content-Type. */
  readonly browser: BrowserChecks;
  readonly metrics: ControlPlaneMetrics;
  readonly clock: Clock;
  readonly build: BuildInfo;
  /** How often `wait=applied` re-reads the replicas. */
  readonly waitPollMs: number;
  /** A replica's link to the shared store (its status port); null on a control plane. */
  readonly storeLink: (() => StoreLink) | null;
}

export type SpecHandler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * Register the handler for spec operation `operationId` on every path the spec serves it at, with the
 * spec's schemas. A route that is not in the spec cannot be registered this way.
 */
export function addSpecRoute(
  app: FastifyInstance,
  ctx: ControlPlaneContext,
  operationId: string,
  handler: SpecHandler,
): void {
  const operation = ctx.spec.operation(operationId);
  for (const url of operation.routePaths) {
    app.route({
      method: operation.method,
      url,
      schema: operation.schema,
      config: { limitswitchOperation: operation },
      handler: handler as RouteHandlerMethod,
    });
  }
}
