/**
 * nginx's phases for one routed request: SERVER_REWRITE and REWRITE (`if … return`, `return` — never
 * limited), FIND_CONFIG's `client_max_body_size`, PREACCESS (limit_req, then limit_conn — after
 * limit_req's delay, as nginx runs the phases on when the delay is over), ACCESS (allow/deny), then
 * content (proxy, API, static), with the extensions that admit a proxied request.
 */

import type { ConnectionSlots, LimitConnStatus } from '../limit-conn/limit-conn.ts';
import { limitConnections } from '../limit-conn/limit-conn.ts';
import { type LimitReqOutcome, type LimitReqStatus, limitRequest } from '../limit-req/limit-req.ts';
import { rateLimitFields } from '../limit-req/ratelimit-fields.ts';
import type { LogLine } from '../log-line.ts';
import { ACCESS_FORBIDDEN } from '../net/access-list.ts';
import { newRequestContext, type RequestContext, type RequestFacts } from '../variables/request-context.ts';
import { type AnswerHeaders, bindAddHeaders } from './add-headers.ts';
import type { LocationHandler } from './location-handler.ts';
import { bindProxyHeaders } from './proxy-headers.ts';
import type { RealIpAt } from './realip-hook.ts';
import { rewritePhases, URI_CHANGES } from './rewrite-phases.ts';
import type { ScriptAnswer, ScriptState } from './rewrite-script.ts';
import type { Route } from './route.ts';
import { setServerCaptures } from './server-captures.ts';
import type {
  CloseVerdict,
  DelayedPhases,
  PriorityClassification,
  RefuseVerdict,
  RejectVerdict,
  ReturnVerdict,
  Verdict,
} from './verdict.ts';

/**
 * Runs the phases for a routed request. Mutates zone state and counters; `outcome` is limit_req's,
 * reused between requests.
 */
export function runPhases(
  route: Route,
  facts: RequestFacts,
  nowMs: number,
  variableSlots: number,
  outcome: LimitReqOutcome,
  uriChanges: number = URI_CHANGES,
  limited = false,
  cache?: (string | undefined)[],
): Verdict {
  const { target, host, serverName } = route;
  const ctx = newRequestContext(facts, target, host, serverName, nowMs, variableSlots, cache);
  setServerCaptures(route, ctx);
  const state: ScriptState<LocationHandler> = {
    uriChanged: false,
    validLocation: true,
    rewritten: false,
    handler: route.handler,
    locationRegex: route.locationRegex,
    logs: [],
  };
  const end = rewritePhases(route, ctx, state, uriChanges);
  const handler = state.handler;
  const rerouted = state.rewritten || handler !== route.handler ? reroute(route, ctx, state) : undefined;
  if (end.kind !== 'content') {
    const added = bindAddHeaders(handler, ctx);
    const verdict =
      end.kind === 'tooLarge'
        ? tooLarge(end.length, added)
        : end.kind === 'cycle'
          ? { ...answer({ code: 500, text: null }, added, state.logs), cycle: true }
          : answer(end.answer, added, state.logs);
    return rerouted === undefined ? { ...verdict, ctx } : { ...verdict, route: rerouted, ctx };
  }
  const logs = state.logs.length === 0 ? NO_LOGS : state.logs;
  const verdict = limitPhases(handler, ctx, logs, outcome, limited);
  return rerouted === undefined ? { ...verdict, ctx } : { ...verdict, route: rerouted, ctx };
}

/** The request's route once the rewrite phases changed its URI or put it under an `if`'s configuration. */
function reroute(route: Route, ctx: RequestContext, state: ScriptState<LocationHandler>): Route {
  return {
    ...route,
    handler: state.handler,
    target: { uri: ctx.uri, args: ctx.args, hasArgs: ctx.hasArgs },
    locationRegex: state.locationRegex,
    rewritten: state.rewritten ? { validLocation: state.validLocation } : undefined,
  };
}

/** PREACCESS onwards: limit_req (which may delay the rest), then `afterDelay`. */
function limitPhases(
  handler: LocationHandler,
  ctx: RequestContext,
  rewriteLogs: readonly LogLine[],
  outcome: LimitReqOutcome,
  /** The request's limit_req and limit_conn ran before an internal redirect: they run once a request. */
  limited: boolean,
): Verdict {
  const nowMs = ctx.nowMs;
  (ctx.facts as RealIpAt).realIpAt?.(handler.realIp);
  const added = bindAddHeaders(handler, ctx);
  let status: LimitReqStatus = '';
  let zone: string | null = null;
  let logs: readonly LogLine[] = rewriteLogs;
  let headers: readonly string[] = NO_HEADERS;
  if (!limited && handler.limitReq.rules.length !== 0) {
    const out = limitRequest(handler.limitReq, ctx, nowMs, outcome);
    status = out.status;
    ctx.limitReqStatus = status;
    zone = out.zone?.name ?? null;
    if (out.logs.length !== 0) logs = logs.length === 0 ? out.logs : [...logs, ...out.logs];
    if (handler.limitReq.rateLimitHeaders) headers = rateLimitFields(out);
    if (out.rejectCode !== 0) {
      const retryAfterS = handler.limitReq.retryAfter
        ? Math.max(1, Math.ceil(out.retryAfterMs / 1000))
        : null;
      return rejection(out.rejectCode, status, '', zone, logs, retryAfterS, headers, added);
    }
    if (out.delayMs > 0) {
      return {
        kind: 'delay',
        code: 200,
        status,
        connStatus: '',
        zone,
        logs,
        responseHeaders: headers,
        answerHeaders: added,
        delayMs: out.delayMs,
        delayed: { handler, ctx, zone, responseHeaders: headers, answerHeaders: added },
      };
    }
  }
  return afterDelay(handler, ctx, status, zone, logs, headers, added, limited);
}

/**
 * The phases after limit_req's delay, for a request `runPhases` answered with `delay`: limit_conn,
 * access, content. Its verdict is never `delay`; its logs are those of these phases.
 */
export function resumePhases(delayed: DelayedPhases): Verdict {
  const { handler, ctx, zone, responseHeaders, answerHeaders } = delayed;
  return {
    ...afterDelay(handler, ctx, ctx.limitReqStatus, zone, NO_LOGS, responseHeaders, answerHeaders),
    ctx,
  };
}

/**
 * A request's variables at the route's location, for an answer given there without its phases (an
 * index's internal redirect to a location that answers from disk).
 */
export function routeContext(
  route: Route,
  facts: RequestFacts,
  nowMs: number,
  variableSlots: number,
  cache?: (string | undefined)[],
): RequestContext {
  const { target, host, serverName } = route;
  const ctx = newRequestContext(facts, target, host, serverName, nowMs, variableSlots, cache);
  setServerCaptures(route, ctx);
  if (route.locationRegex !== null) ctx.lastMatch = { regex: route.locationRegex, subject: ctx.uri };
  return ctx;
}

/** nginx's 400 for a request no server takes (a target it cannot parse, nothing listening). */
export function unroutable(): ReturnVerdict {
  return {
    kind: 'return',
    code: 400,
    status: '',
    connStatus: '',
    zone: null,
    logs: NO_LOGS,
    responseHeaders: NO_HEADERS,
    answerHeaders: null,
    text: null,
  };
}

const NO_LOGS: readonly LogLine[] = Object.freeze([]);
const NO_HEADERS: readonly string[] = Object.freeze([]);

/** ngx_http_core_find_config_phase: a declared body over `client_max_body_size`. */
function tooLarge(length: number, answerHeaders: AnswerHeaders | null): RefuseVerdict {
  return {
    kind: 'refuse',
    code: 413,
    status: '',
    connStatus: '',
    zone: null,
    logs: [{ level: 'error', message: `client intended to send too large body: ${length} bytes` }],
    responseHeaders: NO_HEADERS,
    answerHeaders,
  };
}

/** The rewrite phases' answer (`return`, a redirect, a 500); 444 closes without an answer, so it has none. */
function answer(
  spec: ScriptAnswer,
  answerHeaders: AnswerHeaders | null,
  logs: readonly LogLine[],
): ReturnVerdict | CloseVerdict {
  const at = {
    status: '',
    connStatus: '',
    zone: null,
    logs: logs.length === 0 ? NO_LOGS : logs,
    responseHeaders: NO_HEADERS,
    answerHeaders,
  } as const;
  if (spec.code === 444) return { kind: 'close', code: 444, ...at };
  return { kind: 'return', code: spec.code, ...at, text: spec.text };
}

/** limit_req or limit_conn refused the request: its status (444: close without an answer). */
function rejection(
  code: number,
  status: LimitReqStatus,
  connStatus: LimitConnStatus,
  zone: string | null,
  logs: readonly LogLine[],
  retryAfterS: number | null,
  responseHeaders: readonly string[],
  answerHeaders: AnswerHeaders | null,
): RejectVerdict | CloseVerdict {
  const at = { status, connStatus, zone, logs, responseHeaders, answerHeaders };
  if (code === 444) return { kind: 'close', code, ...at };
  return { kind: 'reject', code, ...at, retryAfterS };
}

/**
 * limit_conn (the rest of PREACCESS), ACCESS and content. Only a proxied request keeps its limit_conn
 * slots (until it ends); the others are answered at once and give them back now.
 */
function afterDelay(
  handler: LocationHandler,
  ctx: RequestContext,
  status: LimitReqStatus,
  limitReqZone: string | null,
  limitReqLogs: readonly LogLine[],
  responseHeaders: readonly string[],
  answerHeaders: AnswerHeaders | null,
  limited = false,
): Verdict {
  let logs = limitReqLogs;
  let connStatus: LimitConnStatus = '';
  let connections: ConnectionSlots | null = null;
  if (!limited && handler.limitConn.rules.length !== 0) {
    const out = limitConnections(handler.limitConn, ctx);
    connStatus = out.status;
    ctx.limitConnStatus = connStatus;
    if (out.logs.length !== 0) logs = logs.length === 0 ? out.logs : [...logs, ...out.logs];
    if (out.rejectCode !== 0) {
      const retryAfterMs = handler.limitConn.retryAfterMs ?? null;
      const retryAfterS = retryAfterMs === null ? null : Math.ceil(retryAfterMs / 1000);
      const refusing = out.zone?.name ?? null;
      const at = [responseHeaders, answerHeaders] as const;
      return rejection(out.rejectCode, status, connStatus, refusing, logs, retryAfterS, ...at);
    }
    connections = out.slots;
  }
  if (!handler.access.allows(ctx.facts.remoteAddr)) {
    connections?.release();
    logs = [...logs, ACCESS_FORBIDDEN];
    const zone = limitReqZone;
    return { kind: 'deny', code: 403, status, connStatus, zone, logs, responseHeaders, answerHeaders };
  }
  if (handler.api !== null || handler.proxyPass === null) {
    const kind = handler.api !== null ? 'api' : 'static';
    // an answer from disk holds its limit_conn slots until it is sent, as any request does
    const held = kind === 'static' ? connections : null;
    if (held === null) connections?.release();
    const zone = limitReqZone;
    return {
      kind,
      code: 200,
      status,
      connStatus,
      zone,
      logs,
      responseHeaders,
      answerHeaders,
      connections: held,
    };
  }
  const apiRateLimit = handler.apiRateLimit;
  if (apiRateLimit !== null) {
    return {
      kind: 'wait',
      code: 200,
      status,
      connStatus,
      zone: limitReqZone,
      logs,
      responseHeaders,
      answerHeaders,
      connections,
      proxyUrl: proxyUrlOf(handler, ctx),
      proxyHeaders: bindProxyHeaders(handler.proxyHeaders, ctx),
      apiRateLimit,
    };
  }
  const rule = handler.priorityLevel;
  if (rule !== null) {
    const name = rule.levelOf(ctx);
    const level = name === '' ? undefined : rule.levels.get(name);
    if (level !== undefined) {
      const priority: PriorityClassification = { rule, level, flow: rule.flowOf(ctx) };
      return {
        kind: 'wait',
        code: 200,
        status,
        connStatus,
        zone: limitReqZone,
        logs,
        responseHeaders,
        answerHeaders,
        connections,
        proxyUrl: proxyUrlOf(handler, ctx),
        proxyHeaders: bindProxyHeaders(handler.proxyHeaders, ctx),
        apiRateLimit: null,
        priority,
      };
    }
    if (name !== '') {
      // fails open, as an empty key does, but says so on every request
      const line: LogLine = { level: 'error', message: `priority level "${name}" is not defined` };
      logs = logs.length === 0 ? [line] : [...logs, line];
    }
  }
  // every property written out, no spread: this object is built for every proxied request
  return {
    kind: 'proxy',
    code: 200,
    status,
    connStatus,
    zone: limitReqZone,
    logs,
    responseHeaders,
    answerHeaders,
    connections,
    proxyUrl: proxyUrlOf(handler, ctx),
    proxyHeaders: bindProxyHeaders(handler.proxyHeaders, ctx),
  };
}

/** A `proxy_pass` with variables, evaluated for the request; undefined for a fixed one. */
function proxyUrlOf(handler: LocationHandler, ctx: RequestContext): string | undefined {
  return handler.proxyPassUrl === null ? undefined : handler.proxyPassUrl(ctx);
}
