/**
 * A compiled `http` block: servers and locations, variables, limit_req, limit_conn and keyval zones.
 * Answers, for one request, what nginx's phases would do: SERVER_REWRITE/REWRITE (`return` — never
 * limited), PREACCESS (limit_req, then limit_conn — after limit_req's delay, as nginx runs the phases
 * on when the delay is over), ACCESS (allow/deny), then content (proxy, API, static).
 */

import type { ApiLimiter } from '../api-limiter/api-limiter.ts';
import type { KeyvalZone } from '../keyval/keyval-zone.ts';
import {
  type ConnectionSlots,
  type LimitConnPolicy,
  type LimitConnStatus,
  limitConnections,
} from '../limit-conn/limit-conn.ts';
import type { LimitConnZone } from '../limit-conn/limit-conn-zone.ts';
import {
  type LimitReqPolicy,
  type LimitReqStatus,
  limitRequest,
  newOutcome,
} from '../limit-req/limit-req.ts';
import type { LimitReqZone } from '../limit-req/limit-req-zone.ts';
import { rateLimitFields } from '../limit-req/ratelimit-fields.ts';
import type { LogLevel, LogLine } from '../log-line.ts';
import type { AccessList } from '../net/access-list.ts';
import type { NginxRegex } from '../nginx-regex.ts';
import type { PriorityLevel } from '../priority/priority-level.ts';
import { newRequestContext, type RequestContext, type RequestFacts } from '../variables/request-context.ts';
import type { VariableGetter, VariableTable } from '../variables/variable-table.ts';
import type { ClientTimers } from './client-timers.ts';
import type { SslVerifyClient } from './client-verify.ts';
import { findLocationMatch, type RoutableLocation } from './find-location.ts';
import { type NamedServer, normalizeHost, ServerSelector } from './find-server.ts';
import type { HeaderBuffers, HeadServers } from './header-buffers.ts';
import { type HeadFault, type RequestHead, readOversizedHead, readRequestHead } from './request-head.ts';
import { type ParsedTarget, parseRequestTarget } from './uri.ts';

export interface CompiledReturn {
  readonly code: number;
  readonly text: VariableGetter | null;
}

/** `if (condition) { return …; }`: `holds` tests the condition for a request. */
export interface CompiledIfReturn {
  readonly holds: (ctx: RequestContext) => boolean;
  readonly answer: CompiledReturn;
}

export interface RealIpDefinition {
  readonly trustedFrom: readonly string[];
  readonly header: string;
  readonly recursive: boolean;
}

/** What a location (or a server with no matching location) does with a request. */
export interface LocationHandler {
  /** `location /coffee`, for logs. */
  readonly name: string;
  readonly limitReq: LimitReqPolicy<RequestContext>;
  readonly limitConn: LimitConnPolicy<RequestContext>;
  /** The `api_rate_limit` extension (Cilium's API limiter): proxied requests wait for it. */
  readonly apiRateLimit: ApiRateLimitRule | null;
  /** The `priority_level` extension (API Priority and Fairness): proxied requests are admitted by it. */
  readonly priorityLevel: PriorityLevelRule | null;
  readonly return: CompiledReturn | null;
  /** The `if … return`s before `return`, in order (rewrite phase); usually none. */
  readonly ifReturns: readonly CompiledIfReturn[];
  readonly proxyPass: string | null;
  /** A `proxy_pass` with variables, evaluated per request (nginx then looks its host up among the upstreams). */
  readonly proxyPassUrl: VariableGetter | null;
  readonly api: { readonly write: boolean } | null;
  readonly access: AccessList;
  readonly realIp: RealIpDefinition;
  /** `proxy_connect_timeout`, `proxy_read_timeout`, `proxy_send_timeout`, for whoever proxies. */
  readonly proxyTimeouts: { readonly connectMs: number; readonly readMs: number; readonly sendMs: number };
  /** `proxy_http_version 1.1` with `proxy_set_header Upgrade`/`Connection`: WebSocket upgrades are tunnelled. */
  readonly proxyUpgrade: boolean;
  /** `client_max_body_size`, bytes; 0: no limit. */
  readonly clientMaxBodyBytes: number;
  /** The client connection's timers and body buffering in force (`client_body_timeout`, …). */
  readonly client: ClientTimers;
}

export interface SiteLocation extends RoutableLocation<SiteLocation> {
  readonly handler: LocationHandler;
}

export interface SiteServer extends NamedServer {
  readonly locations: readonly SiteLocation[];
  readonly return: CompiledReturn | null;
  /** Server-level `if … return`s before `return`, in order (server rewrite phase). */
  readonly ifReturns: readonly CompiledIfReturn[];
  /** For requests that match no location. */
  readonly handler: LocationHandler;
  /** `client_header_buffer_size` and `large_client_header_buffers`. */
  readonly headerBuffers: HeaderBuffers;
  /** `ssl_verify_client` (requests on TLS connections). */
  readonly clientVerify: SslVerifyClient;
}

/** A request head nginx would refuse, and the server whose name its error-log line carries. */
export interface RefusedHead {
  readonly fault: HeadFault;
  readonly serverName: string;
}

export interface Route {
  readonly server: SiteServer;
  readonly handler: LocationHandler;
  readonly target: ParsedTarget;
  readonly host: string;
  readonly serverName: string;
  /** The regex location's regex that matched the URI (its captures are `$1`… from then on). */
  readonly locationRegex: NginxRegex | null;
}

/**
 * `static`: nginx's static module would serve a file from `root` (the replica serves no files: 404).
 * `refuse`: what the client sent is refused before any limit sees it (413: a `Content-Length` over
 * `client_max_body_size`); nginx closes the connection after the page.
 */
/** A location's Cilium-style limiter and its refusal status. */
export interface ApiRateLimitRule {
  readonly limiter: ApiLimiter;
  readonly status: number;
}

/** A location's `priority_level`: the level and flow of a request, and the answer to a refusal. */
export interface PriorityLevelRule {
  readonly levelOf: VariableGetter;
  readonly flowOf: VariableGetter;
  readonly levels: ReadonlyMap<string, PriorityLevel>;
  readonly status: number;
  readonly logLevel: LogLevel;
  readonly dryRun: boolean;
  readonly headers: boolean;
}

/** What a request was classified into. */
export interface PriorityClassification {
  readonly rule: PriorityLevelRule;
  readonly level: PriorityLevel;
  readonly flow: string;
}

export type VerdictKind =
  | 'return'
  | 'reject'
  | 'close'
  | 'delay'
  | 'wait'
  | 'deny'
  | 'proxy'
  | 'api'
  | 'static'
  | 'refuse';

/**
 * A request limit_req delayed: what the phases after PREACCESS's delay need (`Site.resume` runs them
 * when the delay is over).
 */
export interface DelayedPhases {
  readonly handler: LocationHandler;
  readonly ctx: RequestContext;
  /** The limit_req zone that delayed it. */
  readonly zone: string | null;
  /** The limit_req decision's RateLimit fields, for the answer after the delay. */
  readonly responseHeaders: readonly string[];
}

/** What nginx's phases decide for one request (the data path turns it into an action). */
export interface Verdict {
  readonly kind: VerdictKind;
  /** The HTTP status to answer (444 for `close`; 200 for `proxy`/`api`/`static` until the content answers). */
  readonly code: number;
  /** `$limit_req_status`. */
  readonly status: LimitReqStatus;
  /** `$limit_conn_status`. */
  readonly connStatus: LimitConnStatus;
  /** Hold the request this long first (DELAYED). */
  readonly delayMs: number;
  /** The deciding zone: limit_req's, or the limit_conn zone that refused. */
  readonly zone: string | null;
  readonly logs: readonly LogLine[];
  /** `Retry-After` seconds for a rejection, when its limiter says so (the extensions); else null. */
  readonly retryAfterS: number | null;
  /** `return` body or redirect URL. */
  readonly text: string | null;
  /** `delay`: the phases to run when the delay is over (`Site.resume`). */
  readonly delayed: DelayedPhases | null;
  /**
   * `proxy` and `wait`: the limit_conn slots the request holds until it ends (release them then; a
   * `wait` refused by its limiter gives them back).
   */
  readonly connections: ConnectionSlots | null;
  /** `wait`: the API limiter the request waits for before it is proxied. */
  readonly apiRateLimit: ApiRateLimitRule | null;
  /** `wait`: the priority level that admits the request (a `wait` has this or `apiRateLimit`). */
  readonly priority?: PriorityClassification;
  /** Header fields the answer carries (name, value, …): the IETF RateLimit fields, when asked for. */
  readonly responseHeaders: readonly string[];
  /** `proxy` and `wait` through a `proxy_pass` with variables: the URL it evaluated to. */
  readonly proxyUrl?: string;
}

export interface SiteParts {
  readonly servers: readonly SiteServer[];
  readonly variables: VariableTable;
  readonly limitReqZones: ReadonlyMap<string, LimitReqZone>;
  readonly limitConnZones: ReadonlyMap<string, LimitConnZone>;
  readonly apiLimiters: ReadonlyMap<string, ApiLimiter>;
  readonly priorityLevels: ReadonlyMap<string, PriorityLevel>;
  readonly keyvalZones: ReadonlyMap<string, KeyvalZone>;
}

export class Site {
  readonly servers: readonly SiteServer[];
  readonly variables: VariableTable;
  readonly limitReqZones: ReadonlyMap<string, LimitReqZone>;
  readonly limitConnZones: ReadonlyMap<string, LimitConnZone>;
  readonly apiLimiters: ReadonlyMap<string, ApiLimiter>;
  readonly priorityLevels: ReadonlyMap<string, PriorityLevel>;
  readonly keyvalZones: ReadonlyMap<string, KeyvalZone>;
  private readonly selector: ServerSelector<SiteServer>;
  private readonly outcome = newOutcome();
  #lastHostHeader: string | undefined = undefined;
  #lastHost = '';
  /** port → server address → the servers a head is read for (null: nothing listens there). */
  readonly #headServers = new Map<number, Map<string, HeadServers | null>>();

  constructor(parts: SiteParts) {
    this.servers = parts.servers;
    this.variables = parts.variables;
    this.limitReqZones = parts.limitReqZones;
    this.limitConnZones = parts.limitConnZones;
    this.apiLimiters = parts.apiLimiters;
    this.priorityLevels = parts.priorityLevels;
    this.keyvalZones = parts.keyvalZones;
    this.selector = new ServerSelector(parts.servers);
  }

  /** Ports the servers listen on. */
  ports(): number[] {
    return this.selector.ports();
  }

  /** Finds server and location; null when nginx would answer 400 (bad target) or nothing listens. */
  route(target: string, hostHeader: string | undefined, serverAddr: string, port: number): Route | null {
    const parsed = parseRequestTarget(target);
    if (parsed === null) return null;
    const host = this.#normalizedHost(hostHeader);
    const server = this.selector.select(serverAddr, port, host);
    if (server === null) return null;
    const serverName = server.serverNames[0] ?? '';
    const { location, regex } = findLocationMatch(server.locations, parsed.uri);
    return {
      server,
      handler: location === null ? server.handler : location.handler,
      target: parsed,
      host: host.length !== 0 ? host : serverName,
      serverName,
      locationRegex: regex,
    };
  }

  /**
   * What nginx refuses of a request head (too large, bad version, a second or invalid Host, …; see
   * request-head.ts), before routing; null for a head it reads.
   */
  readHead(head: RequestHead, serverAddr: string, port: number): RefusedHead | null {
    const servers = this.#headServersFor(serverAddr, port);
    if (servers === null) return null;
    const fault = readRequestHead(head, servers);
    return fault === null ? null : this.refusal(fault, serverAddr, port);
  }

  /**
   * What nginx makes of a head too large for the parser, from the bytes it was given (see
   * `readOversizedHead`); null when they do not show it.
   */
  readOversizedHead(bytes: string, serverAddr: string, port: number): RefusedHead | null {
    const servers = this.#headServersFor(serverAddr, port);
    if (servers === null) return null;
    const fault = readOversizedHead(bytes, servers);
    return fault === null ? null : this.refusal(fault, serverAddr, port);
  }

  /**
   * At least the largest head nginx could take on `port`: a first buffer and every large buffer, the
   * largest of any server there (a Host line may switch a head to another server's buffers).
   */
  maxHeadBytes(port: number): number {
    let first = 0;
    let count = 0;
    let bytes = 0;
    for (const server of this.servers) {
      if (!server.listen.some((l) => l.port === port)) continue;
      const b = server.headerBuffers;
      first = Math.max(first, b.firstBytes);
      count = Math.max(count, b.largeCount);
      bytes = Math.max(bytes, b.largeBytes);
    }
    return first + count * bytes;
  }

  /** A head fault with the name of the server that has the request (for its log line). */
  refusal(fault: HeadFault, serverAddr: string, port: number): RefusedHead {
    const server =
      fault.hostSelected && fault.host !== null
        ? this.selector.select(serverAddr, port, normalizeHost(fault.host))
        : this.selector.defaultServer(serverAddr, port);
    return { fault, serverName: server?.serverNames[0] ?? '' };
  }

  #headServersFor(serverAddr: string, port: number): HeadServers | null {
    let byAddress = this.#headServers.get(port);
    if (byAddress === undefined) {
      byAddress = new Map();
      this.#headServers.set(port, byAddress);
    }
    let servers = byAddress.get(serverAddr);
    if (servers === undefined) {
      const selector = this.selector;
      const fallback = selector.defaultServer(serverAddr, port);
      servers =
        fallback === null
          ? null
          : {
              defaultBuffers: fallback.headerBuffers,
              buffersForHost: (host) =>
                (selector.select(serverAddr, port, normalizeHost(host)) ?? fallback).headerBuffers,
            };
      byAddress.set(serverAddr, servers);
    }
    return servers;
  }

  /**
   * `normalizeHost`, remembering the last header: requests in a row mostly carry the same `Host`, and
   * the remembered result is one string whose hash the name lookups already know.
   */
  #normalizedHost(hostHeader: string | undefined): string {
    if (hostHeader === this.#lastHostHeader) return this.#lastHost;
    const host = normalizeHost(hostHeader);
    this.#lastHostHeader = hostHeader;
    this.#lastHost = host;
    return host;
  }

  /** Runs the phases for a routed request. Mutates zone state and counters. */
  decide(route: Route, facts: RequestFacts, nowMs: number): Verdict {
    const ctx = newRequestContext(
      facts,
      route.target,
      route.host,
      route.serverName,
      nowMs,
      this.variables.slots,
    );
    if (route.server.ifReturns.length !== 0) {
      const hit = firstHolding(route.server.ifReturns, ctx);
      if (hit !== null) return answer(hit, ctx);
    }
    const serverReturn = route.server.return;
    if (serverReturn !== null) return answer(serverReturn, ctx);
    // FIND_CONFIG matched a regex location: its captures are the request's from here on
    if (route.locationRegex !== null) ctx.lastMatch = { regex: route.locationRegex, subject: ctx.uri };
    const handler = route.handler;
    // FIND_CONFIG: the location is known, nothing of its rewrite phase has run yet
    const length = facts.contentLength;
    if (length !== undefined && handler.clientMaxBodyBytes !== 0 && length > handler.clientMaxBodyBytes) {
      return tooLarge(length);
    }
    if (handler.ifReturns.length !== 0) {
      const hit = firstHolding(handler.ifReturns, ctx);
      if (hit !== null) return answer(hit, ctx);
    }
    if (handler.return !== null) return answer(handler.return, ctx);

    let status: LimitReqStatus = '';
    let zone: string | null = null;
    let logs: readonly LogLine[] = NO_LOGS;
    let headers: readonly string[] = NO_HEADERS;
    if (handler.limitReq.rules.length !== 0) {
      const out = limitRequest(handler.limitReq, ctx, nowMs, this.outcome);
      status = out.status;
      ctx.limitReqStatus = status;
      zone = out.zone?.name ?? null;
      if (out.logs.length !== 0) logs = out.logs;
      if (handler.limitReq.rateLimitHeaders) headers = rateLimitFields(out);
      if (out.rejectCode !== 0) {
        const retryAfterS = handler.limitReq.retryAfter
          ? Math.max(1, Math.ceil(out.retryAfterMs / 1000))
          : null;
        return rejection(out.rejectCode, status, '', zone, logs, retryAfterS, headers);
      }
      if (out.delayMs > 0) {
        return {
          kind: 'delay',
          code: 200,
          status,
          connStatus: '',
          delayMs: out.delayMs,
          zone,
          logs,
          retryAfterS: null,
          text: null,
          delayed: { handler, ctx, zone, responseHeaders: headers },
          connections: null,
          apiRateLimit: null,
          responseHeaders: headers,
        };
      }
    }
    return afterDelay(handler, ctx, status, zone, logs, headers);
  }

  /**
   * The phases after limit_req's delay, for a request `decide` answered with `delay`: limit_conn,
   * access, content. Its verdict is never `delay`; its logs are those of these phases.
   */
  resume(delayed: DelayedPhases): Verdict {
    const { handler, ctx, zone, responseHeaders } = delayed;
    return afterDelay(handler, ctx, ctx.limitReqStatus, zone, NO_LOGS, responseHeaders);
  }

  /** `route` + `decide` in one step (simulate, tests); 400 for an unparsable target. */
  evaluate(facts: RequestFacts, nowMs: number): Verdict {
    return this.decideRoute(this.routeFacts(facts), facts, nowMs);
  }

  /** `route` for a request's facts. */
  routeFacts(facts: RequestFacts): Route | null {
    return this.route(facts.target, facts.headers.host, facts.serverAddr, facts.serverPort);
  }

  /** `decide` for a request `routeFacts` routed; 400 for one it could not route. */
  decideRoute(route: Route | null, facts: RequestFacts, nowMs: number): Verdict {
    if (route === null) {
      return {
        kind: 'return',
        code: 400,
        status: '',
        connStatus: '',
        delayMs: 0,
        zone: null,
        logs: NO_LOGS,
        retryAfterS: null,
        text: null,
        delayed: null,
        connections: null,
        apiRateLimit: null,
        responseHeaders: NO_HEADERS,
      };
    }
    return this.decide(route, facts, nowMs);
  }
}

const NO_LOGS: readonly LogLine[] = Object.freeze([]);
const NO_HEADERS: readonly string[] = Object.freeze([]);

/** ngx_http_core_find_config_phase: a declared body over `client_max_body_size`. */
function tooLarge(length: number): Verdict {
  return {
    kind: 'refuse',
    code: 413,
    status: '',
    connStatus: '',
    delayMs: 0,
    zone: null,
    logs: [{ level: 'error', message: `client intended to send too large body: ${length} bytes` }],
    retryAfterS: null,
    text: null,
    delayed: null,
    connections: null,
    apiRateLimit: null,
    responseHeaders: NO_HEADERS,
  };
}

/** The rewrite phase's first `if` whose condition holds, in the order written; null: none. */
function firstHolding(ifs: readonly CompiledIfReturn[], ctx: RequestContext): CompiledReturn | null {
  for (const i of ifs) if (i.holds(ctx)) return i.answer;
  return null;
}

function answer(spec: CompiledReturn, ctx: RequestContext): Verdict {
  const text = spec.text === null ? null : spec.text(ctx);
  const kind: VerdictKind = spec.code === 444 ? 'close' : 'return';
  return {
    kind,
    code: spec.code,
    status: '',
    connStatus: '',
    delayMs: 0,
    zone: null,
    logs: NO_LOGS,
    retryAfterS: null,
    text,
    delayed: null,
    connections: null,
    apiRateLimit: null,
    responseHeaders: NO_HEADERS,
  };
}

/** limit_req or limit_conn refused the request: its status (444: close without an answer). */
function rejection(
  code: number,
  status: LimitReqStatus,
  connStatus: LimitConnStatus,
  zone: string | null,
  logs: readonly LogLine[],
  retryAfterS: number | null,
  responseHeaders: readonly string[] = NO_HEADERS,
): Verdict {
  return {
    kind: code === 444 ? 'close' : 'reject',
    code,
    status,
    connStatus,
    delayMs: 0,
    zone,
    logs,
    retryAfterS,
    text: null,
    delayed: null,
    connections: null,
    apiRateLimit: null,
    responseHeaders,
  };
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
): Verdict {
  let logs = limitReqLogs;
  let connStatus: LimitConnStatus = '';
  let connections: ConnectionSlots | null = null;
  if (handler.limitConn.rules.length !== 0) {
    const out = limitConnections(handler.limitConn, ctx);
    connStatus = out.status;
    ctx.limitConnStatus = connStatus;
    if (out.logs.length !== 0) logs = logs.length === 0 ? out.logs : [...logs, ...out.logs];
    if (out.rejectCode !== 0) {
      const retryAfterMs = handler.limitConn.retryAfterMs ?? null;
      const retryAfterS = retryAfterMs === null ? null : Math.ceil(retryAfterMs / 1000);
      const refusing = out.zone?.name ?? null;
      return rejection(out.rejectCode, status, connStatus, refusing, logs, retryAfterS, responseHeaders);
    }
    connections = out.slots;
  }
  let kind: VerdictKind;
  let code = 200;
  if (!handler.access.allows(ctx.facts.remoteAddr)) {
    kind = 'deny';
    code = 403;
  } else if (handler.api !== null) kind = 'api';
  else if (handler.proxyPass !== null) kind = 'proxy';
  else kind = 'static';
  if (kind !== 'proxy' && connections !== null) {
    connections.release();
    connections = null;
  }
  const apiRateLimit = kind === 'proxy' ? handler.apiRateLimit : null;
  if (apiRateLimit !== null) kind = 'wait';
  let priority: PriorityClassification | undefined;
  const rule = kind === 'proxy' ? handler.priorityLevel : null;
  if (rule !== null) {
    const name = rule.levelOf(ctx);
    const level = name === '' ? undefined : rule.levels.get(name);
    if (level !== undefined) {
      kind = 'wait';
      priority = { rule, level, flow: rule.flowOf(ctx) };
    } else if (name !== '') {
      // fails open, as an empty key does, but says so on every request
      const line: LogLine = { level: 'error', message: `priority level "${name}" is not defined` };
      logs = logs.length === 0 ? [line] : [...logs, line];
    }
  }
  return {
    kind,
    code,
    status,
    connStatus,
    delayMs: 0,
    zone: limitReqZone,
    logs,
    retryAfterS: null,
    text: null,
    delayed: null,
    connections,
    apiRateLimit,
    priority,
    responseHeaders,
    // a plain property, not a spread: this object is built for every proxied request
    proxyUrl:
      handler.proxyPassUrl !== null && (kind === 'proxy' || kind === 'wait')
        ? handler.proxyPassUrl(ctx)
        : undefined,
  };
}
