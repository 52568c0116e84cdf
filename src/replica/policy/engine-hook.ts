/**
 * The data path's `decide` hook, answered by the engine: refuse what nginx refuses of the request
 * head, route the request, run nginx's phases, and turn the engine's verdict into what the proxy
 * does (refuse, forward, hold, reject, answer). The site is read through a getter, so a reload swaps
 * it between two requests. Its `client` rules (client-input-rules.ts) read client input as nginx does.
 */

import type { UpstreamServerSpec } from '../../config/model.ts';
import type { Route } from '../../engine/http/route.ts';
import type { Site } from '../../engine/http/site.ts';
import type { ForwardVerdict, Verdict } from '../../engine/http/verdict.ts';
import type { LogLine } from '../../engine/log-line.ts';
import {
  type DecideHook,
  type Decision,
  type DownstreamRequest,
  type HeldUntilEnd,
  heldTogether,
  type ProxyDecision,
  type ProxyTarget,
} from '../http/contract/decision.ts';
import { contentTypeOf } from '../http/static/document-path.ts';
import { type ErrorLog, requestLogContext } from '../logs/error-log.ts';
import { noteForAccessLog } from '../logs/location-access-log.ts';
import { type Admissions, LOCAL_ADMISSIONS } from './admissions.ts';
import { answeredUnder } from './answered-under.ts';
import { clientRules, logRefusedHead } from './client-input-rules.ts';
import { ExchangeFacts } from './exchange-facts.ts';
import { type Deciding, errorPaged, finalizedStatus, internalRedirect } from './internal-redirect.ts';
import { dynamicTarget, type ProxyTargets, rewriteTarget, rewrittenTarget } from './proxy-targets.ts';
import { realIpStep } from './realip-phases.ts';
import { absoluteLocation, staticDecision } from './static-decision.ts';
import { tlsRefusal, underServerHeaders } from './tls-refusal.ts';
import { upstreamErrorPage } from './upstream-error-page.ts';
import { upstreamTls } from './upstream-tls-settings.ts';

/**
 * A data-path decision that remembers the engine's verdict (for 499 accounting and access logs); a
 * forwarded or delayed one also names the server, for the error-log lines about it (a client leaving
 * while held, an upstream failing).
 */
export type RoutedDecision = Decision & RoutedExtras;

interface RoutedExtras {
  readonly limitReqStatus?: string;
  readonly zone?: string | null;
  readonly serverName?: string;
}

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
  /** The listener's address is `ssl`: a plain HTTP request on it gets nginx's 497 page. */
  readonly ssl?: boolean;
  /** Who admits requests waiting for an API limiter or a priority level (default: this thread). */
  readonly admissions?: Admissions;
}

const BAD_REQUEST: RoutedDecision = Object.freeze({ action: 'return', code: 400 });
const REFUSALS = new Map<number, RoutedDecision>(
  [400, 405, 413, 414, 494, 505].map((code) => [code, Object.freeze({ action: 'refuse', code })]),
);

function refusal(code: number): RoutedDecision {
  return REFUSALS.get(code) ?? { action: 'refuse', code };
}

const NOT_FOUND: RoutedDecision = Object.freeze({ action: 'return', code: 404 });
const MISDIRECTED: RoutedDecision = Object.freeze({ action: 'return', code: 421 });
const FORBIDDEN: RoutedDecision = Object.freeze({ action: 'return', code: 403 });
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The server and location nginx would pick for the request (null: a bad request target). */
function routeOf(site: Site, ctx: DownstreamRequest, port: number): Route | null {
  return site.route(ctx.req.url ?? '/', ctx.host, ctx.connection.serverAddr, port);
}

/** nginx's 400 for a target it cannot read, logged at the address's default server. */
function badTarget(site: Site, ctx: DownstreamRequest, port: number): RoutedDecision {
  const route = site.badTargetRoute(ctx.connection.serverAddr, port);
  if (route !== null) noteForAccessLog(ctx, site, route, new ExchangeFacts(ctx, port));
  return BAD_REQUEST;
}

export function engineHook(options: EngineHookOptions): DecideHook<RoutedDecision> {
  const now = options.nowMs;
  const decide = (ctx: DownstreamRequest): RoutedDecision => {
    const site = options.site();
    // an HTTP/2 head was parsed by the h2 session: only its Host lines are read again
    const refused = site.readHead(ctx.req, ctx.connection.serverAddr, options.port);
    if (refused !== null) {
      logRefusedHead(options.errorLog, refused, ctx.clientSocket, ctx.realipRemoteAddr);
      return refusal(refused.fault.code);
    }
    const route = routeOf(site, ctx, options.port);
    if (route === null) return badTarget(site, ctx, options.port);
    if (options.ssl === true) {
      const refused = tlsRefusal(ctx, route);
      if (refused !== null) {
        if (options.errorLog.enabled('info')) {
          options.errorLog.request(
            { level: 'info', message: refused.message },
            requestLogContext(ctx, route.serverName),
          );
        }
        const decision = refused.code === 421 ? MISDIRECTED : refusal(refused.code);
        const facts = new ExchangeFacts(ctx, options.port);
        return underServerHeaders(decision, refused, site, route, facts, now());
      }
    }
    options.countRequest?.(route.serverName, route.handler.name);
    // realip at POST_READ, with the server's settings (its PREACCESS step is the engine's)
    realIpStep(ctx, route.server.handler.realIp);
    const facts = new ExchangeFacts(ctx, options.port);
    const verdict = site.decide(route, facts, now());
    noteForAccessLog(ctx, site, verdict.route ?? route, facts);
    return toDataPath(verdict, {
      site,
      route,
      targets: options.targets(),
      ctx,
      errorLog: options.errorLog,
      nowMs: now,
      admissions: options.admissions ?? LOCAL_ADMISSIONS,
      port: options.port,
    });
  };
  return Object.assign(decide, { client: clientRules<RoutedDecision>(options) });
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

function toDataPath(verdict: Verdict, decided: Deciding): RoutedDecision {
  // the rewrite phases may have changed the URI, the location, or put it under an `if`'s configuration
  // and once limit_req or limit_conn ran, an internal redirect does not run them again
  const limited = decided.limited !== true && (verdict.status !== '' || verdict.connStatus !== '');
  // an internal redirect (an index, an error page) keeps the request's variables
  const cache = verdict.ctx?.cache ?? decided.cache;
  const route = verdict.route ?? decided.route;
  const deciding: Deciding = { ...decided, route, limited: limited || decided.limited, cache };
  const decision = decisionOf(verdict, deciding);
  const status = finalizedStatus(verdict, decision);
  return status === 0 ? decision : (errorPaged(status, decision, deciding, toDataPath) as RoutedDecision);
}

/** The decision for a verdict, before any error page. */
function decisionOf(verdict: Verdict, deciding: Deciding): RoutedDecision {
  const { route, targets } = deciding;
  if (verdict.logs.length !== 0) writeLogs(deciding.errorLog, verdict, route, deciding.ctx);
  switch (verdict.kind) {
    case 'reject':
    case 'close': {
      return {
        action: 'reject',
        code: verdict.code,
        retryAfterS: verdict.kind === 'reject' ? (verdict.retryAfterS ?? undefined) : undefined,
        headers: verdict.responseHeaders.length === 0 ? undefined : verdict.responseHeaders,
        limitReqStatus: verdict.status,
        zone: verdict.zone,
        client: route.handler.client,
        answerHeaders: verdict.answerHeaders,
      };
    }
    case 'return': {
      const client = route.handler.client;
      const answerHeaders = verdict.answerHeaders;
      if (verdict.code === 444) return { action: 'reject', code: 444 };
      if (REDIRECTS.has(verdict.code) && verdict.text !== null) {
        // the header filter makes a location that starts with `/` absolute (absolute_redirect)
        const text = verdict.text;
        const headers = { location: text.startsWith('/') ? absoluteLocation(deciding, text) : text };
        return { action: 'return', code: verdict.code, headers, client, answerHeaders };
      }
      if (verdict.text === null) return { action: 'return', code: verdict.code, client, answerHeaders };
      // the text's type is the URI's by `types`, else `default_type` (ngx_http_send_response)
      const type = { 'content-type': contentTypeOf(route.handler.files, route.target.uri) };
      const body = verdict.text;
      return { action: 'return', code: verdict.code, body, headers: type, client, answerHeaders };
    }
    case 'refuse':
      return answeredUnder(refusal(verdict.code), verdict);
    case 'deny':
      return answeredUnder(FORBIDDEN, verdict);
    case 'api':
      // The NGINX Plus API lives on the control plane and --status-listen.
      return answeredUnder(NOT_FOUND, verdict);
    case 'static':
      return holding(
        staticDecision(
          { ...deciding, answerHeaders: verdict.answerHeaders, variables: verdict.ctx },
          (uri) => internalRedirect(uri, deciding, toDataPath) as RoutedDecision,
        ),
        verdict.connections ?? null,
      );
    case 'proxy':
      return forwarding(verdict, route, targets, deciding) ?? answeredUnder(NOT_FOUND, verdict);
    case 'wait': {
      const proceed = forwarding(verdict, route, targets, deciding);
      if (proceed === null) {
        verdict.connections?.release();
        return answeredUnder(NOT_FOUND, verdict);
      }
      const { status: limitReqStatus, zone, answerHeaders } = verdict;
      const extras = { limitReqStatus, zone, serverName: route.serverName, answerHeaders };
      const log = (line: LogLine) =>
        deciding.errorLog.request(line, requestLogContext(deciding.ctx, route.serverName));
      if (verdict.priority !== undefined) {
        const clock = { nowMs: deciding.nowMs };
        const classification = verdict.priority;
        return Object.assign(deciding.admissions.priority({ classification, clock, proceed, log }), extras);
      }
      const rule = verdict.apiRateLimit;
      return Object.assign(
        deciding.admissions.apiLimiter({
          limiter: rule.limiter,
          clock: { nowMs: deciding.nowMs },
          proceed,
          refuse: { action: 'reject', code: rule.status },
          log,
        }),
        extras,
      );
    }
    case 'delay': {
      const delayed = verdict.delayed;
      return {
        action: 'delay',
        delayMs: verdict.delayMs,
        resume: () => toDataPath(deciding.site.resume(delayed), deciding),
        limitReqStatus: verdict.status,
        zone: verdict.zone,
        serverName: route.serverName,
        client: route.handler.client,
        answerHeaders: verdict.answerHeaders,
      };
    }
  }
}

/**
 * A file answer holds its limit_conn slots until it is sent, as nginx holds them for any request
 * (with those of a location its index led to); a hold's answer comes later, so they go back now.
 */
function holding(decision: RoutedDecision, slots: HeldUntilEnd | null): RoutedDecision {
  if (slots === null) return decision;
  if (decision.action === 'delay' || decision.action === 'wait') {
    slots.release();
    return decision;
  }
  const together = heldTogether(slots, (decision as ProxyTarget).slots ?? null);
  // the exchange gives back any decision's `slots` when its answer ends
  return { ...decision, slots: together } as RoutedDecision;
}

/** The forward decision for a proxied verdict; null when the location has no target. */
function forwarding(
  verdict: ForwardVerdict,
  route: Route,
  targets: ProxyTargets,
  deciding: Deciding,
): (ProxyDecision & RoutedExtras) | null {
  const target = targets.byHandler.get(route.handler);
  if (target === undefined) return null;
  let upstream = target.upstream;
  let tls = target.tls;
  let path =
    route.rewritten === undefined
      ? rewriteTarget(target, route.target.uri, route.target.args, route.target.hasArgs)
      : rewrittenTarget(target, route.target.uri, route.target.args, route.rewritten.validLocation);
  let address: UpstreamServerSpec | undefined;
  if (verdict.proxyUrl !== undefined) {
    const dynamic = dynamicTarget(verdict.proxyUrl, targets.upstreamNames);
    address = dynamic.address ?? undefined;
    if (dynamic.upstream === null && dynamic.address === null) {
      const line: LogLine = { level: 'error', message: `no resolver defined to resolve ${dynamic.host}` };
      deciding.errorLog.request(line, requestLogContext(deciding.ctx, route.serverName));
    }
    // no group answers 502, as nginx does when it cannot resolve the host
    upstream = dynamic.upstream ?? '';
    path = dynamic.path ?? path;
    tls = dynamic.tls;
  }
  const timeouts = route.handler.proxyTimeouts;
  return {
    action: 'proxy',
    upstream,
    address,
    path,
    tls: tls ? upstreamTls(route.handler.proxySsl, verdict.ctx) : undefined,
    readTimeoutMs: timeouts.readMs,
    connectTimeoutMs: timeouts.connectMs,
    sendTimeoutMs: timeouts.sendMs,
    proxyRules: route.handler.proxyRules,
    proxyHeaders: verdict.proxyHeaders,
    maxBodyBytes: route.handler.clientMaxBodyBytes,
    limitReqStatus: verdict.status,
    zone: verdict.zone,
    serverName: route.serverName,
    slots: verdict.connections,
    answerHeaders: verdict.answerHeaders,
    responseHeaders: verdict.responseHeaders.length === 0 ? undefined : verdict.responseHeaders,
    client: route.handler.client,
    errorPage: upstreamErrorPage(deciding, toDataPath),
  };
}

function writeLogs(log: ErrorLog, verdict: Verdict, route: Route, ctx: DownstreamRequest): void {
  const context = requestLogContext(ctx, route.serverName);
  for (const entry of verdict.logs) log.request(entry, context);
}
