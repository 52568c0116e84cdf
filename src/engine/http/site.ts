/**
 * A compiled `http` block: servers and locations, variables, limit_req, limit_conn and keyval zones.
 * Answers, for one request, what nginx would do: refuse its head (head-refusal.ts), route it
 * (route.ts), run its phases (phases.ts) into a verdict (verdict.ts).
 */

import type { ApiLimiter } from '../api-limiter/api-limiter.ts';
import type { KeyvalZone } from '../keyval/keyval-zone.ts';
import type { LimitConnZone } from '../limit-conn/limit-conn-zone.ts';
import { newOutcome } from '../limit-req/limit-req.ts';
import type { LimitReqZone } from '../limit-req/limit-req-zone.ts';
import type { PriorityLevel } from '../priority/priority-level.ts';
import type { RequestContext, RequestFacts } from '../variables/request-context.ts';
import type { VariableTable } from '../variables/variable-table.ts';
import { type AnswerHeaders, bindAddHeaders } from './add-headers.ts';
import { NO_ANSWER_RATE } from './answer-rate.ts';
import { ServerSelector } from './find-server.ts';
import type { H2HeaderFault } from './h2-header-limits.ts';
import { HeadRefusals, type RefusedHead } from './head-refusal.ts';
import { resumePhases, routeContext, runPhases, unroutable } from './phases.ts';
import type { HeadFault, RequestHead } from './request-head.ts';
import { type Route, Router } from './route.ts';
import type { SiteServer } from './site-server.ts';
import type { DelayedPhases, Verdict } from './verdict.ts';

// The data path takes these with a Site.

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
  readonly #router: Router;
  readonly #heads: HeadRefusals;

  constructor(parts: SiteParts) {
    this.servers = parts.servers;
    this.variables = parts.variables;
    this.limitReqZones = parts.limitReqZones;
    this.limitConnZones = parts.limitConnZones;
    this.apiLimiters = parts.apiLimiters;
    this.priorityLevels = parts.priorityLevels;
    this.keyvalZones = parts.keyvalZones;
    this.selector = new ServerSelector(parts.servers);
    this.#router = new Router(this.selector);
    this.#heads = new HeadRefusals(parts.servers, this.selector);
  }

  /** Ports the servers listen on. */
  ports(): number[] {
    return this.selector.ports();
  }

  /** Finds server and location; null when nginx would answer 400 (bad target) or nothing listens. */
  route(target: string, hostHeader: string | undefined, serverAddr: string, port: number): Route | null {
    return this.#router.route(target, hostHeader, serverAddr, port);
  }

  /** The route a request with a target nginx cannot read is logged under (route.ts). */
  badTargetRoute(serverAddr: string, port: number): Route | null {
    return this.#router.badTargetRoute(serverAddr, port);
  }

  /**
   * What nginx refuses of a request head (too large, bad version, a second or invalid Host, …; see
   * request-head.ts), before routing; null for a head it reads.
   */
  readHead(head: RequestHead, serverAddr: string, port: number): RefusedHead | null {
    return this.#heads.readHead(head, serverAddr, port);
  }

  /**
   * What nginx makes of a head too large for the parser, from the bytes it was given (see
   * `readOversizedHead`); null when they do not show it.
   */
  readOversizedHead(bytes: string, serverAddr: string, port: number): RefusedHead | null {
    return this.#heads.readOversizedHead(bytes, serverAddr, port);
  }

  /** What nginx finds too large in an HTTP/2 header block (see `HeadRefusals.readH2HeaderBlock`). */
  readH2HeaderBlock(
    rawHeaders: readonly string[],
    serverAddr: string,
    port: number,
    sniName: string | null,
  ): H2HeaderFault | null {
    return this.#heads.readH2HeaderBlock(rawHeaders, serverAddr, port, sniName);
  }

  /** At least the largest head nginx could take on `port` (see `HeadRefusals.maxHeadBytes`). */
  maxHeadBytes(port: number): number {
    return this.#heads.maxHeadBytes(port);
  }

  /** A head fault with the name of the server that has the request (for its log line). */
  refusal(fault: HeadFault, serverAddr: string, port: number): RefusedHead {
    return this.#heads.refusal(fault, serverAddr, port);
  }

  /**
   * Runs the phases for a routed request. Mutates zone state and counters. `uriChanges`: what is left
   * of the request's URI changes (fewer after internal redirects); `limited`: its limit_req and
   * limit_conn ran before an internal redirect (nginx runs them once a request); `cache`: the
   * request's variables from before an internal redirect, which nginx keeps.
   */
  decide(
    route: Route,
    facts: RequestFacts,
    nowMs: number,
    uriChanges?: number,
    limited?: boolean,
    cache?: (string | undefined)[],
  ): Verdict {
    return runPhases(route, facts, nowMs, this.variables.slots, this.outcome, uriChanges, limited, cache);
  }

  /** The location's `add_header` lines bound to a request answered there without its phases. */
  answerHeaders(
    route: Route,
    facts: RequestFacts,
    nowMs: number,
    cache?: (string | undefined)[],
  ): AnswerHeaders | null {
    const { addHeaders, expires, answerRate } = route.handler;
    if (addHeaders.length === 0 && expires === null && answerRate === NO_ANSWER_RATE) return null;
    return bindAddHeaders(route.handler, this.requestContext(route, facts, nowMs, cache));
  }

  /** The request's variables at a location it is answered in without its phases. */
  requestContext(
    route: Route,
    facts: RequestFacts,
    nowMs: number,
    cache?: (string | undefined)[],
  ): RequestContext {
    return routeContext(route, facts, nowMs, this.variables.slots, cache);
  }

  /**
   * The phases after limit_req's delay, for a request `decide` answered with `delay`: limit_conn,
   * access, content. Its verdict is never `delay`; its logs are those of these phases.
   */
  resume(delayed: DelayedPhases): Verdict {
    return resumePhases(delayed);
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
    return route === null ? unroutable() : this.decide(route, facts, nowMs);
  }
}
