/**
 * One request on the data path, from decision to the last byte: it answers, holds, or forwards as the
 * hook decided, relays the upstream's answer, and notices a client that goes away. The exchange is the
 * `DownstreamRequest` the hook sees and also the upstream client's handler, so a forwarded request costs
 * one object; its base class, `UpstreamRequest` (upstream-request.ts), is the side facing the servers.
 *
 * The client's callbacks (`onConnect`/`onHeaders`/`onData`/`onComplete`/`onError`, undici's raw
 * dispatch-handler protocol) hand over the response head as a flat list and the body as chunks, which
 * are written straight into the client response.
 */

import type { Socket } from 'node:net';
import type { ClientTimers } from '../../engine/http/client-timers.ts';
import { isPooledBodyChunk, releaseBodyChunk } from './body-buffers.ts';
import type { BodyReader, ClientConnection, RemoteAddress } from './contract/client-connection.ts';
import type { ClientRequest } from './contract/client-request.ts';
import type { ClientResponse } from './contract/client-response.ts';
import type {
  AnsweredUnder,
  ClientClosedCallback,
  ClientFault,
  ClientInputRules,
  CompletedCallback,
  Decision,
  DelayDecision,
  DownstreamRequest,
  HeldUntilEnd,
  ProxyTarget,
  ReturnDecision,
  UpstreamErrorCallback,
  WaitDecision,
} from './decision.ts';
import { containFault, failpoint } from './fault-boundary.ts';
import { uriFieldValue } from './field-value.ts';
import { clientResponseHeaders } from './forward-headers.ts';
import { lingerOnClose } from './lingering-close.ts';
import {
  closesConnection,
  errorPage,
  pageClosesConnection,
  statusReason,
  wireStatus,
} from './status-pages.ts';
import type { UpstreamPeer } from './upstream-group.ts';
import { DONE, FORWARDING, HELD, type UpstreamHost, UpstreamRequest } from './upstream-request.ts';

/** What every exchange of one listener shares. */
export interface ExchangeHost<D extends Decision> extends UpstreamHost {
  readonly scheme: string;
  readonly onClientClosed: ClientClosedCallback<D> | null;
  /** Hears each upstream failure, in nginx's error-log words. */
  readonly onUpstreamError: UpstreamErrorCallback<D> | null;
  /** Hears each exchange once it is over (status, body bytes, time). */
  readonly onCompleted: CompletedCallback<D> | null;
  /** The hook's rules for client input (log lines about client faults), if it has any. */
  readonly clientInput: ClientInputRules<D> | null;
  /** True once a graceful close began: answers say `Connection: close`. */
  readonly closing: boolean;
  /** Requests currently held by a delay. */
  held: number;
  /** Called when a held or forwarded exchange ends (for graceful close). */
  exchangeEnded(): void;
  /** The address's default server's client timers (for answers the hook gave none). */
  readonly clientTimers: ClientTimers;
}

/** nginx's words for a request body that went wrong on the client's side. */
const PREMATURELY_CLOSED: ClientFault = Object.freeze({
  level: 'info',
  message: 'client prematurely closed connection',
});
const SEND_TIMED_OUT: ClientFault = Object.freeze({
  level: 'info',
  message: 'client timed out (110: Connection timed out) while sending to client',
});
const INVALID_CHUNKED_BODY: ClientFault = Object.freeze({
  level: 'error',
  message: 'client sent invalid chunked body',
});

function onResponseClose(exchange: { responseClosed(): void; readonly clientSocket: Socket | null }): void {
  try {
    failpoint('client');
    exchange.responseClosed();
  } catch (error) {
    const socket = exchange.clientSocket;
    containFault('client', error, socket, socket);
  }
}

function onClientSendTimeout(exchange: {
  clientSendTimedOut(): void;
  readonly clientSocket: Socket | null;
}): void {
  try {
    failpoint('timer');
    exchange.clientSendTimedOut();
  } catch (error) {
    const socket = exchange.clientSocket;
    containFault('timer', error, socket, socket);
  }
}

function onHoldElapsed(exchange: { holdElapsed(): void; readonly clientSocket: Socket | null }): void {
  try {
    failpoint('timer');
    exchange.holdElapsed();
  } catch (error) {
    const socket = exchange.clientSocket;
    containFault('timer', error, socket, socket);
  }
}

export class Exchange<D extends Decision> extends UpstreamRequest implements DownstreamRequest, BodyReader {
  readonly connection: ClientConnection;
  readonly remoteAddr: string;
  readonly remotePort: number;
  readonly realipRemoteAddr: string;
  readonly realipRemotePort: number;

  readonly #host: ExchangeHost<D>;
  #decision: D | null = null;
  #resume: (() => void) | null = null;
  #statusText = '';
  #responseHeaders: string[] | null = null;
  /** The first body chunk, held until the head goes out with it. */
  #pending: Buffer | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** Withdraws a waiting request from its admission (null when not waiting). */
  #withdraw: (() => void) | null = null;
  #tracked = false;
  /** A tunnel holds the decision's slots now (released when it closes, not with the response). */
  #slotsTaken = false;
  /** `$body_bytes_sent`, counted as the body is handed to the client connection. */
  #bodyBytes = 0;
  /** `send_timeout`'s timer, while the client takes nothing. */
  #sendWatch: NodeJS.Timeout | null = null;
  /** The code of a connection closed without an answer (444, 408, 499), else 0. */
  #closedWith = 0;
  /** The client sent `Expect: 100-continue` and has not been told to go on yet. */
  #expectsContinue = false;
  /** The answer refuses what the client sent: the connection closes after it. */
  #refusing = false;
  readonly #startedMs = performance.now();

  constructor(
    host: ExchangeHost<D>,
    req: ClientRequest,
    res: ClientResponse,
    connection: ClientConnection,
    remote: RemoteAddress,
  ) {
    super(req, res, remote.text, host.scheme);
    this.#host = host;
    this.connection = connection;
    const peer = connection.peer!;
    this.realipRemoteAddr = peer.text;
    this.realipRemotePort = peer.port;
    this.remoteAddr = remote.text;
    this.remotePort = remote.port;
  }

  /**
   * The request carries `Expect: 100-continue`: `100 Continue` goes out when the body is wanted — when
   * the request is forwarded (after a delay, if held), or answered without it (nginx reads and drops
   * the body then) — and never for a refusal (nginx's 413 is sent instead).
   */
  expectContinue(): void {
    this.#expectsContinue = true;
  }

  #continue(): void {
    if (!this.#expectsContinue) return;
    this.#expectsContinue = false;
    if (!this.res.headersSent) this.res.writeContinue();
  }

  /** Acts on the hook's answer. */
  run(decision: D): void {
    this.#decision = decision;
    this.timers = (decision as AnsweredUnder).client ?? this.#host.clientTimers;
    switch (decision.action) {
      case 'pass':
      case 'proxy':
        this.#track();
        this.#continue();
        this.forward(this.#host, decision);
        return;
      case 'delay':
        this.#hold(decision);
        return;
      case 'wait':
        this.#wait(decision);
        return;
      case 'reject':
        this.#continue();
        this.sendPage(decision.code, decision.retryAfterS, decision.headers);
        return;
      case 'return':
        this.#continue();
        this.#answer(decision);
        return;
      case 'refuse':
        this.#expectsContinue = false;
        this.#refuse(decision.code);
        return;
    }
  }

  /** nginx's page for what the client sent wrong; the connection closes after it (lingering). */
  #refuse(code: number): void {
    if (this.res.headersSent) {
      // an upstream answer is already on its way: it is cut
      this.state = DONE;
      this.res.destroy();
      return;
    }
    this.#refusing = true;
    this.sendPage(code);
  }

  protected clientFault(code: number, fault: ClientFault | null): void {
    if (fault !== null && this.#decision !== null)
      this.#host.clientInput?.clientFault(this, this.#decision, fault);
    this.#release();
    this.#refuse(code);
  }

  get bodyComplete(): boolean {
    return this.req.complete;
  }

  /**
   * node:http found the request body broken while this exchange held or forwarded it: the client
   * closed its side before the end (nginx: 400, nothing sent) or the chunked framing is wrong (400).
   * False when the exchange is over already (the connection is the caller's to close).
   */
  bodyFailed(parserCode: string): boolean {
    if (this.state === DONE) return false;
    if (parserCode === 'HPE_INVALID_EOF_STATE') {
      if (this.#decision !== null)
        this.#host.clientInput?.clientFault(this, this.#decision, PREMATURELY_CLOSED);
      this.#release();
      // done first: the client may report the abort at once, and it is not the server's failure
      this.state = DONE;
      this.#closedWith = 400;
      this.abandonUpstream();
      this.res.destroy();
      return true;
    }
    this.clientFault(400, INVALID_CHUNKED_BODY);
    this.abandonUpstream();
    return true;
  }

  /** A held request is let go (its timer cleared, its wait withdrawn) before it ends some other way. */
  #release(): void {
    if (this.#withdraw !== null) {
      const withdraw = this.#withdraw;
      this.#withdraw = null;
      this.#host.held--;
      withdraw();
      return;
    }
    if (this.#timer === null) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#host.held--;
  }

  /** Answers with nginx's page for `code` (also used for a hook that threw: 500). */
  sendPage(code: number, retryAfterS?: number, extraHeaders?: readonly string[]): void {
    if (closesConnection(code)) {
      this.state = DONE;
      this.#closedWith = code;
      this.#track();
      (this.req.socket ?? this.res.socket)?.destroy();
      return;
    }
    if (this.#refusing || pageClosesConnection(code)) this.#closeAfter();
    const page = errorPage(code);
    const headers =
      page === null
        ? ['content-length', '0']
        : ['content-type', 'text/html', 'content-length', `${page.length}`];
    if (retryAfterS !== undefined) headers.push('retry-after', `${retryAfterS}`);
    if (extraHeaders !== undefined) headers.push(...extraHeaders);
    this.#end(wireStatus(code), headers, page);
  }

  /** The answer ends the connection, lingering (nginx drops keep-alive after these pages). */
  #closeAfter(): void {
    // an HTTP/2 stream ends by itself; its connection carries the others on
    if (this.req.h2 === true) return;
    this.res.shouldKeepAlive = false;
    const socket = this.res.socket ?? this.req.socket;
    if (socket !== null) lingerOnClose(socket, this.timers);
  }

  #end(status: number, headers: string[], body: Buffer | string | null): void {
    this.state = DONE;
    this.#track();
    const res = this.res;
    this.#keepAliveRule();
    res.writeHead(status, statusReason(status), headers);
    if (body === null) res.end();
    else {
      this.#bodyBytes += typeof body === 'string' ? Buffer.byteLength(body) : body.length;
      res.end(body);
    }
    this.#watchSendEnd();
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
        // a `return` URL is made from request data (`$uri` is decoded): kept to one field value
        headers.push(name, uriFieldValue(value));
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

  /** Watches the response so its end (or a vanished client, held or forwarding) is noticed. Once. */
  #track(): void {
    if (this.#tracked) return;
    this.#tracked = true;
    // the body, if it breaks from here on, is this exchange's to answer for (client-error.ts)
    this.connection.exchange = this;
    this.res.on('close', () => onResponseClose(this));
  }

  #hold(decision: DelayDecision): void {
    this.state = HELD;
    this.#host.held++;
    this.#track();
    this.#timer = setTimeout(onHoldElapsed, decision.delayMs, this);
  }

  /** Parked until the decision's admission settles (or the client leaves: withdrawn). */
  #wait(decision: WaitDecision): void {
    this.state = HELD;
    this.#host.held++;
    this.#track();
    let settled = false;
    const withdraw = decision.wait((next) => {
      if (settled) return;
      settled = true;
      this.#withdraw = null;
      if (this.state !== HELD) return;
      this.#host.held--;
      // an admission settles from its own timers
      try {
        this.run(next as D);
      } catch (error) {
        const socket = this.clientSocket;
        containFault('timer', error, socket, socket);
      }
    });
    if (!settled) this.#withdraw = withdraw;
  }

  /** @internal the delay timer fired: the phases after it decide now. */
  holdElapsed(): void {
    this.#timer = null;
    if (this.state !== HELD) return;
    this.#host.held--;
    const held = this.#decision as DelayDecision;
    const next = held.resume?.() as D | undefined;
    if (next === undefined) {
      this.#continue();
      this.forward(this.#host, held);
      return;
    }
    this.run(next);
  }

  /** What the request holds until it ends (its decision's slots); null when nothing. */
  protected get slots(): HeldUntilEnd | null {
    return (this.#decision as ProxyTarget | null)?.slots ?? null;
  }

  /** Sends the request to `peer`; the answer comes back through the handler callbacks below. */
  protected send(
    peer: UpstreamPeer,
    path: string,
    headers: string[],
    readTimeoutMs: number | undefined,
  ): void {
    peer.dispatch(
      {
        path,
        method: this.req.method ?? 'GET',
        headers,
        body: this.hasBody ? (this.bufferedBody ?? this.req) : null,
        headersTimeout: readTimeoutMs,
        bodyTimeout: readTimeoutMs,
      },
      this,
      this.connectTimeoutMs,
    );
  }

  /** Held, or waiting for the upstream's answer (no byte of it sent yet). */
  protected get waiting(): boolean {
    return this.state === HELD || (this.state === FORWARDING && !this.res.headersSent);
  }

  /** The connection leaves the exchange (a 101): done, no 499, no page. False if already done. */
  protected handOver(): boolean {
    if (this.state !== FORWARDING) return false;
    this.state = DONE;
    // the tunnel holds them now, until it closes
    this.#slotsTaken = true;
    return true;
  }

  /** @internal `res` emitted 'close': the response ended, or the client went away before that. */
  responseClosed(): void {
    if (this.connection.exchange === this) this.connection.exchange = null;
    const state = this.state;
    this.state = DONE;
    this.stopSendTimer();
    this.stopBody();
    this.#unwatchSend();
    const status = this.#closedWith || (this.res.headersSent ? this.res.statusCode : 499);
    if (!this.#slotsTaken) (this.#decision as ProxyTarget | null)?.slots?.release(status);
    if (state === HELD || state === FORWARDING) {
      this.#release();
      this.abortUpstream();
      this.#host.onClientClosed?.(this, this.#decision!, state === HELD ? 'delay' : 'proxy');
    }
    this.#host.exchangeEnded();
    this.#host.onCompleted?.(this, this.#decision, {
      status,
      bodyBytes: this.#bodyBytes,
      seconds: (performance.now() - this.#startedMs) / 1000,
    });
  }

  protected report(level: 'error' | 'warn', message: string, upstream: string): void {
    this.#host.onUpstreamError?.(this, this.#decision!, { level, message, upstream });
  }

  // the upstream client's handler: the answer relayed (the request going out and failures: UpstreamRequest)

  onHeaders(
    statusCode: number,
    rawHeaders: readonly (Buffer | string)[],
    resume: () => void,
    statusText: string,
  ): boolean {
    if (statusCode < 200) return true;
    if (this.state === DONE) return false;
    this.#resume = resume;
    this.status = statusCode;
    this.#statusText = statusText;
    this.#responseHeaders = clientResponseHeaders(rawHeaders);
    // The head waits for the end of the read that brought it: a small response then goes out head,
    // body and all in one write (onComplete); one that goes on leaves at the read's end (onReadEnd).
    return true;
  }

  /** The read that brought the head (or more of the body) is over and the response goes on. */
  onReadEnd(): void {
    this.#flushHead();
  }

  #flushHead(): void {
    if (this.state !== FORWARDING || this.res.headersSent) return;
    this.#writeHead();
    const pending = this.#pending;
    if (pending !== null) {
      this.#pending = null;
      this.#bodyBytes += pending.length;
      this.#write(pending);
    }
  }

  /** Writes a chunk of the body; one in a pooled slab goes back once written (body-buffers.ts). */
  #write(chunk: Buffer): boolean {
    if (!isPooledBodyChunk(chunk)) return this.res.write(chunk);
    return this.res.write(chunk, (err?: Error | null) => {
      if (!err) releaseBodyChunk(chunk);
    });
  }

  /** The client took what waited: the upstream's reading goes on. */
  #resumeUpstream(): void {
    this.#unwatchSend();
    try {
      this.#resume!();
    } catch (error) {
      const socket = this.clientSocket;
      containFault('client', error, socket, socket);
    }
  }

  /**
   * Whether the answer may keep its connection (a graceful close, nginx's keep-alive limits:
   * client-connection.ts); the connection idles for the location's `keepalive_timeout` after it.
   */
  #keepAliveRule(): void {
    // an HTTP/2 stream ends by itself; its session counts its streams (proxy-server.ts)
    if (this.req.h2 === true) return;
    const res = this.res;
    if (this.#host.closing || !this.connection.mayKeepAlive(this.timers)) res.shouldKeepAlive = false;
    // `lingering_close always`: every connection the server ends lingers
    const socket = this.clientSocket;
    if (!res.shouldKeepAlive && this.timers.lingeringClose === 'always' && socket !== null)
      lingerOnClose(socket, this.timers);
    // the replica's own writer asks how long the connection idles for the next request
    if (res.keepAliveTimeoutMs !== undefined) res.keepAliveTimeoutMs = this.timers.keepaliveTimeoutMs;
  }

  #writeHead(): void {
    const res = this.res;
    this.#keepAliveRule();
    const added = (this.#decision as ProxyTarget | null)?.responseHeaders;
    const headers =
      added === undefined || added.length === 0
        ? this.#responseHeaders!
        : [...this.#responseHeaders!, ...added];
    res.writeHead(this.status, this.#statusText || statusReason(this.status), headers);
  }

  onData(chunk: Buffer): boolean {
    const res = this.res;
    if (!res.headersSent) {
      if (this.#pending === null) {
        this.#pending = chunk;
        return true;
      }
      this.#flushHead();
    }
    this.#bodyBytes += chunk.length;
    if (this.#write(chunk)) return true;
    res.once('drain', () => this.#resumeUpstream());
    this.#watchSend();
    return false;
  }

  onComplete(): void {
    this.stopSendTimer();
    this.upstreamEnded();
    if (this.state === DONE) return;
    this.state = DONE;
    const res = this.res;
    if (!res.headersSent) this.#writeHead();
    const pending = this.#pending;
    if (pending === null) {
      res.end();
    } else {
      this.#pending = null;
      this.#bodyBytes += pending.length;
      if (isPooledBodyChunk(pending)) res.end(pending, () => releaseBodyChunk(pending));
      else res.end(pending);
    }
    this.#watchSendEnd();
  }

  /** `send_timeout` runs while the client takes nothing of what was written to it. */
  #watchSend(): void {
    const ms = this.timers.sendTimeoutMs;
    if (this.#sendWatch === null && ms > 0) this.#sendWatch = setTimeout(onClientSendTimeout, ms, this);
  }

  /** The response is all written: the client still has to take what its connection holds. */
  #watchSendEnd(): void {
    if ((this.clientSocket?.writableLength ?? 0) > 0) this.#watchSend();
  }

  #unwatchSend(): void {
    if (this.#sendWatch === null) return;
    clearTimeout(this.#sendWatch);
    this.#sendWatch = null;
  }

  /**
   * @internal `send_timeout` passed with the client taking nothing: nginx's `client timed out` (at
   * `info`) and the connection closed (for HTTP/2, the stream).
   */
  clientSendTimedOut(): void {
    this.#sendWatch = null;
    if (this.#decision !== null) this.#host.clientInput?.clientFault(this, this.#decision, SEND_TIMED_OUT);
    if (this.req.h2 === true) this.res.destroy();
    else this.clientSocket?.destroy();
  }
}
