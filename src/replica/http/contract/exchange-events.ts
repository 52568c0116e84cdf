/**
 * What a listener tells its owner of its exchanges, besides the decision: a client gone before its
 * answer (nginx's 499), an upstream failure in nginx's words, and every exchange once it is over.
 */
import type { Decision, DownstreamRequest } from './decision.ts';

/** Where the client went away: while held by a delay, or while the upstream exchange was running. */
export type ClientClosedPhase = 'delay' | 'proxy';

/**
 * Reports a client that closed its connection before the response was complete (nginx's 499). The
 * decision is the one the hook returned, so a hook may carry its own fields (zone names, …) through.
 */
export type ClientClosedCallback<D extends Decision = Decision> = (
  ctx: DownstreamRequest,
  decision: D,
  phase: ClientClosedPhase,
) => void;

/** What the access log and the latency histogram learn of a finished exchange, in nginx's terms. */
export interface ExchangeOutcome {
  /** `$status`: 444 for a connection closed without an answer, 499 when the client left first. */
  readonly status: number;
  /** `$body_bytes_sent`: what went out after the response head. */
  readonly bodyBytes: number;
  /** `$request_time`, in seconds. */
  readonly seconds: number;
}

/**
 * Hears every exchange once it is over (answered, forwarded, closed or abandoned by its client).
 * `decision` is null when the hook threw (the client got a 500).
 */
export type CompletedCallback<D extends Decision = Decision> = (
  ctx: DownstreamRequest,
  decision: D | null,
  outcome: ExchangeOutcome,
) => void;

/** An upstream failure as nginx logs it, for the owner's error log. */
export type UpstreamErrorLevel = 'crit' | 'error' | 'warn';

export interface UpstreamError {
  /**
   * `error` for the failure itself (`crit` for a connect() that failed at once otherwise than by
   * refusal, as nginx's), `warn` for a server taken out of its group for a while.
   */
  readonly level: UpstreamErrorLevel;
  /** nginx's text, e.g. `connect() failed (111: Connection refused) while connecting to upstream`. */
  readonly message: string;
  /** nginx's `upstream:` field: `http://`, the server (or the group, when none was live) and the URI sent. */
  readonly upstream: string;
}

/** Hears each upstream failure of a forwarded request (the client gets 502/504 or a cut response). */
export type UpstreamErrorCallback<D extends Decision = Decision> = (
  ctx: DownstreamRequest,
  decision: D,
  error: UpstreamError,
) => void;

/**
 * The one observer of a listener's exchanges: a client gone before its answer (nginx's 499), an
 * upstream failure in nginx's words, and every exchange once it is over.
 */
export interface ExchangeEvents<D extends Decision = Decision> {
  clientClosed: ClientClosedCallback<D>;
  upstreamError: UpstreamErrorCallback<D>;
  completed: CompletedCallback<D>;
}
