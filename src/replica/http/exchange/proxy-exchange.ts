/**
 * One request on the data path, from decision to the last byte: the state machine that acts on the
 * hook's decision — answer, hold (a delay, an admission's wait) or forward — and notices a client that
 * goes away. It holds what the hook sees (`Downstream`), a `Responder` that writes what the client
 * gets and, once it forwards, a `Forwarder` that faces the servers.
 */
import type { Socket } from 'node:net';
import { type ClientTimers, NGINX_CLIENT_TIMERS } from '../../../engine/http/client-timers.ts';
import type { BodyReader } from '../contract/client-connection.ts';
import type { ClientRequest } from '../contract/client-request.ts';
import type { ClientResponse } from '../contract/client-response.ts';
import type {
  AnsweredUnder,
  ClientFault,
  Decision,
  DelayDecision,
  HeldUntilEnd,
  ProxyTarget,
  ReturnDecision,
  WaitDecision,
} from '../contract/decision.ts';
import type { UpstreamErrorLevel } from '../contract/exchange-events.ts';
import { containFault } from '../contract/fault-boundary.ts';
import { fileBody } from '../static/file-body.ts';
import type { ForwardOwner, ForwardSending } from '../upstream/forward-owner.ts';
import { Forwarder } from '../upstream/forwarder.ts';
import { sendToPeer } from '../upstream/send-to-peer.ts';
import type { UpstreamPeer } from '../upstream/upstream-group.ts';
import { closesConnection, pageClosesConnection } from '../wire/status-pages.ts';
import { INVALID_CHUNKED_BODY, PREMATURELY_CLOSED, SEND_TIMED_OUT } from './client-faults.ts';
import type { Downstream } from './downstream.ts';
import type { ExchangeHost } from './exchange-host.ts';
import { Hold } from './hold.ts';
import { type AnswerRules, Responder } from './responder.ts';
import type { UpgradeLeg, UpgradingExchange } from './upgrade-leg.ts';
import { pageInstead } from './upstream-error-page.ts';

/** Members without a comment here are the interfaces' it implements: they say what each is for. */
export class Exchange<D extends Decision>
  implements BodyReader, ForwardOwner, UpgradingExchange, AnswerRules
{
  readonly req: ClientRequest;
  readonly res: ClientResponse;
  /** What the hook, the logs and the callbacks see of the request (downstream.ts). */
  readonly downstream: Downstream;
  /** Writes what the client gets: pages, `return`, the server's answer (responder.ts). */
  readonly answer: Responder;
  /** The client connection's timers of the request's location (set once the hook decided). */
  timers: ClientTimers = NGINX_CLIENT_TIMERS;
  /** `new` until the decision is acted on; `held`; `forwarding`; `done`: answered, cut or abandoned. */
  #state: 'new' | 'held' | 'forwarding' | 'done' = 'new';
  /** Sends the request to the servers once it is to go (forwarder.ts); made then. */
  #forwarder: Forwarder | null = null;
  /** An upgrade request's way to the server and into a tunnel (upgrade-leg.ts); null for the others. */
  #upgrade: UpgradeLeg | null = null;

  readonly #host: ExchangeHost<D>;
  #decision: D | null = null;
  /** Held by a delay or an admission (hold.ts). */
  #hold: Hold | null = null;
  #tracked = false;
  /** A tunnel holds the decision's slots now (released when it closes, not with the response). */
  #slotsTaken = false;
  #closedWith = 0; // the code of a connection closed without an answer (444, 408, 499), else 0
  #refusing = false; // the answer refuses what the client sent: the connection closes after it
  readonly #startedMs = performance.now();

  constructor(host: ExchangeHost<D>, downstream: Downstream, res: ClientResponse) {
    this.req = downstream.req;
    this.res = res;
    this.downstream = downstream;
    this.#host = host;
    this.answer = new Responder(res, this.req.h2 === true, downstream.connection, this);
  }

  /** The request is an upgrade to a location that tunnels it (node:http's `upgrade`). */
  upgradeBy(leg: UpgradeLeg): void {
    this.#upgrade = leg;
  }

  get closing(): boolean {
    return this.#host.closing;
  }

  get clientSocket(): Socket | null {
    return this.downstream.clientSocket;
  }

  get done(): boolean {
    return this.#state === 'done';
  }

  get forwarding(): boolean {
    return this.#state === 'forwarding';
  }

  /** Acts on the hook's answer. */
  run(decision: D): void {
    this.#upgrade?.start();
    this.#decision = decision;
    this.timers = (decision as AnsweredUnder).client ?? this.#host.clientTimers;
    this.answer.answerUnder((decision as AnsweredUnder).answerHeaders);
    switch (decision.action) {
      case 'pass':
      case 'proxy':
        this.#track();
        this.answer.continue();
        this.#forward(decision);
        return;
      case 'delay':
        this.#held().delay(decision.delayMs, this);
        return;
      case 'wait':
        this.#wait(decision);
        return;
      case 'reject':
        this.answer.continue();
        this.sendPage(decision.code, decision.retryAfterS, decision.headers);
        return;
      case 'return':
        this.answer.continue();
        this.#answer(decision);
        return;
      case 'file':
        this.answer.continue();
        this.#finish();
        this.answer.stream(decision.status, [...decision.headers], fileBody(decision.fd, decision.body));
        return;
      case 'refuse':
        this.answer.noContinue();
        this.#refuse(decision.code);
        return;
    }
  }

  /** nginx's page for what the client sent wrong, then a lingering close; an answer on its way is cut. */
  #refuse(code: number): void {
    if (this.res.headersSent) this.#cut();
    else {
      this.#refusing = true;
      this.sendPage(code);
    }
  }

  clientFault(code: number, fault: ClientFault | null): void {
    if (fault !== null) this.#logClientFault(fault);
    this.#hold?.release();
    this.#refuse(code);
  }

  /** nginx's error-log line about what the client did (by the hook's rules, once it decided). */
  #logClientFault(fault: ClientFault): void {
    if (this.#decision !== null) this.#host.clientInput?.clientFault(this.downstream, this.#decision, fault);
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
    if (this.#state === 'done') return false;
    if (parserCode === 'HPE_INVALID_EOF_STATE') {
      this.#logClientFault(PREMATURELY_CLOSED);
      this.#hold?.release();
      // done first: the client may report the abort at once, and it is not the server's failure
      this.#state = 'done';
      this.#closedWith = 400;
      this.#forwarder?.abandonUpstream();
      this.res.destroy();
      return true;
    }
    this.clientFault(400, INVALID_CHUNKED_BODY);
    this.#forwarder?.abandonUpstream();
    return true;
  }

  /** Answers with nginx's page for `code` (also used for a hook that threw: 500). */
  sendPage(code: number, retryAfterS?: number, extraHeaders?: readonly string[]): void {
    this.#finish();
    if (closesConnection(code)) {
      this.#closedWith = code;
      (this.req.socket ?? this.res.socket)?.destroy();
      return;
    }
    this.answer.page(code, this.#refusing || pageClosesConnection(code), retryAfterS, extraHeaders);
  }

  #answer(decision: ReturnDecision): void {
    if (decision.body === undefined && !decision.headers) {
      this.sendPage(decision.code);
      return;
    }
    this.#finish();
    this.answer.answer(decision.code, decision.body, decision.headers ?? {});
  }

  /** Answered now: done, and its response watched. */
  #finish(): void {
    this.#state = 'done';
    this.#track();
  }

  /** The answer already going out is cut (the connection, or an HTTP/2 stream, ends). */
  #cut(): void {
    this.#state = 'done';
    this.res.destroy();
  }

  /** Watches the response so its end (or a vanished client, held or forwarding) is noticed. Once. */
  #track(): void {
    if (this.#tracked) return;
    this.#tracked = true;
    // the body, if it breaks from here on, is this exchange's to answer for (client-error.ts)
    this.downstream.connection.exchange = this;
    this.answer.onClose(this);
  }

  /** Held from now on (hold.ts). */
  #held(): Hold {
    this.#state = 'held';
    this.#track();
    this.#hold ??= new Hold(this.#host);
    return this.#hold;
  }

  /** Parked until the decision's admission settles (or the client leaves: withdrawn). */
  #wait(decision: WaitDecision): void {
    this.#held().wait(decision, (next) => {
      if (this.#state !== 'held') return;
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
    if (this.#hold?.elapsed() !== true || this.#state !== 'held') return;
    const held = this.#decision as DelayDecision;
    const next = held.resume?.() as D | undefined;
    if (next === undefined) {
      this.answer.continue();
      this.#forward(held);
      return;
    }
    this.run(next);
  }

  get slots(): HeldUntilEnd | null {
    return (this.#decision as ProxyTarget | null)?.slots ?? null;
  }

  #forward(target: ProxyTarget): void {
    this.#state = 'forwarding';
    this.answer.relaying(target);
    this.#forwarder = new Forwarder(this, this.downstream);
    this.#forwarder.forward(this.#host, target);
  }

  send(
    forwarder: ForwardSending,
    peer: UpstreamPeer,
    path: string,
    headers: string[],
    readTimeoutMs: number | undefined,
  ): void {
    if (this.#upgrade !== null) this.#upgrade.send(forwarder, peer, path, headers, readTimeoutMs);
    else sendToPeer(forwarder, peer, this.req, this.downstream.hasBody, path, headers, readTimeoutMs);
  }

  /** A 101 to an upgrade request: its leg makes the tunnel. */
  upstreamUpgraded(statusText: string, rawHeaders: readonly string[], upstream: Socket, head: Buffer): void {
    if (this.#upgrade === null) upstream.destroy();
    else this.#upgrade.upgraded(statusText, rawHeaders, upstream, head);
  }

  upstreamEnded(): void {
    this.#forwarder?.upstreamEnded();
  }

  upstreamFailed(code: number): void {
    if (this.res.headersSent) this.#cut();
    else if (!pageInstead(this, this.#decision, code, this.#forwarder)) this.sendPage(code);
  }

  intercepted(status: number, rawHeaders: readonly (Buffer | string)[]): boolean {
    return pageInstead(this, this.#decision, status, this.#forwarder, rawHeaders);
  }

  get waiting(): boolean {
    return this.#state === 'held' || (this.#state === 'forwarding' && !this.res.headersSent);
  }

  handOver(): boolean {
    if (this.#state !== 'forwarding') return false;
    this.#state = 'done';
    this.#slotsTaken = true; // the tunnel holds them now, until it closes
    return true;
  }

  /** @internal `res` emitted 'close': the response ended, or the client went away before that. */
  responseClosed(): void {
    if (this.downstream.connection.exchange === this) this.downstream.connection.exchange = null;
    const state = this.#state;
    this.#state = 'done';
    this.#forwarder?.stopSendTimer();
    this.#forwarder?.stopBody(true);
    this.answer.stop();
    const status = this.#closedWith || (this.res.headersSent ? this.res.statusCode : 499);
    if (!this.#slotsTaken) (this.#decision as ProxyTarget | null)?.slots?.release(status);
    if (state === 'held' || state === 'forwarding') {
      this.#hold?.release();
      this.#forwarder?.abortUpstream();
      this.#host.events.clientClosed(this.downstream, this.#decision!, state === 'held' ? 'delay' : 'proxy');
    }
    this.#host.exchangeEnded();
    this.#host.events.completed(this.downstream, this.#decision, {
      status,
      bodyBytes: this.answer.bodyBytes,
      seconds: (performance.now() - this.#startedMs) / 1000,
    });
  }

  report(level: UpstreamErrorLevel, message: string, upstream: string): void {
    this.#host.events.upstreamError(this.downstream, this.#decision!, { level, message, upstream });
  }

  answered(): void {
    this.#state = 'done';
  }

  /**
   * @internal `send_timeout` passed with the client taking nothing: nginx's `client timed out` (at
   * `info`) and the connection closed (for HTTP/2, the stream).
   */
  clientSendTimedOut(): void {
    this.answer.sendTimerSpent();
    this.#logClientFault(SEND_TIMED_OUT);
    (this.req.h2 === true ? this.res : this.clientSocket)?.destroy();
  }
}
