/**
 * What a failure of a forwarded request comes to, as nginx decides it: whose fault it is, how far the
 * request had got (the log's `while …`), and whether another server is tried.
 *
 * nginx's defaults for trying another server after a failure, `proxy_next_upstream error timeout`
 * and `proxy_next_upstream_tries 0`: every server of the group once, after an error or a timeout (not
 * a head it rejected). Once the request went out (connected), not for a non-idempotent method, nor
 * for a body that streamed: what went is gone (nginx's `proxy_request_buffering off` rule); a body
 * read whole first goes again, as nginx's buffered body does.
 */
import {
  CONNECTING,
  READING_BODY,
  READING_HEADER,
  SENDING,
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
}

/** Methods nginx does not send to another server once one had the request (1.9.13+). */
function nonIdempotent(method: string | undefined): boolean {
  return method === 'POST' || method === 'LOCK' || method === 'PATCH';
}

/** Whether `failure` at `phase` sends the request to a server again. */
export function mayTryNext(failure: UpstreamFailure, phase: UpstreamPhase, facts: TryFacts): boolean {
  if (failure.invalidHeader) return false;
  if (phase !== CONNECTING && (facts.bodyStreamed || nonIdempotent(facts.method))) return false;
  return facts.tried < facts.servers || againOnSameServer(failure, phase, facts);
}

/**
 * An error (not a timeout) on a connection that had carried requests before — the server closed it
 * as the request went out — in a group of one server: nginx tries that server again
 * (ngx_http_upstream_next: `u->peer.cached` adds a try, and the round robin of one server does not
 * skip a tried one).
 */
export function againOnSameServer(failure: UpstreamFailure, phase: UpstreamPhase, facts: TryFacts): boolean {
  return facts.reusedConnection && phase !== CONNECTING && facts.servers === 1 && !failure.timedOut;
}
