/**
 * The data path's `decide` hook, answered by the engine: route the request, run nginx's phases, and
 * turn the engine's decision into what the proxy does (forward, hold, reject, answer). The site is
 * read through a getter, so a reload swaps it between two requests.
 */
import type { Route, Site, Verdict } from '../engine/http/site.ts';
import type { RequestFacts } from '../engine/variables/request-context.ts';
import { type ErrorLog, requestLogContext } from './error-log.ts';
import type { Decision, DownstreamRequest } from './http/decision.ts';
import { type ProxyTargets, rewriteTarget } from './proxy-targets.ts';

/**
 * A data-path decision that remembers the engine's verdict (for 499 accounting and access logs); a
 * forwarded or delayed one also names the server, for the error-log lines about it (a client leaving
 * while held, an upstream failing).
 */
export type RoutedDecision = Decision & {
  readonly limitReqStatus?: string;
  readonly zone?: string | null;
  readonly serverName?: string;
};

export interface EngineHookOptions {
  readonly site: () => Site;
  readonly targets: () => ProxyTargets;
  readonly errorLog: ErrorLog;
  /** The `listen` port this listener serves (it may be bound elsewhere, see `portMap`). */
  readonly port: number;
  /** Counts each routed request by server name and location name (for the request-rate metric). */
  readonly countRequest?: (server: string, location: string) => void;
  /** The engine's clock (epoch ms; nginx's cached `ngx_current_msec`). */
  readonly nowMs: () => number;
}

const BAD_REQUEST: RoutedDecision = Object.freeze({ action: 'return', code: 400 });
const NOT_FOUND: RoutedDecision = Object.freeze({ action: 'return', code: 404 });
const FORBIDDEN: RoutedDecision = Object.freeze({ action: 'return', code: 403 });
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The server and location nginx would pick for the request (null: a bad request target). */
function routeOf(site: Site, ctx: DownstreamRequest, port: number): Route | null {
  return site.route(ctx.req.url ?? '/', ctx.host, ctx.req.socket.localAddress ?? '', port);
}

export function engineHook(options: EngineHookOptions): (ctx: DownstreamRequest) => RoutedDecision {
  const now = options.nowMs;
  return (ctx) => {
    const site = options.site();
    const route = routeOf(site, ctx, options.port);
    if (route === null) return BAD_REQUEST;
    options.countRequest?.(route.serverName, route.handler.name);
    const facts = new ExchangeFacts(ctx, options.port);
    const verdict = site.decide(route, facts, now());
    if (verdict.logs.length !== 0) writeLogs(options.errorLog, verdict, route, ctx);
    return toDataPath(verdict, route, options.targets());
  };
}

/**
 * What the engine needs of a request, read from the exchange. `headers` is built only when a variable
 * reads one: node:http builds `req.headers` lazily from the raw headers, and most configs never ask.
 */
class ExchangeFacts implements RequestFacts {
  readonly method: string;
  readonly scheme = 'http' as const;
  readonly target: string;
  readonly remoteAddr: string;
  readonly remotePort: number;
  readonly socketAddr: string;
  readonly serverAddr: string;
  readonly serverPort: number;
  readonly #ctx: DownstreamRequest;

  constructor(ctx: DownstreamRequest, serverPort: number) {
    const req = ctx.req;
    this.#ctx = ctx;
    this.method = req.method ?? 'GET';
    this.target = req.url ?? '/';
    this.remoteAddr = ctx.remoteAddr;
    this.remotePort = ctx.remotePort;
    this.socketAddr = ctx.realipRemoteAddr;
    this.serverAddr = req.socket.localAddress ?? '';
    this.serverPort = serverPort;
  }

  get headers(): Readonly<Record<string, string | undefined>> {
    return this.#ctx.req.headers as Record<string, string | undefined>;
  }
}

/**
 * The data path's `canUpgrade` hook: an upgrade request is tunnelled when its location proxies and is
 * configured for it (`proxy_http_version 1.1`, `proxy_set_header Upgrade`/`Connection`). Routing only:
 * limits are left to the one `decide` call that follows.
 */
export function upgradeHook(
  options: Pick<EngineHookOptions, 'site' | 'port'>,
): (ctx: DownstreamRequest) => boolean {
  return (ctx) => {
    const route = routeOf(options.site(), ctx, options.port);
    return route !== null && route.handler.proxyPass !== null && route.handler.proxyUpgrade;
  };
}

function toDataPath(verdict: Verdict, route: Route, targets: ProxyTargets): RoutedDecision {
  switch (verdict.kind) {
    case 'reject':
    case 'close': {
      const retryAfterS =
        route.handler.retryAfter && verdict.kind === 'reject'
          ? Math.max(1, Math.ceil(verdict.retryAfterMs / 1000))
          : undefined;
      return {
        action: 'reject',
        code: verdict.code,
        retryAfterS,
        limitReqStatus: verdict.status,
        zone: verdict.zone,
      };
    }
    case 'return':
      if (verdict.code === 444) return { action: 'reject', code: 444 };
      if (REDIRECTS.has(verdict.code) && verdict.text !== null) {
        return { action: 'return', code: verdict.code, headers: { location: verdict.text } };
      }
      return verdict.text === null
        ? { action: 'return', code: verdict.code }
        : { action: 'return', code: verdict.code, body: verdict.text };
    case 'deny':
      return FORBIDDEN;
    case 'api':
    case 'static':
      // The replica serves no files; the NGINX Plus API lives on the control plane and --status-listen.
      return NOT_FOUND;
    case 'proxy': {
      const target = targets.byHandler.get(route.handler);
      if (target === undefined) return NOT_FOUND;
      const path = rewriteTarget(target, route.target.uri, route.target.args, route.target.hasArgs);
      const timeouts = route.handler.proxyTimeouts;
      if (verdict.delayMs > 0) {
        return {
          action: 'delay',
          delayMs: verdict.delayMs,
          upstream: target.upstream,
          path,
          readTimeoutMs: timeouts.readMs,
          connectTimeoutMs: timeouts.connectMs,
          sendTimeoutMs: timeouts.sendMs,
          limitReqStatus: verdict.status,
          zone: verdict.zone,
          serverName: route.serverName,
        };
      }
      return {
        action: 'proxy',
        upstream: target.upstream,
        path,
        readTimeoutMs: timeouts.readMs,
        connectTimeoutMs: timeouts.connectMs,
        sendTimeoutMs: timeouts.sendMs,
        limitReqStatus: verdict.status,
        zone: verdict.zone,
        serverName: route.serverName,
      };
    }
  }
}

function writeLogs(log: ErrorLog, verdict: Verdict, route: Route, ctx: DownstreamRequest): void {
  const context = requestLogContext(ctx, route.serverName);
  for (const entry of verdict.logs) log.request(entry, context);
}
