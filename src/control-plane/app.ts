/**
 * The control plane as a fastify plugin: NGINX Plus API (every version 1–9) for keyvals and
 * limit_reqs over the shared store, cluster views, audit, metrics and docs. It never listens (the
 * server shell does; tests use `inject`) and keeps no state of its own, so any number of copies can
 * serve the same store.
 *
 * Request order, as NGINX's API location: access (CIDR, token) → version → method (read-only) →
 * writes from the API's own clients (Host, Origin, Content-Type) → body (size, JSON, schema) → zone →
 * store.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { AlertRules } from '../automation/alert-rules.ts';
import { ControlPlaneMetrics } from '../metrics/control-plane-metrics.ts';
import { type Clock, systemClock } from '../shared/clock.ts';
import { LimitswitchError } from '../shared/errors.ts';
import type { KeyvalZoneInfo } from '../store/cluster-registry.ts';
import { AccessControl, type AuthOptions } from './access-control.ts';
import { BrowserChecks, writeRequestHead } from './browser-checks.ts';
import type { ControlPlaneContext, StoreLink } from './context.ts';
import { ExpirySweeper } from './expiry-sweeper.ts';
import { alertmanagerHookRoutes } from './hooks/alertmanager-hook.ts';
import { newRequestId, nginxErrorBody, toApiError } from './nginx-error.ts';
import { automationHoldRoutes } from './routes/automation-holds.ts';
import { clusterRoutes } from './routes/cluster.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { keyvalRoutes } from './routes/keyvals.ts';
import { limiterCounterRoutes } from './routes/limiter-counters.ts';
import { operationsRoutes } from './routes/operations.ts';
import { API_VERSIONS, plusRootRoutes } from './routes/plus-root.ts';
import { priorityLevelRoutes } from './routes/priority-levels.ts';
import { switchRoutes } from './routes/switches.ts';
import { upstreamRoutes } from './routes/upstreams.ts';
import { zoneSyncRoutes } from './routes/zone-sync.ts';
import { loadApiSpec } from './spec.ts';
import { type ControlPlaneStore, STORE_GATEWAY_TIMEOUT_MS, StoreGateway } from './store-gateway.ts';
import { ZoneDirectory } from './zone-directory.ts';

export interface ControlPlaneOptions {
  readonly store: ControlPlaneStore;
  /** Wall clock of expiry, audit entries and heartbeat ages. Default the system's. */
  readonly clock?: Clock;
  /** keyval zones of `-c FILE`; registered in the store at start-up, and served even if never registered. */
  readonly keyvalZones?: readonly KeyvalZoneInfo[];
  /** limit_req zones of `-c FILE`, listed (with zeros) before any replica reports them. */
  readonly limitReqZones?: readonly string[];
  /** limit_conn zones of `-c FILE`, likewise. */
  readonly limitConnZones?: readonly string[];
  readonly auth?: AuthOptions;
  /**
   * Names a write's `Host` may be besides IP literals and `localhost` (`--server-name`, the `api`
   * server's `server_name`), in nginx's `server_name` syntax.
   */
  readonly serverNames?: readonly string[];
  /** Default: a fresh registry per app. */
  readonly metrics?: ControlPlaneMetrics;
  /** Reported by `/api/N/nginx`. Default: package.json's version. */
  readonly version?: string;
  /** Bound on every store call; past it the request answers 503. Default 2500 (store-gateway.ts). */
  readonly storeTimeoutMs?: number;
  /** Request bodies larger than this answer 413. Default 64 KiB. */
  readonly bodyLimitBytes?: number;
  /** How often expired keys are removed from the store; 0 disables. Default 1000. */
  readonly expirySweepMs?: number;
  /** `wait=applied` polling interval. Default 20. */
  readonly waitPollMs?: number;
  /** `--alert-rules FILE`: enables `POST /hooks/alertmanager` (404 without). */
  readonly alertRules?: AlertRules;
  /**
   * A replica's status port: how its link to the shared store is, for `/readyz` (which stays 200
   * while the replica enforces a loaded state, fail-static, and says `connected: false`).
   */
  readonly storeLink?: () => StoreLink;
}

/** Reads stay open under `readAuth` for these (probes, scrapes, docs). */
const PUBLIC_OPERATIONS = new Set([
  'getHealthz',
  'getReadyz',
  'getMetrics',
  'getDocs',
  'getDocsJson',
  'getDocsYaml',
  // The page's files hold no data; what it shows, it reads through the API's own rules.
  'getDashboard',
  'getDashboardAsset',
  // Authenticates itself (bearer or HTTP Basic, as Alertmanager sends).
  'postAlertmanagerHook',
]);

export async function controlPlane(app: FastifyInstance, options: ControlPlaneOptions): Promise<void> {
  const spec = loadApiSpec();
  const metrics = options.metrics ?? new ControlPlaneMetrics();
  const clock = options.clock ?? systemClock;
  const gateway = new StoreGateway(
    options.store,
    options.storeTimeoutMs ?? STORE_GATEWAY_TIMEOUT_MS,
    metrics,
    app.log,
  );
  const access = new AccessControl(options.auth);
  const browser = new BrowserChecks(options.serverNames);
  const ctx: ControlPlaneContext = {
    spec,
    gateway,
    zones: new ZoneDirectory(gateway, options.keyvalZones ?? [], {
      limitReq: options.limitReqZones ?? [],
      limitConn: options.limitConnZones ?? [],
    }),
    access,
    browser,
    metrics,
    clock,
    build: { version: options.version ?? packageVersion(), loadedAtMs: clock.nowMs() },
    waitPollMs: options.waitPollMs ?? 20,
    storeLink: options.storeLink ?? null,
  };
  for (const warning of access.warnings()) app.log.warn(warning);
  metrics.countLiveReplicasWith(async () => {
    const replicas = await gateway.call('replicas', (s) => s.registry.replicas());
    return replicas.filter((r) => r.live).length;
  });

  installValidation(app);
  installBodyParser(app, options.bodyLimitBytes ?? 64 * 1024);

  app.decorateRequest('limitswitchRequestId', '');
  app.decorateRequest('limitswitchApiVersion', null);
  app.decorateRequest('limitswitchPrincipal', null);

  app.addHook('onRequest', async (request) => {
    request.limitswitchRequestId = newRequestId();
    request.limitswitchApiVersion = versionInUrl(request.url);
    const operation = request.routeOptions.config.limitswitchOperation;
    if (!operation) return;
    if (!PUBLIC_OPERATIONS.has(operation.operationId)) access.authorizeClient(request.ip);
    if (operation.write) {
      request.limitswitchPrincipal = access.authorizeWrite(request.ip, request.headers.authorization);
      browser.checkWrite(writeRequestHead(request));
    } else if (!PUBLIC_OPERATIONS.has(operation.operationId)) {
      request.limitswitchPrincipal = access.authorizeRead(request.ip, request.headers.authorization);
    }
    if (!operation.versioned) return;
    if (request.limitswitchApiVersion === null) throw new LimitswitchError('UnknownVersion');
    if (request.limitswitchApiVersion < operation.minVersion) throw new LimitswitchError('PathNotFound');
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.config.limitswitchOperation?.operationId ?? 'unmatched';
    metrics.observeRequest(route, request.method, reply.statusCode);
    // The one log line of a request (fastify's own two are off).
    request.log.info(
      {
        method: request.method,
        url: request.url,
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        client: request.ip,
      },
      `${request.method} ${request.url} ${reply.statusCode}`,
    );
  });

  app.setErrorHandler(async (err, request, reply) => {
    const error = toApiError(err);
    // an unavailable store is said once per outage by the gateway (store-trouble.ts), not per call
    if (error.status >= 500 && error.code !== 'StoreUnavailable') request.log.error({ err }, error.text);
    if (error.status === 401) reply.header('www-authenticate', 'Bearer realm="limitswitch"');
    const requestId = request.limitswitchRequestId || newRequestId();
    return reply
      .code(error.status)
      .type('application/json')
      .send(nginxErrorBody(error, requestId, request.limitswitchApiVersion));
  });

  const templates = spec.operations.flatMap((op) => op.routePaths.map(pathPattern));
  app.setNotFoundHandler(async (request) => {
    const path = request.url.split('?')[0] ?? '';
    if (/^\/api\/[^/]*\//.test(path) && request.limitswitchApiVersion === null) {
      throw new LimitswitchError('UnknownVersion');
    }
    if (templates.some((t) => t.test(path))) throw new LimitswitchError('MethodNotSupported');
    throw new LimitswitchError('PathNotFound');
  });

  plusRootRoutes(app, ctx);
  keyvalRoutes(app, ctx);
  limiterCounterRoutes(app, ctx);
  zoneSyncRoutes(app, ctx);
  upstreamRoutes(app, ctx);
  priorityLevelRoutes(app, ctx);
  clusterRoutes(app, ctx);
  switchRoutes(app, ctx);
  automationHoldRoutes(app, ctx, options.alertRules);
  operationsRoutes(app, ctx);
  dashboardRoutes(app, ctx);
  alertmanagerHookRoutes(app, ctx, options.alertRules);

  const sweepMs = options.expirySweepMs ?? 1000;
  if (sweepMs > 0) {
    const sweeper = new ExpirySweeper(gateway, clock, sweepMs, app.log);
    app.addHook('onClose', async () => sweeper.stop());
  }

  app.addHook('onReady', async () => {
    const zones = ctx.zones.configuredKeyvalZones;
    if (zones.length === 0) return;
    try {
      await gateway.call('registerZones', (s) => s.registry.registerZones(zones));
    } catch {
      // Served from the config anyway; replicas register the zones they run themselves. The gateway
      // has said why the store did not answer.
      app.log.info(
        'configured keyval zones not registered: the store did not answer (replicas register theirs)',
      );
    }
  });
}

/**
 * Server options the plugin needs from whoever creates the fastify instance (the server shell, tests):
 * errors fastify raises before any plugin runs (a URL with a bad `%` escape) in NGINX's shape too.
 */
export function controlPlaneServerOptions(): Pick<FastifyServerOptions, 'frameworkErrors'> {
  return {
    frameworkErrors(err, request, rawReply) {
      const error = toApiError(err);
      // The option's reply is typed for any route schema; this one sends a plain JSON body.
      const reply = rawReply as unknown as FastifyReply;
      void reply
        .code(error.status)
        .type('application/json')
        .send(nginxErrorBody(error, newRequestId(), versionInUrl(request.url)));
    },
  };
}

/** Bodies: ajv without coercion (a number stays a number); query/params: coerced, with defaults. */
function installValidation(app: FastifyInstance): void {
  const body = new Ajv({ strict: true, allErrors: false, coerceTypes: false, useDefaults: false });
  const query = new Ajv({ strict: true, allErrors: false, coerceTypes: 'array', useDefaults: true });
  addFormats.default(body);
  addFormats.default(query);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : query).compile(schema));
}

/**
 * Bodies are read as JSON; not JSON → 415. A write's `Content-Type` was checked before (browser-checks.ts),
 * so what reaches here as a write body was sent as JSON.
 */
function installBodyParser(app: FastifyInstance, bodyLimit: number): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit }, (_request: FastifyRequest, text, done) => {
    // No body at all (a DELETE sent with a Content-Type) is not a JSON error.
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text as string));
    } catch {
      done(new LimitswitchError('JsonError'), undefined);
    }
  });
}

/** The API version of `/api/N/...`, or `null` when the path has none or an unsupported one. */
function versionInUrl(url: string): number | null {
  const match = /^\/api\/([0-9]+)(?:[/?]|$)/.exec(url);
  if (!match) return null;
  const version = Number(match[1]);
  return (API_VERSIONS as readonly number[]).includes(version) && match[1] === String(version)
    ? version
    : null;
}

function pathPattern(routePath: string): RegExp {
  const escaped = routePath
    .split(/(:[A-Za-z_]+)/)
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${escaped}$`);
}

function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version?: string;
  };
  return pkg.version ?? '0.0.0';
}
