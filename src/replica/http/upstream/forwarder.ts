/**
 * The request as it goes upstream: what an exchange (proxy-exchange.ts) holds to forward a request.
 * It builds the headers sent, tries the group's servers in turn, runs `proxy_send_timeout` while the
 * request goes out, knows how far the request got with a server (the log's `while …`), and decides what
 * a failure comes to: nginx's error-log lines (upstream-failure.ts), the server's failure counted, the
 * next server as nginx's `proxy_next_upstream error timeout` would try it, else 502 or 504.
 *
 * It is the upstream client's handler: the callbacks about the request going out and failing are
 * handled here; the answer's head and body go on to the exchange (`ForwardOwner`), which relays them.
 *
 * Only the server's failures count against it. What the client does — a chunked body past
 * `client_max_body_size`, a client that goes away, a request that cannot go out as the client wrote
 * it (and, seen by the exchange, a broken body) — ends the exchange through `clientFault`, with no
 * error-log line about the server, no failure counted and no other server tried.
 */

import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import type { ClientRequest } from '../contract/client-request.ts';
import type { ClientFault, ProxyTarget } from '../contract/decision.ts';
import { containFault, failpoint } from '../contract/fault-boundary.ts';
import {
  asUpstreamFailure,
  CONNECTING,
  NO_LIVE_UPSTREAMS,
  QUEUE_FULL,
  QUEUE_TIMED_OUT,
  READING_BODY,
  READING_HEADER,
  SENDING,
  serverDisabled,
  UpstreamFailure,
  type UpstreamPhase,
  upstreamErrorMessage,
} from '../wire/upstream-failure.ts';
import { ClientBody } from './client-body.ts';
import { appendForwarded, type RequestHeaderFacts, upstreamRequestHeaders } from './forward-headers.ts';
import type { UpgradeHandler } from './upgrade-dispatch.ts';
import type { UpstreamGroup, UpstreamLookup, UpstreamPeer } from './upstream-group.ts';
import type { QueuedRequest } from './upstream-queue.ts';

/** The listener's upstream groups, which every exchange of it shares. */
export interface UpstreamHost {
  readonly upstreams: UpstreamLookup;
  readonly defaultGroup: UpstreamGroup | null;
}

/** What the forwarder asks of the exchange it forwards for. */
export interface ForwardOwner {
  readonly req: ClientRequest;
  /** The client connection's timers of the request's location. */
  readonly timers: ClientTimers;
  /** The exchange is over: nothing more is sent, and failures are not answered. */
  readonly done: boolean;
  /** Still forwarding (a body that finished reading may go out). */
  readonly forwarding: boolean;
  readonly clientSocket: Socket | null;
  /** Sends the request to `peer`, with `forwarder` hearing how it goes. */
  send(
    forwarder: Forwarder,
    peer: UpstreamPeer,
    path: string,
    headers: string[],
    readTimeoutMs: number | undefined,
  ): void;
  /** No server answered: nginx's page (502, 504), or the answer cut when its head went out already. */
  upstreamFailed(code: number): void;
  /** An upstream failure in nginx's error-log words. */
  report(level: 'error' | 'warn', message: string, upstream: string): void;
  /**
   * The client is at fault: `code` is nginx's answer (a closing code when there is none to send),
   * `fault` the log line (null: none). The forwarder abandons the request to the server.
   */
  clientFault(code: number, fault: ClientFault | null): void;
  /** The answer's head; false: the exchange wants no answer. */
  upstreamHead(
    status: number,
    rawHeaders: readonly (Buffer | string)[],
    resume: () => void,
    statusText: string,
  ): boolean;
  /** The read that brought the head (or more of the body) is over. */
  upstreamReadEnd(): void;
  /** A piece of the answer's body; false: the client takes no more for now. */
  upstreamData(chunk: Buffer): boolean;
  upstreamComplete(): void;
  /** A 101 (upgrade requests only): the upstream connection is the exchange's now. */
  upstreamUpgraded?(statusText: string, rawHeaders: readonly string[], socket: Socket, head: Buffer): void;
}

/** Methods nginx does not send to another server once one had the request (1.9.13+). */
function nonIdempotent(method: string | undefined): boolean {
  return method === 'POST' || method === 'LOCK' || method === 'PATCH';
}

function onSendTimeout(request: Forwarder): void {
  try {
    failpoint('timer');
    request.sendTimedOut();
  } catch (error) {
    const socket = request.clientSocket;
    containFault('timer', error, socket, socket);
  }
}

export class Forwarder implements RequestHeaderFacts, QueuedRequest, UpgradeHandler {
  // RequestHeaderFacts, filled in by upstreamRequestHeaders when the request is forwarded
  host = '';
  hasBody = false;
  contentLength = -1;
  forwardedFor = '';
  /** The current try went on a connection that carried requests before (set by the connection). */
  reusedConnection = false;

  readonly #owner: ForwardOwner;
  readonly #remoteAddr: string;
  readonly #scheme: string;
  /** The status of the upstream's answer; 0 until its head arrived. */
  #status = 0;
  #headers: string[] = [];
  #group: UpstreamGroup | null = null;
  #peer: UpstreamPeer | null = null;
  /** The server this request is counted on (`max_conns`) until its exchange with it ends. */
  #holding: UpstreamPeer | null = null;
  /** Waiting in the group's queue. */
  #queued = false;
  /** Servers that failed this request: not picked again. */
  #tried: UpstreamPeer[] | null = null;
  #path = '';
  #readTimeoutMs: number | undefined = undefined;
  #connectTimeoutMs: number | undefined = undefined;
  #sendTimeoutMs = 0;
  /** Runs while a request body goes upstream: `proxy_send_timeout` since the last write. */
  #sendTimer: NodeJS.Timeout | null = null;
  /** The whole request went to the upstream (the client's onRequestSent). */
  #sent = false;
  #abort: ((err?: Error) => void) | null = null;
  /** `client_max_body_size` for a chunked body (0: none or not chunked), and what went out of it. */
  #maxBodyBytes = 0;
  #bodyBytes = 0;
  /** The client's body, read whole first or streamed (client-body.ts); null without one. */
  #body: ClientBody | null = null;

  /** The client's connection (the request's socket can be cleared once its body was read). */
  get clientSocket(): Socket | null {
    return this.#owner.clientSocket;
  }

  constructor(owner: ForwardOwner, remoteAddr: string, scheme: string) {
    this.#owner = owner;
    this.#remoteAddr = remoteAddr;
    this.#scheme = scheme;
  }

  /**
   * Forwards to `target`'s group (the listener's default when it names none); 502 when there is none.
   * The headers for the server are made now, once the request is to go: a request answered or
   * refused never pays for them.
   */
  forward(listener: UpstreamHost, target: ProxyTarget): void {
    const group =
      target.upstream === undefined ? listener.defaultGroup : listener.upstreams.get(target.upstream);
    if (!group) {
      this.#owner.upstreamFailed(502);
      return;
    }
    const req = this.#owner.req;
    this.#headers = upstreamRequestHeaders(req.rawHeaders, this);
    appendForwarded(this.#headers, this, this.#remoteAddr, this.#scheme);
    this.#group = group;
    this.#path = target.path ?? req.url ?? '/';
    this.#readTimeoutMs = target.readTimeoutMs;
    this.#connectTimeoutMs = target.connectTimeoutMs;
    this.#sendTimeoutMs = target.sendTimeoutMs ?? group.sendTimeoutMs;
    if (this.hasBody && this.contentLength === -1) this.#maxBodyBytes = target.maxBodyBytes ?? 0;
    if (this.hasBody) {
      const timers = this.#owner.timers;
      const body = new ClientBody(req, timers.bodyTimeoutMs, () => this.#bodyTimedOut());
      this.#body = body;
      if (timers.requestBuffering && this.contentLength > 0 && this.contentLength <= timers.bodyBufferBytes) {
        body.readWhole(() => {
          if (this.#owner.forwarding) this.#dispatch();
        });
        return;
      }
    }
    this.#dispatch();
  }

  /** The body, when it was read whole before the request went out (client-body.ts); else null. */
  get bufferedBody(): Buffer | null {
    return this.#body?.buffered ?? null;
  }

  /** `client_body_timeout` passed with nothing of the body read: nginx's 408 (the connection closes). */
  #bodyTimedOut(): void {
    if (this.#owner.done) return;
    this.#clientFault(408, null);
  }

  /** The client is at fault: the exchange answers (or closes), the request to the server is abandoned. */
  #clientFault(code: number, fault: ClientFault | null): void {
    this.#owner.clientFault(code, fault);
    this.abandonUpstream();
  }

  /** Nothing more of the body is waited for (the request ended, one way or another). */
  stopBody(): void {
    this.#body?.stop();
  }

  #dispatch(): void {
    const group = this.#group!;
    const tried = this.#tried;
    const peer = group.pick(tried);
    if (peer === null) {
      // A first try that finds no server waits in the group's queue, if it has one (Plus).
      if (tried === null && group.queue !== null) {
        if (group.queue.enqueue(this)) {
          this.#queued = true;
          return;
        }
        this.#owner.report('error', QUEUE_FULL, `http://${group.name}${this.#path}`);
        this.#fail(502);
        return;
      }
      // Every server tried is nginx's end of tries; servers left but all down is "no live upstreams".
      if (tried === null || tried.length < group.peers.length) {
        this.#owner.report('error', NO_LIVE_UPSTREAMS, `http://${group.name}${this.#path}`);
      }
      this.#fail(502);
      return;
    }
    this.#sendTo(peer);
  }

  #sendTo(peer: UpstreamPeer): void {
    this.#group!.take(peer);
    this.#holding = peer;
    this.#peer = peer;
    this.#abort = null;
    this.reusedConnection = false;
    this.#owner.send(this, peer, this.#path, this.#headers, this.#readTimeoutMs);
  }

  /** @internal QueuedRequest: a server may be free; the request takes it if the group picks one. */
  dequeued(): boolean {
    const peer = this.#group!.pick(null);
    if (peer === null) return false;
    this.#queued = false;
    this.#sendTo(peer);
    return true;
  }

  /** @internal QueuedRequest: no server came free within the queue's `timeout`. */
  queueTimedOut(): void {
    this.#queued = false;
    if (this.#owner.done) return;
    this.#owner.report('error', QUEUE_TIMED_OUT, `http://${this.#group!.name}${this.#path}`);
    this.#fail(502);
  }

  /**
   * The exchange with the server is over (its response read, the request abandoned or failed, a
   * tunnel closed): the server's `max_conns` count drops, and a queued request may take it. Once.
   */
  upstreamEnded(): void {
    const peer = this.#holding;
    if (peer === null) return;
    this.#holding = null;
    this.#group!.free(peer);
  }

  /** The location's `proxy_connect_timeout` (absent: the upstream options'). */
  get connectTimeoutMs(): number | undefined {
    return this.#connectTimeoutMs;
  }

  /** The client went away: the request leaves the queue, or the request to the server is aborted. */
  abortUpstream(): void {
    if (this.#leaveQueue()) return;
    this.#abort?.();
    this.upstreamEnded();
  }

  /** Out of the group's queue, if in it (true then). */
  #leaveQueue(): boolean {
    if (!this.#queued) return false;
    this.#queued = false;
    this.#group!.queue!.leave(this);
    return true;
  }

  stopSendTimer(): void {
    if (this.#sendTimer === null) return;
    clearTimeout(this.#sendTimer);
    this.#sendTimer = null;
  }

  // the upstream client's handler (http1-client.ts): the request going out, and failures

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    if (this.#owner.done) {
      abort();
      return;
    }
    if (this.hasBody) {
      this.#sendTimer = setTimeout(onSendTimeout, this.#sendTimeoutMs, this);
      if (this.bufferedBody === null) this.#body?.streaming();
    }
  }

  /** The client hands over each piece of the body it wrote. */
  onBodySent(chunk: Buffer): void {
    this.#sendTimer?.refresh();
    this.#body?.progressed();
    if (this.#maxBodyBytes === 0) return;
    const before = this.#bodyBytes;
    const bytes = chunk.length;
    this.#bodyBytes += bytes;
    if (this.#bodyBytes <= this.#maxBodyBytes) return;
    // nginx checks each chunk's declared size as it reads it (bytes so far + this chunk); the
    // parser hands over data, not chunk sizes, so the second figure is the piece that passed.
    this.#clientFault(413, {
      level: 'error',
      message: `client intended to send too large chunked body: ${before}+${bytes} bytes`,
    });
  }

  /**
   * Ends the request to the server for a reason of the client's, once the exchange answered (it is
   * done, so the error the client reports for it is ignored).
   */
  abandonUpstream(): void {
    this.stopSendTimer();
    this.stopBody();
    this.#leaveQueue();
    this.#abort?.();
    this.upstreamEnded();
  }

  onRequestSent(): void {
    this.#sent = true;
    this.stopSendTimer();
    this.stopBody();
  }

  /**
   * @internal `proxy_send_timeout` passed since the last write of the request. As in nginx it counts
   * only while the upstream accepts nothing (the client pauses the body until the socket drains); a wait
   * for more of the client's body is not the upstream's fault.
   */
  sendTimedOut(): void {
    if (!this.#owner.forwarding || this.#sent) return;
    if (!this.#owner.req.isPaused()) {
      this.#sendTimer!.refresh();
      return;
    }
    this.#sendTimer = null;
    this.#abort?.(new UpstreamFailure('send-timeout'));
  }

  onError(err: Error & { code?: string; syscall?: string }): void {
    this.stopSendTimer();
    this.upstreamEnded();
    if (this.#owner.done) return;
    const failure = asUpstreamFailure(err);
    if (this.#clientsDoing(failure)) return;
    const group = this.#group!;
    const peer = this.#peer!;
    const phase = this.#phase(failure);
    const timedOut = failure.timedOut;
    const upstream = `${peer.origin}${this.#path}`;
    // Before the response head nginx hands the failure to ngx_http_upstream_next, which counts it
    // against the server's max_fails and may try the next server; once the head arrived the answer is
    // only cut short, and the server is not blamed.
    const beforeHead = phase !== READING_BODY;
    // nginx logs a failure as it meets it, but "upstream timed out" after freeing the server (which
    // warns when that takes the server out).
    if (!timedOut) this.#owner.report('error', upstreamErrorMessage(failure, phase), upstream);
    if (beforeHead && group.markFailed(peer)) this.#owner.report('warn', serverDisabled(phase), upstream);
    if (timedOut) this.#owner.report('error', upstreamErrorMessage(failure, phase), upstream);
    if (beforeHead && this.#mayTryNext(failure, phase)) {
      // nginx gives a request one more try after an error on a cached connection (`peer.cached`):
      // in a group of one, the same server again (on another connection)
      if (!this.#againOnSameServer(failure, phase)) {
        this.#tried ??= [];
        this.#tried.push(peer);
      }
      this.#sent = false;
      this.#dispatch();
      return;
    }
    this.#fail(timedOut ? 504 : 502);
  }

  /**
   * Failures that are the client's, not the server's: handled here, without a word against the server.
   * - the request cannot go out as written (a target with a space, after a rewrite): 400;
   * - the client connection is gone (its close also ends the exchange; this is for an error that
   *   reaches the upstream client first).
   * A client slow to send its body is not timed out at all: the client's head timer runs out during the
   * body only while the server takes nothing (a stall that is the server's), and the send timer
   * waits for the client (`sendTimedOut`).
   */
  #clientsDoing(failure: UpstreamFailure): boolean {
    if (failure.kind === 'unsendable') {
      this.#owner.clientFault(400, null);
      return true;
    }
    if (this.#owner.clientSocket?.destroyed === true) {
      this.#owner.clientFault(499, null);
      return true;
    }
    return false;
  }

  /**
   * nginx's defaults, `proxy_next_upstream error timeout` and `proxy_next_upstream_tries 0`: every
   * server of the group once, after an error or a timeout (not a head it rejected). Once the request
   * went out (connected), not for a non-idempotent method, nor for a body: the replica streams bodies,
   * so what went is gone (nginx's `proxy_request_buffering off` rule).
   */
  #mayTryNext(failure: UpstreamFailure, phase: UpstreamPhase): boolean {
    if (failure.invalidHeader) return false;
    // a body read whole first goes again, as nginx's buffered body does; a streamed one is gone
    const bodyGone = this.hasBody && this.bufferedBody === null;
    if (phase !== CONNECTING && (bodyGone || nonIdempotent(this.#owner.req.method))) return false;
    const tried = this.#tried === null ? 1 : this.#tried.length + 1;
    return tried < this.#group!.peers.length || this.#againOnSameServer(failure, phase);
  }

  /**
   * An error (not a timeout) on a connection that had carried requests before — the server closed
   * it as the request went out — in a group of one server: nginx tries that server again
   * (ngx_http_upstream_next: `u->peer.cached` adds a try, and the round robin of one server does
   * not skip a tried one).
   */
  #againOnSameServer(failure: UpstreamFailure, phase: UpstreamPhase): boolean {
    return (
      this.reusedConnection && phase !== CONNECTING && this.#group!.peers.length === 1 && !failure.timedOut
    );
  }

  #fail(code: number): void {
    this.#owner.upstreamFailed(code);
  }

  /** How far the request got with the upstream, for the log's `while …`. */
  #phase(failure: UpstreamFailure): UpstreamPhase {
    if (this.#abort === null || failure.beforeConnected) return CONNECTING;
    if (!this.#sent) return SENDING;
    return this.#status === 0 ? READING_HEADER : READING_BODY;
  }

  // the answer, handed on to the exchange

  onHeaders(
    statusCode: number,
    rawHeaders: readonly (Buffer | string)[],
    resume: () => void,
    statusText: string,
  ): boolean {
    if (statusCode < 200) return true;
    if (this.#owner.done) return false;
    this.#status = statusCode;
    return this.#owner.upstreamHead(statusCode, rawHeaders, resume, statusText);
  }

  onReadEnd(): void {
    this.#owner.upstreamReadEnd();
  }

  onData(chunk: Buffer): boolean {
    return this.#owner.upstreamData(chunk);
  }

  onComplete(): void {
    this.stopSendTimer();
    this.upstreamEnded();
    if (this.#owner.done) return;
    this.#owner.upstreamComplete();
  }

  onUpgrade(statusText: string, rawHeaders: readonly string[], socket: Socket, head: Buffer): void {
    if (this.#owner.upstreamUpgraded === undefined) socket.destroy();
    else this.#owner.upstreamUpgraded(statusText, rawHeaders, socket, head);
  }
}
