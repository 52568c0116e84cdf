/**
 * What a failure of a forwarded request comes to, as nginx decides it: whose fault it is, how far the
 * request had got (the log's `while …`), and whether another server is tried.
 *
 * Another server is tried as ngx_http_upstream_next decides, by the location's `proxy_next_upstream`
 * (nginx's default `error timeout`): a condition it names, each server of the group at most once, up
 * to `proxy_next_upstream_tries` and within `proxy_next_upstream_timeout` of the first try. Once the
 * request went out (connected), not for a non-idempotent method unless `non_idempotent` is named, nor
 * for a body that streamed: what went is gone (nginx's `proxy_request_buffering off` rule); a body
 * read whole first goes again, as nginx's buffered body does. An answer whose status the location
 * names (`http_404`, …) is dropped for the next server the same way, while one is left.
 */
import {
  NEXT_UPSTREAM_STATUSES,
  type NextUpstreamCondition,
  nextUpstreamAllows,
  type ProxyRules,
} from '../../../engine/http/proxy-rules.ts';
import {
  CONNECTING,
  READING_BODY,
  READING_HEADER,
  requestWentOut,
  SENDING,
  SSL_HANDSHAKING,
  type UpstreamFailure,
  type UpstreamPhase,
} from '../wire/upstream-failure.ts';

/**
 * Failures that are the client's, not the server's: nginx's answer for them (null: the server's).
 * - the request cannot go out as written (a target with a space, after a rewrite): 400;
 * - the client connection is gone (its close also ends the exchange; this is for an error that
 *   reaches the upstream client first): 499.
 * A client slow to send its body is not timed out at all: the client's head timer runs out during the
 * body only while the server takes nothing (a stall that is the server's), and the send timer waits
 * for the client (send-timeout.ts).
 */
export function clientsFailure(failure: UpstreamFailure, clientGone: boolean): 400 | 499 | null {
  if (failure.kind === 'unsendable') return 400;
  return clientGone ? 499 : null;
}

/** How far the request got with the server when it failed. */
export interface Progress {
  /** A connection was made (or taken from the cache). */
  readonly connected: boolean;
  /** The whole request went out. */
  readonly sent: boolean;
  /** The answer's status; 0 until its head arrived. */
  readonly status: number;
}

/** The phase nginx names in the log's `while …`. */
export function phaseOf(failure: UpstreamFailure, progress: Progress): UpstreamPhase {
  if (failure.duringHandshake) return SSL_HANDSHAKING;
  if (!progress.connected || failure.beforeConnected) return CONNECTING;
  if (!progress.sent) return SENDING;
  return progress.status === 0 ? READING_HEADER : READING_BODY;
}

/** What the rules read of the request and its tries so far. */
export interface TryFacts {
  readonly method: string | undefined;
  /** The request's body streamed to the server (it cannot be sent again). */
  readonly bodyStreamed: boolean;
  /** Servers tried so far, the one that failed included. */
  readonly tried: number;
  /** Servers in the group a request may try (not `down`; backups included). */
  readonly servers: number;
  /** The failed try went on a connection that had carried requests before. */
  readonly reusedConnection: boolean;
  /** The location's `proxy_next_upstream*` rules. */
  readonly rules: ProxyRules;
  /** ms since the first try began (`proxy_next_upstream_timeout`). */
  readonly elapsedMs: number;
}

/** Methods nginx does not send to another server once one had the request (1.9.13+). */
function nonIdempotent(method: string | undefined): boolean {
  return method === 'POST' || method === 'LOCK' || method === 'PATCH';
}

/** A try left: a server not tried yet, within `proxy_next_upstream_tries` and `_timeout`. */
function tryLeft(facts: TryFacts): boolean {
  const { nextUpstreamTries, nextUpstreamTimeoutMs } = facts.rules;
  const limit = nextUpstreamTries === 0 ? facts.servers : Math.min(facts.servers, nextUpstreamTries);
  return facts.tried < limit && (nextUpstreamTimeoutMs === 0 || facts.elapsedMs < nextUpstreamTimeoutMs);
}

/** Whether `condition`, met once the request went out (`sent`) or before, lets it go on at all. */
function goesOn(condition: NextUpstreamCondition, sent: boolean, facts: TryFacts): boolean {
  if (!nextUpstreamAllows(facts.rules, condition, sent && nonIdempotent(facts.method))) return false;
  return !(sent && facts.bodyStreamed);
}

/** Whether `failure` at `phase` sends the request to a server again. */
export function mayTryNext(failure: UpstreamFailure, phase: UpstreamPhase, facts: TryFacts): boolean {
  const condition = failure.invalidHeader ? 'invalid_header' : failure.timedOut ? 'timeout' : 'error';
  if (!goesOn(condition, requestWentOut(phase), facts)) return false;
  return tryLeft(facts) || againOnSameServer(failure, phase, facts);
}

/** ngx_http_upstream_test_next: whether an answer with `status` is dropped for the next server. */
export function nextAfterStatus(status: number, facts: TryFacts): boolean {
  if (!NEXT_UPSTREAM_STATUSES.has(status)) return false;
  return goesOn(`http_${status}` as NextUpstreamCondition, true, facts) && tryLeft(facts);
}

/**
 * An error (not a timeout) on a connection that had carried requests before — the server closed it
 * as the request went out — in a group of one server: nginx tries that server again
 * (ngx_http_upstream_next: `u->peer.cached` adds a try, and the round robin of one server does not
 * skip a tried one).
 */
export function againOnSameServer(failure: UpstreamFailure, phase: UpstreamPhase, facts: TryFacts): boolean {
  return facts.reusedConnection && requestWentOut(phase) && facts.servers === 1 && !failure.timedOut;
}
