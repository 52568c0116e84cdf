/**
 * One request on the data path, from decision to the last byte. The exchange is the `RequestContext`
 * the hook sees and also the undici dispatch handler, so a forwarded request costs one object.
 *
 * It uses undici's raw handler callbacks (`onConnect`/`onHeaders`/`onData`/`onComplete`/`onError`):
 * they hand over the response head as raw buffers and the body as chunks, which are written straight
 * into the client response; the object-header variants parse every header first, which costs
 * throughput here for nothing.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type {
  ClientClosedCallback,
  Decision,
  DelayDecision,
  ProxyTarget,
  RejectDecision,
  RequestContext,
  ReturnDecision,
  UpstreamErrorCallback,
} from './decision.ts';
import { appendForwarded, clientResponseHeaders, upstreamRequestHeaders } from './forward-headers.ts';
import { closesConnection, errorPage, statusReason, wireStatus } from './status-pages.ts';
import { UPGRADE_CONNECT_TIMEOUT, UPGRADE_READ_TIMEOUT } from './upgrade-dispatch.ts';
import {
  CONNECTING,
  NO_LIVE_UPSTREAMS,
  READING_BODY,
  READING_HEADER,
  SENDING,
  serverDisabled,
  UPSTREAM_SEND_TIMEOUT,
  type UpstreamPhase,
  UpstreamSendTimeoutError,
  upstreamErrorMessage,
} from './upstream-failure.ts';
import type { UpstreamGroup, UpstreamPeer, UpstreamSet } from './upstream-group.ts';

/** What every exchange of one listener shares. */
export interface ExchangeHost<D extends Decision> {
  readonly upstreams: UpstreamSet;
  readonly defaultGroup: UpstreamGroup | null;
  readonly scheme: string;
  readonly onClientClosed: ClientClosedCallback<D> | null;
  /** Hears each upstream failure, in nginx's error-log words. */
  readonly onUpstreamError: UpstreamErrorCallback<D> | null;
  /** True once a graceful close began: answers say `Connection: close`. */
  readonly closing: boolean;
  /** Requests currently held by a delay. */
  held: number;
  /** Called when a held or forwarded exchange ends (for graceful close). */
  exchangeEnded(): void;
}

const NEW = 0;
const HELD = 1;
const FORWARDING = 2;
const DONE = 3;

/** Connect failures: the request never reached the server, so another server may be tried. */
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

const kExchange = Symbol('exchange');
type TrackedResponse = ServerResponse & { [kExchange]?: Exchange<Decision> };

function onResponseClose(this: TrackedResponse): void {
  this[kExchange]?.responseClosed();
}

function flushHead(exchange: { flushHead(): void }): void {
  exchange.flushHead();
}

function onHoldElapsed(exchange: { holdElapsed(): void }): void {
  exchange.holdElapsed();
}

function onSendTimeout(exchange: { sendTimedOut(): void }): void {
  exchange.sendTimedOut();
}

export class Exchange<D extends Decision> implements RequestContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly remoteAddr: string;
  readonly remotePort: number;
  readonly realipRemoteAddr: string;
  readonly realipRemotePort: number;
  // RequestHeaderFacts, filled in by upstreamRequestHeaders
  host = '';
  hasBody = false;
  forwardedFor = '';

  readonly #host: ExchangeHost<D>;
  readonly #headers: string[];
  #state = NEW;
  #decision: D | null = null;
  #group: UpstreamGroup | null = null;
  #peer: UpstreamPeer | null = null;
  #tried: UpstreamPeer[] | null = null;
  #path = '';
  #readTimeoutMs: number | undefined = undefined;
  #connectTimeoutMs: number | undefined = undefined;
  #sendTimeoutMs = 0;
  /** Runs while a request body goes upstream: `proxy_send_timeout` since the last write. */
  #sendTimer: NodeJS.Timeout | null = null;
  /** The whole request went to the upstream (undici's onRequestSent). */
  #sent = false;
  #abort: ((err?: Error) => void) | null = null;
  #resume: (() => void) | null = null;
  #status = 0;
  #statusText = '';
  #responseHeaders: string[] | null = null;
  /** The first body chunk, held until the head goes out with it. */
  #pending: Buffer | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(
    host: ExchangeHost<D>,
    req: IncomingMessage,
    res: ServerResponse,
    peerAddr: string,
    peerPort: number,
    remoteAddr: string,
    remotePort: number,
  ) {
    this.#host = host;
    this.req = req;
    this.res = res;
    this.realipRemoteAddr = peerAddr;
    this.realipRemotePort = peerPort;
    this.remoteAddr = remoteAddr;
    this.remotePort = remotePort;
    this.#headers = upstreamRequestHeaders(req.rawHeaders, this);
    appendForwarded(this.#headers, this, remoteAddr, host.scheme);
  }

  /** Acts on the hook's answer. */
  run(decision: D): void {
    this.#decision = decision;
    switch (decision.action) {
      case 'pass':
      case 'proxy':
        this.#track();
        this.#forward(decision);
        return;
      case 'delay':
        this.#hold(decision);
        return;
      case 'reject':
        this.#reject(decision);
        return;
      case 'return':
        this.#answer(decision);
        return;
    }
  }

  /** Answers with nginx's page for `code` (also used for a hook that threw: 500). */
  sendPage(code: number, retryAfterS?: number): void {
    if (closesConnection(code)) {
      this.#state = DONE;
      this.req.socket.destroy();
      return;
    }
    const page = errorPage(code);
    const headers =
      page === null
        ? ['content-length', '0']
        : ['content-type', 'text/html', 'content-length', `${page.length}`];
    if (retryAfterS !== undefined) headers.push('retry-after', `${retryAfterS}`);
    this.#end(wireStatus(code), headers, page);
  }

  #end(status: number, headers: string[], body: Buffer | string | null): void {
    this.#state = DONE;
    const res = this.res;
    if (this.#host.closing) res.shouldKeepAlive = false;
    res.writeHead(status, statusReason(status), headers);
    if (body === null) res.end();
    else res.end(body);
  }

  #reject(decision: RejectDecision): void {
    this.sendPage(decision.code, decision.retryAfterS);
  }

  #answer(decision: ReturnDecision): void {
    if (decision.body === undefined && !decision.headers) {
      this.sendPage(decision.code);
      return;
    }
    const headers: string[] = [];
    let hasType = false;
    if (decision.headers) {
      for (const [name, value] of Object.entries(decision.headers)) {
        if (name.toLowerCase() === 'content-type') hasType = true;
        headers.push(name, value);
      }
    }
    let body: Buffer | string | null = decision.body ?? null;
    if (body === null) {
      body = errorPage(decision.code);
      if (body !== null && !hasType) headers.push('content-type', 'text/html');
    } else if (!hasType) {
      headers.push('content-type', 'text/plain');
    }
    headers.push('content-length', `${body === null ? 0 : Buffer.byteLength(body)}`);
    this.#end(decision.code, headers, body);
  }

  /** Watches the response so a vanished client is noticed (held or forwarding). */
  #track(): void {
    (this.res as TrackedResponse)[kExchange] = this as unknown as Exchange<Decision>;
    this.res.on('close', onResponseClose);
  }

  #hold(decision: DelayDecision): void {
    this.#state = HELD;
    this.#host.held++;
    this.#track();
    this.#timer = setTimeout(onHoldElapsed, decision.delayMs, this);
  }

  /** @internal the delay timer fired. */
  holdElapsed(): void {
    this.#timer = null;
    if (this.#state !== HELD) return;
    this.#host.held--;
    this.#forward(this.#decision as DelayDecision);
  }

  #forward(target: ProxyTarget): void {
    this.#state = FORWARDING;
    const group =
      target.upstream === undefined ? this.#host.defaultGroup : this.#host.upstreams.get(target.upstream);
    if (!group) {
      this.sendPage(502);
      return;
    }
    this.#group = group;
    this.#path = target.path ?? this.req.url ?? '/';
    this.#readTimeoutMs = target.readTimeoutMs;
    this.#connectTimeoutMs = target.connectTimeoutMs;
    this.#sendTimeoutMs = target.sendTimeoutMs ?? group.sendTimeoutMs;
    this.#dispatch();
  }

  #dispatch(): void {
    const group = this.#group!;
    const tried = this.#tried;
    const peer = group.pick(tried);
    if (peer === null) {
      // Every server tried is nginx's end of tries; servers left but all down is "no live upstreams".
      if (tried === null || tried.length < group.peers.length) {
        this.#report('error', NO_LIVE_UPSTREAMS, `http://${group.name}${this.#path}`);
      }
      this.#fail(502);
      return;
    }
    this.#peer = peer;
    this.#abort = null;
    this.send(peer, this.#path, this.#headers, this.#readTimeoutMs);
  }

  /** Sends the request to `peer`; the answer comes back through the handler callbacks below. */
  protected send(
    peer: UpstreamPeer,
    path: string,
    headers: string[],
    readTimeoutMs: number | undefined,
  ): void {
    peer.poolFor(this.#connectTimeoutMs).dispatch(
      {
        path,
        method: this.req.method ?? 'GET',
        headers,
        body: this.hasBody ? this.req : null,
        headersTimeout: readTimeoutMs,
        bodyTimeout: readTimeoutMs,
      },
      this,
    );
  }

  /** The location's `proxy_connect_timeout` (absent: the upstream options'). */
  protected get connectTimeoutMs(): number | undefined {
    return this.#connectTimeoutMs;
  }

  /** Held, or waiting for the upstream's answer (no byte of it sent yet). */
  protected get waiting(): boolean {
    return this.#state === HELD || (this.#state === FORWARDING && !this.res.headersSent);
  }

  /** The connection leaves the exchange (a 101): done, no 499, no page. False if already done. */
  protected handOver(): boolean {
    if (this.#state !== FORWARDING) return false;
    this.#state = DONE;
    return true;
  }

  /** @internal `res` emitted 'close': the response ended, or the client went away before that. */
  responseClosed(): void {
    const state = this.#state;
    this.#state = DONE;
    this.#stopSendTimer();
    if (state === HELD || state === FORWARDING) {
      if (this.#timer !== null) {
        clearTimeout(this.#timer);
        this.#timer = null;
        this.#host.held--;
      }
      this.#abort?.();
      this.#host.onClientClosed?.(this, this.#decision!, state === HELD ? 'delay' : 'proxy');
    }
    this.#host.exchangeEnded();
  }

  /** nginx answers an upstream failure with its page, or cuts the connection once the head was sent. */
  #fail(code: number): void {
    if (!this.res.headersSent) {
      this.sendPage(code);
      return;
    }
    this.#state = DONE;
    this.res.destroy();
  }

  // undici dispatch handler

  onConnect(abort: (err?: Error) => void): void {
    this.#abort = abort;
    if (this.#state === DONE) {
      abort();
      return;
    }
    if (this.hasBody) this.#sendTimer = setTimeout(onSendTimeout, this.#sendTimeoutMs, this);
  }

  onBodySent(): void {
    this.#sendTimer?.refresh();
  }

  onRequestSent(): void {
    this.#sent = true;
    this.#stopSendTimer();
  }

  /**
   * @internal `proxy_send_timeout` passed since the last write of the request. As in nginx it counts
   * only while the upstream accepts nothing (undici pauses the body until the socket drains); a wait
   * for more of the client's body is not the upstream's fault.
   */
  sendTimedOut(): void {
    if (this.#state !== FORWARDING || this.#sent) return;
    if (!this.req.isPaused()) {
      this.#sendTimer!.refresh();
      return;
    }
    this.#sendTimer = null;
    this.#abort?.(new UpstreamSendTimeoutError());
  }

  #stopSendTimer(): void {
    if (this.#sendTimer === null) return;
    clearTimeout(this.#sendTimer);
    this.#sendTimer = null;
  }

  onHeaders(
    statusCode: number,
    rawHeaders: readonly (Buffer | string)[],
    resume: () => void,
    statusText: string,
  ): boolean {
    if (statusCode < 200) return true;
    if (this.#state === DONE) return false;
    this.#resume = resume;
    this.#status = statusCode;
    this.#statusText = statusText;
    this.#responseHeaders = clientResponseHeaders(rawHeaders);
    // The head waits for the end of this parser run: a small response then goes out head, body and
    // all in one write. A head with no body yet still leaves on the next tick.
    process.nextTick(flushHead, this);
    return true;
  }

  /** @internal the parser run that delivered the head is over. */
  flushHead(): void {
    if (this.#state !== FORWARDING || this.res.headersSent) return;
    this.#writeHead();
    const pending = this.#pending;
    if (pending !== null) {
      this.#pending = null;
      this.res.write(pending);
    }
  }

  #writeHead(): void {
    const res = this.res;
    if (this.#host.closing) res.shouldKeepAlive = false;
    res.writeHead(this.#status, this.#statusText || statusReason(this.#status), this.#responseHeaders!);
  }

  onData(chunk: Buffer): boolean {
    const res = this.res;
    if (!res.headersSent) {
      if (this.#pending === null) {
        this.#pending = chunk;
        return true;
      }
      this.flushHead();
    }
    if (res.write(chunk)) return true;
    res.once('drain', this.#resume!);
    return false;
  }

  onComplete(): void {
    this.#stopSendTimer();
    if (this.#state === DONE) return;
    this.#state = DONE;
    const res = this.res;
    if (!res.headersSent) this.#writeHead();
    const pending = this.#pending;
    if (pending === null) {
      res.end();
    } else {
      this.#pending = null;
      res.end(pending);
    }
  }

  onError(err: Error & { code?: string; syscall?: string }): void {
    this.#stopSendTimer();
    if (this.#state === DONE) return;
    const code = err.code ?? '';
    const group = this.#group!;
    const peer = this.#peer!;
    const phase = this.#phase(code);
    const timedOut = TIMEOUTS.has(code);
    const upstream = `${peer.origin}${this.#path}`;
    const connectFailed = !this.res.headersSent && CONNECT_FAILURES.has(code);
    // nginx logs a failure as it meets it, but "upstream timed out" after freeing the server (which
    // warns when that takes the server out).
    if (!timedOut) this.#report('error', upstreamErrorMessage(err, phase, false), upstream);
    if (connectFailed && group.markFailed(peer)) this.#report('warn', serverDisabled(phase), upstream);
    if (timedOut) this.#report('error', upstreamErrorMessage(err, phase, true), upstream);
    if (connectFailed && !this.hasBody && group.peers.length > 1) {
      this.#tried ??= [];
      this.#tried.push(peer);
      this.#dispatch();
      return;
    }
    this.#fail(timedOut ? 504 : 502);
  }

  /** How far the request got with the upstream, for the log's `while …`. */
  #phase(code: string): UpstreamPhase {
    if (this.#abort === null || CONNECT_FAILURES.has(code)) return CONNECTING;
    if (!this.#sent) return SENDING;
    return this.#status === 0 ? READING_HEADER : READING_BODY;
  }

  #report(level: 'error' | 'warn', message: string, upstream: string): void {
    this.#host.onUpstreamError?.(this, this.#decision!, { level, message, upstream });
  }
}
