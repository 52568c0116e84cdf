/**
 * What nginx's phases decide for one request; the data path turns it into what the proxy does
 * (answer, close, hold, refuse, forward).
 */

import type { ConnectionSlots, LimitConnStatus } from '../limit-conn/limit-conn.ts';
import type { LimitReqStatus } from '../limit-req/limit-req.ts';
import type { LogLine } from '../log-line.ts';
import type { PriorityLevel } from '../priority/priority-level.ts';
import type { RequestContext } from '../variables/request-context.ts';
import type { ApiRateLimitRule, LocationHandler, PriorityLevelRule } from './location-handler.ts';

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
