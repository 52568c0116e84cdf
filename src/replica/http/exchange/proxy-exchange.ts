/**
 * One request on the data path, from decision to the last byte: the `DownstreamRequest` the hook
 * sees, and the state machine that acts on its decision — answer, hold (a delay, an admission's
 * wait) or forward — and notices a client that goes away. It holds a `Forwarder` (forwarder.ts),
 * which faces the servers and hands their answer back, and a `Responder` (responder.ts), which
 * writes what the client gets.
 */

import type { Socket } from 'node:net';
import { type ClientTimers, NGINX_CLIENT_TIMERS } from '../../../engine/http/client-timers.ts';
import type { BodyReader, ClientConnection, RemoteAddress } from '../contract/client-connection.ts';
import type { ClientRequest } from '../contract/client-request.ts';
import type { ClientResponse } from '../contract/client-response.ts';
import type {
  AnsweredUnder,
  ClientFault,
  Decision,
  DelayDecision,
  DownstreamRequest,
  HeldUntilEnd,
  ProxyTarget,
  ReturnDecision,
  WaitDecision,
} from '../contract/decision.ts';
import { containFault, failpoint } from '../contract/fault-boundary.ts';
import { readRequestFacts } from '../upstream/forward-headers.ts';
import type { ForwardOwner, ForwardSending } from '../upstream/forward-owner.ts';
import { Forwarder } from '../upstream/forwarder.ts';
import type { UpstreamPeer } from '../upstream/upstream-group.ts';
import { closesConnection, pageClosesConnection } from '../wire/status-pages.ts';
import { INVALID_CHUNKED_BODY, PREMATURELY_CLOSED, SEND_TIMED_OUT } from './client-faults.ts';
import type { ExchangeHost } from './exchange-host.ts';
import { Hold } from './hold.ts';
import { Responder } from './responder.ts';

function onResponseClose(exchange: { responseClosed(): void; readonly clientSocket: Socket | null }): void {
  try {
    failpoint('client');
    exchange.responseClosed();
  } catch (error) {
    const socket = exchange.clientSocket;
    containFault('client', error, socket, socket);
  }
}

/**
 * Where an exchange is: `new` until the decision is acted on; `held` by a delay or an admission;
 * `forwarding` to a server; `done` once answered, cut or abandoned by its client.
 */
export type ExchangeState = 'new' | 'held' | 'forwarding' | 'done';

export class Exchange<D extends Decision> implements DownstreamRequest, BodyReader, ForwardOwner {
  readonly req: ClientRequest;
  readonly res: ClientResponse;
  readonly connection: ClientConnection;
  // what the decision reads of the head (forward-headers.ts)
  host = '';
  contentLength = -1;
  hasBody = false;
  /** The client connection's timers of the request's location (set once the hook decided). */
  timers: ClientTimers = NGINX_CLIENT_TIMERS;
  protected state: ExchangeState = 'new';
  /** Sends the request to the servers once it is to go (forwarder.ts); made then. */
  protected forwarder: Forwarder | null = null;
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
  /** Held by a delay or an admission (hold.ts). */
  #hold: Hold | null = null;
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
    this.req = req;
    this.res = res;
    readRequestFacts(req.rawHeaders, this);
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

  /** The client's connection (the request's socket can be cleared once its body was read). */
  get clientSocket(): Socket | null {
    return this.req.socket ?? this.res.socket;
  }

  get done(): boolean {
    return this.state === 'done';
  }

  get forwarding(): boolean {
    return this.state === 'forwarding';
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
        this.#forward(decision);
        return;
      case 'delay':
        this.#delay(decision);
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
      this.state = 'done';
      this.res.destroy();
      return;
    }
    this.#refusing = true;
    this.sendPage(code);
  }

  clientFault(code: number, fault: ClientFault | null): void {
    if (fault !== null && this.#decision !== null)
      this.#host.clientInput?.clientFault(this, this.#decision, fault);
    this.#hold?.release();
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
    if (this.state === 'done') return false;
    if (parserCode === 'HPE_INVALID_EOF_STATE') {
      if (this.#decision !== null)
        this.#host.clientInput?.clientFault(this, this.#decision, PREMATURELY_CLOSED);
      this.#hold?.release();
      // done first: the client may report the abort at once, and it is not the server's failure
      this.state = 'done';
      this.#closedWith = 400;
      this.forwarder?.abandonUpstream();
      this.res.destroy();
      return true;
    }
    this.clientFault(400, INVALID_CHUNKED_BODY);
    this.forwarder?.abandonUpstream();
    return true;
  }

  /** Answers with nginx's page for `code` (also used for a hook that threw: 500). */
  sendPage(code: number, retryAfterS?: number, extraHeaders?: readonly string[]): void {
    if (closesConnection(code)) {
      this.state = 'done';
      this.#closedWith = code;
      this.#track();
      (this.req.socket ?? this.res.socket)?.destroy();
      return;
    }
    this.state = 'done';
    this.#track();
    this.#responder.page(code, this.#refusing || pageClosesConnection(code), retryAfterS, extraHeaders);
  }

  #answer(decision: ReturnDecision): void {
    if (decision.body === undefined && !decision.headers) {
      this.sendPage(decision.code);
      return;
    }
    this.state = 'done';
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

  #delay(decision: DelayDecision): void {
    this.state = 'held';
    this.#track();
    this.#hold ??= new Hold(this.#host);
    this.#hold.delay(decision.delayMs, this);
  }

  /** Parked until the decision's admission settles (or the client leaves: withdrawn). */
  #wait(decision: WaitDecision): void {
    this.state = 'held';
    this.#track();
    this.#hold ??= new Hold(this.#host);
    this.#hold.wait(decision, (next) => {
      if (this.state !== 'held') return;
      // an admission settles from its own timers
      try {
        this.run(next as D);
      } catch (error) {
        const socket = this.clientSocket;
        containFault('timer', error, socket, socket);
      }
    });
  }

  /** @internal the delay timer fired: the phases after it decide now. */
  holdElapsed(): void {
    if (this.#hold?.elapsed() !== true || this.state !== 'held') return;
    const held = this.#decision as DelayDecision;
    const next = held.resume?.() as D | undefined;
    if (next === undefined) {
      this.#continue();
      this.#forward(held);
      return;
    }
    this.run(next);
  }

  /** What the request holds until it ends (its decision's slots); null when nothing. */
  protected get slots(): HeldUntilEnd | null {
    return (this.#decision as ProxyTarget | null)?.slots ?? null;
  }

  #forward(target: ProxyTarget): void {
    this.state = 'forwarding';
    this.forwarder ??= new Forwarder(this, this.remoteAddr, this.#host.scheme);
    this.forwarder.forward(this.#host, target);
  }

  /** Sends the request to `peer`; the forwarder hears how it goes. */
  send(
    forwarder: ForwardSending,
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
        body: this.hasBody ? (forwarder.bufferedBody ?? this.req) : null,
        headersTimeout: readTimeoutMs,
        bodyTimeout: readTimeoutMs,
      },
      forwarder,
      forwarder.connectTimeoutMs,
    );
  }

  /** No server answered: nginx's page, or the answer cut once its head went out. */
  upstreamFailed(code: number): void {
    if (!this.res.headersSent) {
      this.sendPage(code);
      return;
    }
    this.state = 'done';
    this.res.destroy();
  }

  /** Held, or waiting for the upstream's answer (no byte of it sent yet). */
  protected get waiting(): boolean {
    return this.state === 'held' || (this.state === 'forwarding' && !this.res.headersSent);
  }

  /** The connection leaves the exchange (a 101): done, no 499, no page. False if already done. */
  protected handOver(): boolean {
    if (this.state !== 'forwarding') return false;
    this.state = 'done';
    // the tunnel holds them now, until it closes
    this.#slotsTaken = true;
    return true;
  }

  /** @internal `res` emitted 'close': the response ended, or the client went away before that. */
  responseClosed(): void {
    if (this.connection.exchange === this) this.connection.exchange = null;
    const state = this.state;
    this.state = 'done';
    this.forwarder?.stopSendTimer();
    this.forwarder?.stopBody();
    this.#responder.stop();
    const status = this.#closedWith || (this.res.headersSent ? this.res.statusCode : 499);
    if (!this.#slotsTaken) (this.#decision as ProxyTarget | null)?.slots?.release(status);
    if (state === 'held' || state === 'forwarding') {
      this.#hold?.release();
      this.forwarder?.abortUpstream();
      this.#host.onClientClosed?.(this, this.#decision!, state === 'held' ? 'delay' : 'proxy');
    }
    this.#host.exchangeEnded();
    this.#host.onCompleted?.(this, this.#decision, {
      status,
      bodyBytes: this.#responder.bodyBytes,
      seconds: (performance.now() - this.#startedMs) / 1000,
    });
  }

  report(level: 'error' | 'warn', message: string, upstream: string): void {
    this.#host.onUpstreamError?.(this, this.#decision!, { level, message, upstream });
  }

  // the upstream's answer, relayed (the forwarder hands it on)

  upstreamHead(
    status: number,
    rawHeaders: readonly (Buffer | string)[],
    resume: () => void,
    statusText: string,
  ): boolean {
    this.#resume = resume;
    const added = (this.#decision as ProxyTarget | null)?.responseHeaders;
    this.#responder.upstreamHead(status, statusText, rawHeaders, added);
    // The head waits for the end of the read that brought it: a small response then goes out head,
    // body and all in one write (upstreamComplete); one that goes on leaves at the read's end.
    return true;
  }

  upstreamReadEnd(): void {
    if (this.state === 'forwarding') this.#responder.flushHead();
  }

  upstreamData(chunk: Buffer): boolean {
    return this.#responder.data(chunk, this.#resume!);
  }

  upstreamComplete(): void {
    this.state = 'done';
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
