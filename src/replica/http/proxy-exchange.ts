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
import { Responder } from './responder.ts';
import { closesConnection, pageClosesConnection } from './status-pages.ts';
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
  /** Writes the answer (responder.ts). */
  readonly #responder: Responder;
  /** Lets the upstream's reading go on once the client took what waited. */
  #resume: (() => void) | null = null;
  #timer: NodeJS.Timeout | null = null;
  /** Withdraws a waiting request from its admission (null when not waiting). */
  #withdraw: (() => void) | null = null;
  #tracked = false;
  /** A tunnel holds the decision's slots now (released when it closes, not with the response). */
  #slotsTaken = false;
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
    this.#responder = new Responder(res, req.h2 === true, connection, this);
  }

  /** A graceful close began: answers say `Connection: close`. */
  get closing(): boolean {
    return this.#host.closing;
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
    this.state = DONE;
    this.#track();
    this.#responder.page(code, this.#refusing || pageClosesConnection(code), retryAfterS, extraHeaders);
  }

  #answer(decision: ReturnDecision): void {
    if (decision.body === undefined && !decision.headers) {
      this.sendPage(decision.code);
      return;
    }
    this.state = DONE;
    this.#track();
    this.#responder.answer(decision.code, decision.body, decision.headers ?? {});
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
    this.#responder.stop();
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
      bodyBytes: this.#responder.bodyBytes,
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
    const added = (this.#decision as ProxyTarget | null)?.responseHeaders;
    this.#responder.upstreamHead(statusCode, statusText, rawHeaders, added);
    // The head waits for the end of the read that brought it: a small response then goes out head,
    // body and all in one write (onComplete); one that goes on leaves at the read's end (onReadEnd).
    return true;
  }

  /** The read that brought the head (or more of the body) is over and the response goes on. */
  onReadEnd(): void {
    if (this.state === FORWARDING) this.#responder.flushHead();
  }

  onData(chunk: Buffer): boolean {
    return this.#responder.data(chunk, this.#resume!);
  }

  onComplete(): void {
    this.stopSendTimer();
    this.upstreamEnded();
    if (this.state === DONE) return;
    this.state = DONE;
    this.#responder.complete();
  }

  /**
   * @internal `send_timeout` passed with the client taking nothing: nginx's `client timed out` (at
   * `info`) and the connection closed (for HTTP/2, the stream).
   */
  clientSendTimedOut(): void {
    this.#responder.sendTimerSpent();
    if (this.#decision !== null) this.#host.clientInput?.clientFault(this, this.#decision, SEND_TIMED_OUT);
    if (this.req.h2 === true) this.res.destroy();
    else this.clientSocket?.destroy();
  }
}
