/**
 * The tries of one forwarded request and what each failure comes to, as ngx_http_upstream_next
 * decides: the next server the group picks (or, for a first try, a wait in its queue, Plus), a failed
 * try's error-log lines and counted failure (failed-try.ts), another server when `proxy_next_upstream`
 * allows it (failure-rules.ts), else 502 or 504. The forwarder (forwarder.ts) sends each try and tells
 * how it went; which servers were picked is upstream-tries.ts's.
 */

import type { Socket } from 'node:net';
import {
  asUpstreamFailure,
  QUEUE_TIMED_OUT,
  READING_HEADER,
  serverDisabled,
  UpstreamFailure,
} from '../wire/upstream-failure.ts';
import { reportFailedTry } from './failed-try.ts';
import {
  againOnSameServer,
  clientsFailure,
  mayTryNext,
  nextAfterStatus,
  type Progress,
  phaseOf,
  type TryFacts,
} from './failure-rules.ts';
import { upstreamLogText } from './forward-headers.ts';
import type { ForwardOwner } from './forward-owner.ts';
import type { UpstreamPeer } from './upstream-group.ts';
import type { QueuedRequest } from './upstream-queue.ts';
import type { UpstreamTries } from './upstream-tries.ts';

/** The abort of a try whose answer `proxy_next_upstream http_NNN` drops. */
export const NEXT_SERVER = new UpstreamFailure('aborted', 'the next upstream is tried');

/** What the tries read of the forwarder's current try, and how they send a new one. */
export interface TryingForwarder {
  readonly clientSocket: Socket | null;
  /** How far the current try got. */
  readonly progress: Progress;
  /** The current try went on a connection that carried requests before. */
  readonly reusedConnection: boolean;
  /** The request's body streamed to the server (it cannot be sent again). */
  readonly bodyStreamed: boolean;
  /** Sends the request to `peer`: a new try, its progress from the start. */
  sendTo(peer: UpstreamPeer): void;
}

export class ForwardTries implements QueuedRequest {
  readonly tries: UpstreamTries;
  readonly #owner: ForwardOwner;
  readonly #forwarder: TryingForwarder;
  /** The request's path upstream, for the log's `upstream: "…"`. */
  readonly #path: string;

  constructor(owner: ForwardOwner, forwarder: TryingForwarder, tries: UpstreamTries, path: string) {
    this.#owner = owner;
    this.#forwarder = forwarder;
    this.tries = tries;
    this.#path = path;
  }

  get clientSocket(): Socket | null {
    return this.#forwarder.clientSocket;
  }

  /** The next server takes the request; else it waits in the group's queue, or nginx's 502. */
  dispatch(): void {
    const tries = this.tries;
    const next = tries.next(this);
    if (next === 'queued') return;
    if ('message' in next) {
      if (next.message !== null) this.#owner.report('error', next.message, this.#groupUrl);
      this.#owner.upstreamFailed(502);
      return;
    }
    this.#forwarder.sendTo(next);
  }

  /** @internal QueuedRequest: a server may be free; the request takes it if the group picks one. */
  dequeued(): boolean {
    const peer = this.tries.dequeued();
    if (peer === null) return false;
    this.#forwarder.sendTo(peer);
    return true;
  }

  /** @internal QueuedRequest: no server came free within the queue's `timeout`. */
  queueTimedOut(): void {
    const tries = this.tries;
    tries.queueTimedOut();
    if (this.#owner.done) return;
    this.#owner.report('error', QUEUE_TIMED_OUT, this.#groupUrl);
    this.#owner.upstreamFailed(502);
  }

  /** Out of the group's queue, if in it (true then). */
  leaveQueue(): boolean {
    return this.tries.leaveQueue(this);
  }

  /** The log's `upstream: "…"` when no server was picked: the group, as the `proxy_pass` URL names it. */
  get #groupUrl(): string {
    return upstreamLogText(this.tries.scheme, this.tries.group.name, this.#path);
  }

  /** Whether an answer with `status` is dropped for the next server (`proxy_next_upstream http_NNN`). */
  dropsAnswer(status: number): boolean {
    return nextAfterStatus(status, this.#facts());
  }

  /** The current try failed with `err` (the exchange is not over yet). */
  failed(err: Error): void {
    const progress = this.#forwarder.progress;
    if (err === NEXT_SERVER) {
      this.#afterStatus(progress.status);
      return;
    }
    const failure = asUpstreamFailure(err);
    const clients = clientsFailure(failure, this.#owner.clientSocket?.destroyed === true);
    if (clients !== null) {
      this.#owner.clientFault(clients, null);
      return;
    }
    const tries = this.tries;
    const phase = phaseOf(failure, progress);
    // before the response head nginx hands the failure to ngx_http_upstream_next, which may try the
    // next server
    const beforeHead = reportFailedTry(this.#owner, tries, failure, phase, this.#path);
    const facts = this.#facts();
    if (beforeHead && mayTryNext(failure, phase, facts)) {
      // nginx gives a request one more try after an error on a cached connection (`peer.cached`):
      // in a group of one, the same server again (on another connection)
      tries.failed(againOnSameServer(failure, phase, facts));
      this.dispatch();
      return;
    }
    this.#owner.upstreamFailed(failure.timedOut ? 504 : 502);
  }

  /**
   * `proxy_next_upstream http_NNN` dropped the answer: its server's failure is counted (not for 403 and
   * 404, nginx's NGX_PEER_NEXT), the next server is tried.
   */
  #afterStatus(status: number): void {
    const tries = this.tries;
    const peer = tries.peer!;
    if (status !== 403 && status !== 404 && tries.group.markFailed(peer))
      this.#owner.report(
        'warn',
        serverDisabled(READING_HEADER),
        upstreamLogText(tries.scheme, peer.server, this.#path),
      );
    tries.failed(false);
    this.dispatch();
  }

  /** What the next-server rules read of this request (failure-rules.ts). */
  #facts(): TryFacts {
    const tries = this.tries;
    return {
      method: this.#owner.req.method,
      bodyStreamed: this.#forwarder.bodyStreamed,
      tried: tries.count,
      servers: tries.group.tries,
      reusedConnection: this.#forwarder.reusedConnection,
      rules: tries.rules,
      elapsedMs: tries.elapsedMs,
    };
  }
}
