/**
 * The request as it goes upstream, held by its exchange (proxy-exchange.ts): the headers sent, the
 * body, `proxy_send_timeout`, and how far each try got with its server (the log's `while …`). The
 * servers tried in turn and what a failure comes to — nginx's error-log lines, the server's failure
 * counted, the next server, else 502 or 504 — are forward-tries.ts's.
 *
 * It is the upstream client's handler: the request going out and failing is handled here; the
 * answer's head and body go on to the exchange (`ForwardOwner`), which relays them.
 *
 * Only the server's failures count against it. What the client does — a chunked body past
 * `client_max_body_size`, a client that goes away, a request that cannot go out as the client wrote
 * it (and, seen by the exchange, a broken body) — ends the exchange through `clientFault`, with no
 * error-log line about the server, no failure counted and no other server tried.
 */

import type { Socket } from 'node:net';
import { connectionCloses } from '../../../engine/http/proxy-headers.ts';
import { DEFAULT_PROXY_RULES } from '../../../engine/http/proxy-rules.ts';
import type { ClientBodyStream } from '../contract/client-request.ts';
import type { ClientFault, ProxyTarget } from '../contract/decision.ts';
import type { ProgressRecord } from '../contract/request-progress.ts';
import { UpstreamFailure } from '../wire/upstream-failure.ts';
import { bodyKeeping, ClientBody } from './client-body.ts';
import type { Progress } from './failure-rules.ts';
import {
  HTTP_SCHEME,
  HTTPS_SCHEME,
  proxyHostOf,
  type RequestHeaderFacts,
  upstreamRequestHeaders,
} from './forward-headers.ts';
import type { ForwardOwner } from './forward-owner.ts';
import { ForwardTries, NEXT_SERVER, type TryingForwarder } from './forward-tries.ts';
import { passedHeaders } from './pass-request.ts';
import { type PeerTls, peerTls } from './peer-tls.ts';
import { SendTimeout, type SendWatcher } from './send-timeout.ts';
import type { UpgradeHandler } from './upgrade-dispatch.ts';
import type { UpstreamHost, UpstreamPeer } from './upstream-group.ts';
import { UpstreamTries } from './upstream-tries.ts';

/** The client side of the request as the forwarder reads it: the head's facts and `$remote_addr`. */
export interface ForwardedRequest extends RequestHeaderFacts {
  readonly remoteAddr: string;
  readonly progress?: ProgressRecord; // where the tries are recorded (`$upstream_*`)
}

export class Forwarder implements TryingForwarder, UpgradeHandler, SendWatcher {
  /** The current try went on a connection that carried requests before (set by the connection). */
  reusedConnection = false;
  /** ForwardSending: `proxy_set_header Connection close` (set when it is forwarded). */
  closesConnection = false;

  readonly #owner: ForwardOwner;
  readonly #request: ForwardedRequest;
  /** The status of the upstream's answer; 0 until its head arrived. */
  #status = 0;
  #headers: string[] = [];
  /** The servers it tries and what their failures come to (forward-tries.ts); set when it is forwarded. */
  #tries: ForwardTries | null = null;
  #path = '';
  #readTimeoutMs: number | undefined = undefined;
  #connectTimeoutMs: number | undefined = undefined;
  /** `proxy_send_timeout` while a body goes out (send-timeout.ts). */
  #sendTimeout: SendTimeout | null = null;
  /** The whole request went to the upstream (the client's onRequestSent). */
  #sent = false;
  #abort: ((err?: Error) => void) | null = null;
  /** The client's body, read whole first or streamed (client-body.ts); null without one. */
  #body: ClientBody | null = null;
  /** TLS to an `https://` upstream; null: plain. */
  #tls: PeerTls | null = null;

  /** @internal ExchangeHandler: the request's upstream states, told what its connection sees. */
  get tryRecord(): UpstreamTries['record'] {
    return this.#tries?.tries.record;
  }

  /** The client's connection (the request's socket can be cleared once its body was read). */
  get clientSocket(): Socket | null {
    return this.#owner.clientSocket;
  }

  constructor(owner: ForwardOwner, request: ForwardedRequest) {
    this.#owner = owner;
    this.#request = request;
  }

  /**
   * Forwards to `target`'s group (the listener's default when it names none); 502 when there is none.
   * The headers for the server are made now, once the request is to go: a request answered or
   * refused never pays for them.
   */
  forward(listener: UpstreamHost, target: ProxyTarget): void {
    const group =
      target.address !== undefined
        ? listener.upstreams.addressed(target.address)
        : target.upstream === undefined
          ? listener.defaultGroup
          : listener.upstreams.get(target.upstream);
    if (!group) {
      this.#owner.upstreamFailed(502);
      return;
    }
    const req = this.#owner.req;
    const request = this.#request;
    const rules = target.proxyRules ?? DEFAULT_PROXY_RULES;
    // proxy_pass_request_body off: the body stays with the client connection, read and dropped there
    if (!rules.passRequestBody) request.hasBody = false;
    this.#path = target.path ?? req.url ?? '/';
    const scheme = target.tls === undefined ? HTTP_SCHEME : HTTPS_SCHEME;
    const tries = new UpstreamTries(group, request.progress, rules, scheme);
    this.#tries = new ForwardTries(this.#owner, this, tries, this.#path);
    // after the tries: `$proxy_host` in a value reads the group they recorded
    const passed = passedHeaders(req.rawHeaders, rules);
    const proxyHost = proxyHostOf(group.name, scheme);
    this.#headers = upstreamRequestHeaders(passed, target.proxyHeaders, proxyHost);
    if (target.proxyHeaders !== undefined) this.closesConnection = connectionCloses(target.proxyHeaders);
    this.#tls = target.tls === undefined ? null : peerTls(target.tls, proxyHost);
    this.#readTimeoutMs = target.readTimeoutMs;
    this.#connectTimeoutMs = target.connectTimeoutMs;
    if (request.hasBody) {
      this.#sendTimeout = new SendTimeout(target.sendTimeoutMs ?? group.sendTimeoutMs, this);
      const timers = this.#owner.timers;
      // a declared length over the limit was refused with the head; a chunked body is counted
      const maxBytes = request.contentLength === -1 ? (target.maxBodyBytes ?? 0) : 0;
      const body = new ClientBody(req, timers.bodyTimeoutMs, maxBytes, (code, fault) =>
        this.#clientFault(code, fault),
      );
      this.#body = body;
      const streams = timers.requestBuffering ? undefined : () => this.#tries!.dispatch();
      body.readWhole(
        bodyKeeping(timers, request.contentLength),
        request.progress,
        () => this.#bodyRead(),
        streams,
      );
      return;
    }
    this.#tries.dispatch();
  }

  /** The body was read whole: a file's length frames it, and the request goes. */
  #bodyRead(): void {
    const file = this.#body!.file;
    if (file !== null) this.#headers.push('content-length', String(file.bytes));
    if (this.#owner.forwarding) this.#tries!.dispatch();
  }

  /** The body read whole before the request went out: in memory, or its file read afresh; else null. */
  get bufferedBody(): Buffer | ClientBodyStream | null {
    return this.#body?.outgoing() ?? null;
  }

  /** What had come of a body that streams when the request went out. */
  get preread(): Buffer | null {
    return this.#body?.preread ?? null;
  }

  /**
   * The client is at fault (its body timed out, 408, or passed `client_max_body_size`, 413): the
   * exchange answers (or closes), the request to the server is abandoned.
   */
  #clientFault(code: number, fault: ClientFault | null): void {
    if (this.#owner.done) return;
    this.#owner.clientFault(code, fault);
    this.abandonUpstream();
  }

  /** Nothing more of the body is waited for; `over`: the request is, and a file the body went to goes. */
  stopBody(over = false): void {
    if (over) this.#body?.release();
    else this.#body?.stop();
  }

  /** @internal TryingForwarder: a try of `peer`, its progress from the start. */
  sendTo(peer: UpstreamPeer): void {
    this.#tries!.tries.take(peer);
    this.#abort = null;
    this.#sent = false;
    this.#status = 0;
    this.reusedConnection = false;
    this.#owner.send(this, peer, this.#path, this.#headers, this.#readTimeoutMs);
  }

  /** @internal TryingForwarder: how far the current try got. */
  get progress(): Progress {
    return { connected: this.#abort !== null, sent: this.#sent, status: this.#status };
  }

  /** @internal TryingForwarder: the body streamed to the server (it cannot be sent again). */
  get bodyStreamed(): boolean {
    return this.#request.hasBody && this.#body?.whole !== true;
  }

  /**
   * The exchange with the server is over (its response read, the request abandoned or failed, a
   * tunnel closed): the server's `max_conns` count drops, and a queued request may take it. Once.
   */
  upstreamEnded(): void {
    this.#tries?.tries.free();
  }

  /** The location's `proxy_connect_timeout` (absent: the upstream options'). */
  get connectTimeoutMs(): number | undefined {
    return this.#connectTimeoutMs;
  }

  /** TLS to an `https://` upstream (peer-tls.ts); null: plain. */
  get tls(): PeerTls | null {
    return this.#tls;
  }

  /** The client went away: the request leaves the queue, or the request to the server is aborted. */
  abortUpstream(): void {
    if (this.#tries?.leaveQueue() === true) return;
    this.#abort?.();
    this.upstreamEnded();
  }

  stopSendTimer(): void {
    this.#sendTimeout?.stop();
  }

  // the upstream client's handler (http1-client.ts): the request going out, and failures

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    if (this.#owner.done) {
      abort();
      return;
    }
    if (this.#request.hasBody) {
      this.#sendTimeout?.start();
      if (this.#body?.whole === false) this.#body.streaming();
    }
  }

  /** The client hands over each piece of the body it wrote. */
  onBodySent(chunk: Buffer): void {
    this.#sendTimeout?.progressed();
    const tooLarge = this.#body?.progressed(chunk) ?? null;
    if (tooLarge !== null) this.#clientFault(413, tooLarge);
  }

  /**
   * Ends the request to the server for a reason of the client's, once the exchange answered (it is
   * done, so the error the client reports for it is ignored).
   */
  abandonUpstream(): void {
    this.stopSendTimer();
    this.stopBody();
    this.#tries?.leaveQueue();
    this.#abort?.();
    this.upstreamEnded();
  }

  onRequestSent(): void {
    this.#sent = true;
    this.stopSendTimer();
    this.stopBody();
  }

  /** @internal SendWatcher: the server accepted nothing of the request for `proxy_send_timeout`. */
  sendTimedOut(): void {
    this.#abort?.(new UpstreamFailure('send-timeout'));
  }

  /** @internal SendWatcher: the request still goes out. */
  get stillSending(): boolean {
    return this.#owner.forwarding && !this.#sent;
  }

  /** @internal SendWatcher: the body going out (the client's, or its file's). */
  get body(): ClientBodyStream {
    return this.#body?.sending ?? this.#owner.req;
  }

  onError(err: Error & { code?: string; syscall?: string }): void {
    this.stopSendTimer();
    this.upstreamEnded();
    if (this.#owner.done) return;
    this.#tries!.failed(err);
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
    if (this.#tries!.dropsAnswer(statusCode)) {
      this.#status = statusCode;
      this.#abort?.(NEXT_SERVER);
      return false;
    }
    if (this.#owner.intercepted(statusCode, rawHeaders)) return false;
    this.#status = statusCode;
    // The head waits for the end of the read that brought it (a small response goes out in one write).
    this.#owner.answer.upstreamHead(statusCode, statusText, rawHeaders, resume);
    return true;
  }

  onReadEnd(): void {
    if (this.#owner.forwarding) this.#owner.answer.flushHead();
  }

  onData(chunk: Buffer): boolean {
    return this.#owner.answer.data(chunk);
  }

  onComplete(): void {
    this.stopSendTimer();
    this.upstreamEnded();
    if (this.#owner.done) return;
    this.#owner.answered();
    this.#owner.answer.complete();
  }

  onUpgrade(statusText: string, rawHeaders: readonly string[], socket: Socket, head: Buffer): void {
    if (this.#owner.upstreamUpgraded === undefined) socket.destroy();
    else this.#owner.upstreamUpgraded(statusText, rawHeaders, socket, head);
  }
}
