/**
 * The request as it goes upstream: the half of an exchange (proxy-exchange.ts) that faces the servers.
 * It holds the headers sent, tries the group's servers in turn, runs `proxy_send_timeout` while the
 * request goes out, knows how far the request got with a server (the log's `while …`), and decides what
 * a failure comes to: nginx's error-log lines (upstream-failure.ts), the server's failure counted, the
 * next server as nginx's `proxy_next_upstream error timeout` would try it, else 502 or 504.
 *
 * It is the exchange's base class, not a helper object, so a forwarded request stays one object. The
 * exchange says how the request is sent (`send`), answers with a page (`sendPage`) and hears the log
 * lines (`report`). The client callbacks about the request going out and failing are here; those that
 * relay the answer are the exchange's.
 *
 * Only the server's failures count against it. What the client does — a chunked body past
 * `client_max_body_size`, a client that goes away, a request that cannot go out as the client wrote
 * it (and, seen by the exchange, a broken body) — ends the exchange through `clientFault`, with no
 * error-log line about the server, no failure counted and no other server tried.
 */

import type { Socket } from 'node:net';
import { type ClientTimers, NGINX_CLIENT_TIMERS } from '../../engine/http/client-timers.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import { ClientBody } from './client-body.ts';
import type { ClientRequest } from './contract/client-request.ts';
import type { ClientResponse } from './contract/client-response.ts';
import type { ClientFault, ProxyTarget } from './decision.ts';
import { containFault, failpoint } from './fault-boundary.ts';
import { appendForwarded, type RequestHeaderFacts, upstreamRequestHeaders } from './forward-headers.ts';
import { UPGRADE_CONNECT_TIMEOUT, UPGRADE_READ_TIMEOUT } from './upgrade-dispatch.ts';
import {
  CONNECTING,
  isInvalidHeader,
  NO_LIVE_UPSTREAMS,
  QUEUE_FULL,
  QUEUE_TIMED_OUT,
  READING_BODY,
  READING_HEADER,
  SENDING,
  serverDisabled,
  UPSTREAM_SEND_TIMEOUT,
  type UpstreamPhase,
  upstreamErrorMessage,
} from './upstream-failure.ts';
import type { UpstreamGroup, UpstreamLookup, UpstreamPeer } from './upstream-group.ts';
import type { QueuedRequest } from './upstream-queue.ts';

/** The listener's upstream groups, which every exchange of it shares. */
export interface UpstreamHost {
  readonly upstreams: UpstreamLookup;
  readonly defaultGroup: UpstreamGroup | null;
}

/** Where an exchange is (`state`): the exchange moves it on; forwarding and failing are done here. */
export const NEW = 0;
export const HELD = 1;
export const FORWARDING = 2;
export const DONE = 3;

/** Connect failures: nothing of the request reached the server. */
const CONNECT_FAILURES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'UND_ERR_CONNECT_TIMEOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  UPGRADE_CONNECT_TIMEOUT,
]);
const TIMEOUTS: ReadonlySet<string> = new Set([
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  UPSTREAM_SEND_TIMEOUT,
  UPGRADE_CONNECT_TIMEOUT,
  UPGRADE_READ_TIMEOUT,
]);

/** The upstream client refused the request as given (a target it will not send): nothing went to the server. */
const REFUSED_BY_CLIENT_LIBRARY: ReadonlySet<string> = new Set([
  'UND_ERR_INVALID_ARG',
  'UND_ERR_NOT_SUPPORTED',
]);

/** Methods nginx does not send to another server once one had the request (1.9.13+). */
function nonIdempotent(method: string | undefined): boolean {
  return method === 'POST' || method === 'LOCK' || method === 'PATCH';
}

function onSendTimeout(request: UpstreamRequest): void {
  try {
    failpoint('timer');
    request.sendTimedOut();
  } catch (error) {
    const socket = request.clientSocket;
    containFault('timer', error, socket, socket);
  }
}

export abstract class UpstreamRequest implements RequestHeaderFacts, QueuedRequest {
  readonly req: ClientRequest;
  readonly res: ClientResponse;
  // RequestHeaderFacts, filled in by upstreamRequestHeaders
  host = '';
  hasBody = false;
  contentLength = -1;
  forwardedFor = '';
  /** The current try went on a connection that carried requests before (set by the connection). */
  reusedConnection = false;
  /** The client connection's timers of the request's location (set once the hook decided). */
  timers: ClientTimers = NGINX_CLIENT_TIMERS;

  protected state = NEW;
  /** The status of the upstream's answer; 0 until its head arrived. */
  protected status = 0;

  readonly #headers: string[];
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
    return this.req.socket ?? this.res.socket;
  }

  constructor(req: ClientRequest, res: ClientResponse, remoteAddr: string, scheme: string) {
    this.req = req;
    this.res = res;
    this.#headers = upstreamRequestHeaders(req.rawHeaders, this);
    appendForwarded(this.#headers, this, remoteAddr, scheme);
  }

  /** Sends the request to `peer`; the answer comes back through the handler callbacks. */
  protected abstract send(
    peer: UpstreamPeer,
    path: string,
    headers: string[],
    readTimeoutMs: number | undefined,
  ): void;

  /** Answers with nginx's page for `code`. */
  abstract sendPage(code: number): void;

  /** Hears an upstream failure in nginx's error-log words. */
  protected abstract report(level: 'error' | 'warn', message: string, upstream: string): void;

  /**
   * The client is at fault: `code` is nginx's answer (a closing code when there is none to send),
   * `fault` the log line (null: none). The upstream request, if any, is the caller's to abandon.
   */
  protected abstract clientFault(code: number, fault: ClientFault | null): void;

  /** Forwards to `target`'s group (the listener's default when it names none); 502 when there is none. */
  protected forward(listener: UpstreamHost, target: ProxyTarget): void {
    this.state = FORWARDING;
    const group =
      target.upstream === undefined ? listener.defaultGroup : listener.upstreams.get(target.upstream);
    if (!group) {
      this.sendPage(502);
      return;
    }
    this.#group = group;
    this.#path = target.path ?? this.req.url ?? '/';
    this.#readTimeoutMs = target.readTimeoutMs;
    this.#connectTimeoutMs = target.connectTimeoutMs;
    this.#sendTimeoutMs = target.sendTimeoutMs ?? group.sendTimeoutMs;
    if (this.hasBody && this.contentLength === -1) this.#maxBodyBytes = target.maxBodyBytes ?? 0;
    if (this.hasBody) {
      const timers = this.timers;
      const body = new ClientBody(this.req, timers.bodyTimeoutMs, () => this.#bodyTimedOut());
      this.#body = body;
      if (timers.requestBuffering && this.contentLength > 0 && this.contentLength <= timers.bodyBufferBytes) {
        body.readWhole(() => {
          if (this.state === FORWARDING) this.#dispatch();
        });
        return;
      }
    }
    this.#dispatch();
  }

  /** The body, when it was read whole before the request went out (client-body.ts); else null. */
  protected get bufferedBody(): Buffer | null {
    return this.#body?.buffered ?? null;
  }

  /** `client_body_timeout` passed with nothing of the body read: nginx's 408 (the connection closes). */
  #bodyTimedOut(): void {
    if (this.state === DONE) return;
    this.clientFault(408, null);
    this.abandonUpstream();
  }

  /** Nothing more of the body is waited for (the request ended, one way or another). */
  protected stopBody(): void {
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
        this.report('error', QUEUE_FULL, `http://${group.name}${this.#path}`);
        this.#fail(502);
        return;
      }
      // Every server tried is nginx's end of tries; servers left but all down is "no live upstreams".
      if (tried === null || tried.length < group.peers.length) {
        this.report('error', NO_LIVE_UPSTREAMS, `http://${group.name}${this.#path}`);
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
    this.send(peer, this.#path, this.#headers, this.#readTimeoutMs);
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
    if (this.state === DONE) return;
    this.report('error', QUEUE_TIMED_OUT, `http://${this.#group!.name}${this.#path}`);
    this.#fail(502);
  }

  /**
   * The exchange with the server is over (its response read, the request abandoned or failed, a
   * tunnel closed): the server's `max_conns` count drops, and a queued request may take it. Once.
   */
  protected upstreamEnded(): void {
    const peer = this.#holding;
    if (peer === null) return;
    this.#holding = null;
    this.#group!.free(peer);
  }

  /** The location's `proxy_connect_timeout` (absent: the upstream options'). */
  protected get connectTimeoutMs(): number | undefined {
    return this.#connectTimeoutMs;
  }

  /** The client went away: the request leaves the queue, or the request to the server is aborted. */
  protected abortUpstream(): void {
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

  protected stopSendTimer(): void {
    if (this.#sendTimer === null) return;
    clearTimeout(this.#sendTimer);
    this.#sendTimer = null;
  }

  // the upstream client's handler (http1-client.ts): the request going out, and failures

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    if (this.state === DONE) {
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
    this.clientFault(413, {
      level: 'error',
      message: `client intended to send too large chunked body: ${before}+${bytes} bytes`,
    });
    this.abandonUpstream();
  }

  /**
   * Ends the request to the server for a reason of the client's, once the exchange answered (it is
   * done, so the error the client reports for it is ignored).
   */
  protected abandonUpstream(): void {
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
    if (this.state !== FORWARDING || this.#sent) return;
    if (!this.req.isPaused()) {
      this.#sendTimer!.refresh();
      return;
    }
    this.#sendTimer = null;
    this.#abort?.(new LimitswitchError(UPSTREAM_SEND_TIMEOUT));
  }

  onError(err: Error & { code?: string; syscall?: string }): void {
    this.stopSendTimer();
    this.upstreamEnded();
    if (this.state === DONE) return;
    const code = err.code ?? '';
    if (this.#clientsDoing(code)) return;
    const group = this.#group!;
    const peer = this.#peer!;
    const phase = this.#phase(code);
    const timedOut = TIMEOUTS.has(code);
    const upstream = `${peer.origin}${this.#path}`;
    // Before the response head nginx hands the failure to ngx_http_upstream_next, which counts it
    // against the server's max_fails and may try the next server; once the head arrived the answer is
    // only cut short, and the server is not blamed.
    const beforeHead = phase !== READING_BODY;
    // nginx logs a failure as it meets it, but "upstream timed out" after freeing the server (which
    // warns when that takes the server out).
    if (!timedOut) this.report('error', upstreamErrorMessage(err, phase, false), upstream);
    if (beforeHead && group.markFailed(peer)) this.report('warn', serverDisabled(phase), upstream);
    if (timedOut) this.report('error', upstreamErrorMessage(err, phase, true), upstream);
    if (beforeHead && this.#mayTryNext(err, phase)) {
      // nginx gives a request one more try after an error on a cached connection (`peer.cached`):
      // in a group of one, the same server again (on another connection)
      if (!this.#againOnSameServer(err, phase)) {
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
  #clientsDoing(code: string): boolean {
    if (REFUSED_BY_CLIENT_LIBRARY.has(code)) {
      this.clientFault(400, null);
      return true;
    }
    const client = this.req.socket ?? this.res.socket;
    if (client?.destroyed === true) {
      this.clientFault(499, null);
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
  #mayTryNext(err: Error & { code?: string }, phase: UpstreamPhase): boolean {
    if (isInvalidHeader(err)) return false;
    // a body read whole first goes again, as nginx's buffered body does; a streamed one is gone
    const bodyGone = this.hasBody && this.bufferedBody === null;
    if (phase !== CONNECTING && (bodyGone || nonIdempotent(this.req.method))) return false;
    const tried = this.#tried === null ? 1 : this.#tried.length + 1;
    return tried < this.#group!.peers.length || this.#againOnSameServer(err, phase);
  }

  /**
   * An error (not a timeout) on a connection that had carried requests before — the server closed
   * it as the request went out — in a group of one server: nginx tries that server again
   * (ngx_http_upstream_next: `u->peer.cached` adds a try, and the round robin of one server does
   * not skip a tried one).
   */
  #againOnSameServer(err: Error & { code?: string }, phase: UpstreamPhase): boolean {
    return (
      this.reusedConnection &&
      phase !== CONNECTING &&
      this.#group!.peers.length === 1 &&
      !TIMEOUTS.has(err.code ?? '')
    );
  }

  /** nginx answers an upstream failure with its page, or cuts the connection once the head was sent. */
  #fail(code: number): void {
    if (!this.res.headersSent) {
      this.sendPage(code);
      return;
    }
    this.state = DONE;
    this.res.destroy();
  }

  /** How far the request got with the upstream, for the log's `while …`. */
  #phase(code: string): UpstreamPhase {
    if (this.#abort === null || CONNECT_FAILURES.has(code)) return CONNECTING;
    if (!this.#sent) return SENDING;
    return this.status === 0 ? READING_HEADER : READING_BODY;
  }
}
