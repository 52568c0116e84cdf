/**
 * The NGINX Plus API's structure: `GET /api/` (versions), `/api/{v}/`, `/api/{v}/http/`,
 * `/api/{v}/stream/` (endpoint lists taken from the spec), `/api/{v}/nginx`, and the endpoints
 * nginx-prometheus-exporter asks for on every scrape, answered empty and well-formed (this control
 * plane proxies nothing itself; its limit_reqs and upstreams are the cluster's).
 */
import type { FastifyInstance } from 'fastify';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';

/** Every API version answers (clients pin different ones). */
export const API_VERSIONS = [1, 2, 3, 4, 5, 6, 7, 8, 9] as const;

/** operationId → fixed body. */
const EMPTY_ENDPOINTS: Readonly<Record<string, unknown>> = {
  getProcesses: { respawned: 0 },
  getConnections: { accepted: 0, dropped: 0, active: 0, idle: 0 },
  getSlabs: {},
  getResolvers: {},
  getSsl: { handshakes: 0, handshakes_failed: 0, session_reuses: 0 },
  getWorkers: [],
  getHttpRequests: { total: 0, current: 0 },
  getHttpServerZones: {},
  getHttpLocationZones: {},
  getHttpCaches: {},
  getStreamServerZones: {},
  getStreamUpstreams: {},
  getStreamLimitConns: {},
};

export function plusRootRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  addSpecRoute(app, ctx, 'getApiVersions', async () => API_VERSIONS);

  const list = (prefix: string) => async (request: { limitswitchApiVersion: number | null }) =>
    ctx.spec.endpointNames(prefix, request.limitswitchApiVersion ?? 9);
  addSpecRoute(app, ctx, 'getApiRoot', list('/api/{version}'));
  addSpecRoute(app, ctx, 'getHttpRoot', list('/api/{version}/http'));
  addSpecRoute(app, ctx, 'getStreamRoot', list('/api/{version}/stream'));

  addSpecRoute(app, ctx, 'getNginx', async (request) => {
    const { fields } = request.query as { fields?: string };
    const info: Record<string, unknown> = {
      version: ctx.build.version,
      build: `limitswitch-${ctx.build.version}`,
      address: request.socket.localAddress ?? '127.0.0.1',
      generation: 1,
      load_timestamp: new Date(ctx.build.loadedAtMs).toISOString(),
      timestamp: new Date().toISOString(),
      pid: process.pid,
      ppid: process.ppid,
    };
    if (fields === undefined) return info;
    const only = new Set(fields.split(','));
    return Object.fromEntries(Object.entries(info).filter(([name]) => only.has(name)));
  });

  for (const [operationId, body] of Object.entries(EMPTY_ENDPOINTS)) {
    addSpecRoute(app, ctx, operationId, async () => body);
  }
}
