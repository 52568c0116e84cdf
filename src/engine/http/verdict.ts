/**
 * What nginx's phases decide for one request; the data path turns it into what the proxy does
 * (answer, close, hold, refuse, forward).
 */

import type { ConnectionSlots, LimitConnStatus } from '../limit-conn/limit-conn.ts';
import type { LimitReqStatus } from '../limit-req/limit-req.ts';
import type { LogLine } from '../log-line.ts';
import type { PriorityLevel } from '../priority/priority-level.ts';
import type { RequestContext } from '../variables/request-context.ts';
import type { AnswerHeaders } from './add-headers.ts';
import type { ApiRateLimitRule, LocationHandler, PriorityLevelRule } from './location-handler.ts';
import type { BoundProxyHeaders } from './proxy-headers.ts';
import type { Route } from './route.ts';

/** What a request was classified into. */
export interface PriorityClassification {
  readonly rule: PriorityLevelRule;
  readonly level: PriorityLevel;
  readonly flow: string;
}

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
  /** The `add_header` lines in force, bound to the request. */
  readonly answerHeaders: AnswerHeaders | null;
}

/** What every verdict carries, whatever the phases decided (for logs, counters and replay). */
interface VerdictBase {
  /** The HTTP status to answer; 200 for `delay` and the content kinds, until the content answers. */
  readonly code: number;
  /** `$limit_req_status` ('' when limit_req did not run). */
  readonly status: LimitReqStatus;
  /** `$limit_conn_status` ('' when limit_conn did not run). */
  readonly connStatus: LimitConnStatus;
  /** The deciding zone: limit_req's, or the limit_conn zone that refused. */
  readonly zone: string | null;
  readonly logs: readonly LogLine[];
  /** Header fields the answer carries (name, value, …): the IETF RateLimit fields, when asked for. */
  readonly responseHeaders: readonly string[];
  /** The `add_header` lines the answer is given under, bound to the request; null: none. */
  readonly answerHeaders: AnswerHeaders | null;
  /** The request's route once the rewrite phases changed its URI or configuration (absent: unchanged). */
  readonly route?: Route;
  /** The request's variables (an `index` with variables reads them; an internal redirect keeps them). */
  readonly ctx?: RequestContext;
}

/** `return` in the rewrite phases (never limited), or nginx's 400 for a request no server takes. */
export interface ReturnVerdict extends VerdictBase {
  readonly kind: 'return';
  /** The body, or a redirect's URL. */
  readonly text: string | null;
  /** The rewrite cycle's 500: the request's URI changes are used up, so no error page answers it. */
  readonly cycle?: boolean;
}

/** 444: close the connection without an answer (`return 444`, or a limit's status 444). */
export interface CloseVerdict extends VerdictBase {
  readonly kind: 'close';
  readonly code: 444;
}

/** limit_req or limit_conn refused the request with `code`. */
export interface RejectVerdict extends VerdictBase {
  readonly kind: 'reject';
  /** `Retry-After` seconds, when its limiter says so (the extensions); else null. */
  readonly retryAfterS: number | null;
}

/** 413 in FIND_CONFIG: a declared body over `client_max_body_size`, refused before any limit sees it. */
export interface RefuseVerdict extends VerdictBase {
  readonly kind: 'refuse';
  readonly code: 413;
}

/** limit_req delayed the request (DELAYED): hold it, then run the phases after PREACCESS's delay. */
export interface DelayVerdict extends VerdictBase {
  readonly kind: 'delay';
  readonly code: 200;
  readonly delayMs: number;
  /** What `Site.resume` runs when the delay is over. */
  readonly delayed: DelayedPhases;
}

/** 403 from ACCESS (`deny`). */
export interface DenyVerdict extends VerdictBase {
  readonly kind: 'deny';
  readonly code: 403;
}

/** Content by the NGINX Plus `api` module (`api`), or by nginx's static module from `root` (`static`). */
export interface ServeVerdict extends VerdictBase {
  readonly kind: 'api' | 'static';
  readonly code: 200;
  /** `static`: the limit_conn slots the request holds until its answer is sent (release them then). */
  readonly connections?: ConnectionSlots | null;
}

/** What a request to be proxied carries into the content phase. */
interface ForwardFields extends VerdictBase {
  readonly code: 200;
  /** The limit_conn slots the request holds until it ends (release them then); null without limit_conn. */
  readonly connections: ConnectionSlots | null;
  /** Through a `proxy_pass` with variables: the URL it evaluated to. */
  readonly proxyUrl: string | undefined;
  /** The location's `proxy_set_header` set, bound to the request (evaluated when it is forwarded). */
  readonly proxyHeaders: BoundProxyHeaders;
}

/** Content by `proxy_pass`, at once. */
export interface ProxyVerdict extends ForwardFields {
  readonly kind: 'proxy';
}

/**
 * Content by `proxy_pass` once an extension admits it: the location's `api_rate_limit`, else its
 * `priority_level` (a refusal gives the limit_conn slots back).
 */
export type WaitVerdict = ApiRateLimitWait | PriorityWait;

/** Waits for the location's `api_rate_limit` limiter. */
export interface ApiRateLimitWait extends ForwardFields {
  readonly kind: 'wait';
  readonly apiRateLimit: ApiRateLimitRule;
  readonly priority?: undefined;
}

/** Waits to be admitted by the priority level it was classified into. */
export interface PriorityWait extends ForwardFields {
  readonly kind: 'wait';
  readonly apiRateLimit: null;
  readonly priority: PriorityClassification;
}

/** What nginx's phases decide for one request, a variant per outcome (`kind`). */
export type Verdict =
  | ReturnVerdict
  | CloseVerdict
  | RejectVerdict
  | RefuseVerdict
  | DelayVerdict
  | DenyVerdict
  | ServeVerdict
  | ProxyVerdict
  | WaitVerdict;

/** The verdicts whose request is proxied (now or once admitted). */
export type ForwardVerdict = ProxyVerdict | WaitVerdict;
