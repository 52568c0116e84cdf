/**
 * One HTTP/1.1 connection to an upstream server, carrying one request at a time: the request head written in
 * one piece, its body after it as it comes (http1-request.ts), the response read straight off the socket
 * (http1-response-reader.ts) and handed on through the callbacks of undici's raw dispatch handler, which the
 * forwarder implements. It replaced an undici `Client` per connection: the request objects, queue, checks and
 * stream plumbing of a general client cost a proxied request about a fifth of its CPU, and the data path
 * needs none of them (node:http validated the client's head; the proxy writes the rest). Failures are
 * `UpstreamFailure`s by kind (upstream-failure.ts); timers are undici's client's, one per connection
 * (http1-client-timer.ts); after a response the connection is kept as undici keeps it (http1-keep-alive.ts).
 */
import type { Socket } from 'node:net';
import { type CallbackKind, containFault, together } from '../contract/fault-boundary.ts';
import {
  BODY_TIMER,
  CONNECT_TIMER,
  HEADERS_TIMER,
  Http1ClientTimer,
  IDLE_TIMER,
  NO_TIMER,
} from './http1-client-timer.ts';
import { type OpenedSocket, openSocket } from './http1-connect.ts';
import { idleTimeoutMs, lastRequestOn, serverKeepsAlive } from './http1-keep-alive.ts';
import {
  type Http1Handler,
  type Http1Request,
  headWithPreread,
  requestHead,
  streamBody,
  validTarget,
} from './http1-request.ts';
import { Http1ResponseReader, type ResponseReaderHost, sharedBufferReads } from './http1-response-reader.ts';
import { defaultHostLine } from './upstream-address.ts';
import { UpstreamFailure } from './upstream-failure.ts';
import type { TlsConnect } from './upstream-tls.ts';

export interface Http1ClientOptions {
  /** `proxy_connect_timeout`. */
  readonly connectTimeout: number;
  readonly keepAliveTimeout: number;
  readonly headersTimeout: number;
  readonly bodyTimeout: number;
  /** The connection is gone (closed by either side, or failed). Once. */
  readonly onDisconnect: () => void;
  /** TLS to an `https://` upstream (upstream-tls.ts); absent or null: plain TCP. */
  readonly tls?: TlsConnect | null;
}

/** Where the connection is. */
const IDLE = 0;
const CONNECTING = 1;
/** A request is out (or going out) and its response head not read yet. */
const HEAD = 2;
const BODY = 3;
const CLOSED = 4;

export class Http1Client implements ResponseReaderHost {
  readonly #host: string;
  readonly #port: number;
  readonly #options: Http1ClientOptions;
  readonly #hostHeader: string;
  #socket: Socket | null = null;
  #opened: OpenedSocket | null = null;
  #state = IDLE;
  #request: Http1Request | null = null;
  #handler: Http1Handler | null = null;
  /** The request (head and body) is written. */
  #sent = false;
  /** The request is the connection's last. */
  #reset = false;
  readonly #timer = new Http1ClientTimer(this);
  readonly #response: Http1ResponseReader;
  /** Stops reading the client's body for the request in progress (set while one streams). */
  #stopBody: (() => void) | null = null;

  /** `host`: a name or an address (IPv6 without brackets), or `unix:/path` (`port` 0). */
  constructor(host: string, port: number, options: Http1ClientOptions) {
    this.#host = host;
    this.#port = port;
    this.#options = options;
    this.#hostHeader = defaultHostLine(host, port);
    this.#response = new Http1ResponseReader(this);
  }

  /** The connection's socket, once it is being made. */
  get socket(): Socket | null {
    return this.#socket;
  }

  // ResponseReaderHost, @internal: what the connection's response reader asks of it

  get handler(): Http1Handler | null {
    return this.#handler;
  }

  bodyStarted(): void {
    this.#state = BODY;
    this.#timer.arm(BODY_TIMER, this.#request!.bodyTimeout ?? this.#options.bodyTimeout);
  }

  refreshTimer(): void {
    this.#timer.refresh();
  }

  responseComplete(clean: boolean): void {
    this.#complete(clean);
  }

  responseFailed(err: Error): void {
    this.#fail(err);
  }

  /** The last response's head came in a read of its own, its body whole in the next (a Nagle server's). */
  get headAlone(): boolean {
    return this.#response.headAlone;
  }

  /** The last response came whole in the read that brought its head, or in the one after. */
  get shortAnswer(): boolean {
    return this.#response.shortAnswer;
  }

  /** Sends a request; the answer comes through `handler`. One at a time. */
  dispatch(request: Http1Request, handler: Http1Handler): void {
    if (this.#state === CLOSED) {
      handler.onError(new UpstreamFailure('destroyed', 'The client is destroyed'));
      return;
    }
    if (!validTarget(request.path)) {
      // what undici refuses too: nothing goes to the server
      handler.onError(new UpstreamFailure('unsendable', 'invalid request path'));
      return;
    }
    this.#request = request;
    this.#handler = handler;
    this.#sent = false;
    this.#response.expect(request.method);
    this.#reset = lastRequestOn(request);
    if (this.#socket === null) {
      this.#connect();
      return;
    }
    this.#write();
  }

  /**
   * @internal A callback of this connection threw (fault-boundary.ts): the connection ends, and so does
   * the client connection of the request it carried, which could not be answered any more.
   */
  faulted(kind: CallbackKind, error: unknown): void {
    const socket = this.#socket;
    const client = this.#handler?.clientSocket ?? null;
    this.#handler = null;
    this.#request = null;
    this.#state = CLOSED;
    this.#timer.clear();
    containFault(kind, error, together(socket, client), client);
  }

  /** Closes the connection now (a request in flight fails as `destroyed`). */
  destroy(): void {
    this.#closed(new UpstreamFailure('destroyed', 'The client is destroyed'));
  }

  #connect(): void {
    this.#state = CONNECTING;
    this.#opened = openSocket(this.#host, this.#port, this.#options.tls ?? null, sharedBufferReads(this), {
      ready: () => {
        if (this.#state === CONNECTING) this.#write();
      },
      ended: () => this.#ended(),
      closed: (err) => this.#closed(err),
      faulted: (kind, error) => this.faulted(kind, error),
    });
    this.#socket = this.#opened.socket;
    this.#timer.arm(CONNECT_TIMER, this.#options.connectTimeout);
  }

  /** Writes the request head (and starts its body). */
  #write(): void {
    const request = this.#request!;
    const handler = this.#handler!;
    this.#state = HEAD;
    this.#timer.arm(HEADERS_TIMER, request.headersTimeout ?? this.#options.headersTimeout);
    // the exchange gives up on its request (its client left, its send timer ran out): this request only
    handler.onConnect((err?: Error) => {
      if (this.#handler === handler) this.#fail(err ?? new UpstreamFailure('aborted', 'Request aborted'));
    });
    if (this.#request !== request) return; // aborted in onConnect
    const head = requestHead(request, this.#hostHeader, this.#reset);
    const socket = this.#socket!;
    const body = request.body;
    if (Buffer.isBuffer(body)) {
      // read whole already: the head and the body leave in one write
      socket.write(Buffer.concat([Buffer.from(head.text, 'latin1'), body]));
      handler.onBodySent(body);
      if (this.#request === request) this.#requestSent();
      return;
    }
    const preread = request.preread;
    if (preread != null && preread.length > 0) socket.write(headWithPreread(head, preread));
    else socket.write(head.text, 'latin1');
    if (body === null) {
      this.#requestSent();
      return;
    }
    this.#stopBody = streamBody(body, socket, head.chunked, {
      current: () => this.#request === request && this.#state !== CLOSED,
      // the head's wait counts from the last piece of the request that went out
      wrote: (chunk) => {
        if (this.#timer.kind === HEADERS_TIMER) this.#timer.refresh();
        this.#handler?.onBodySent(chunk);
      },
      ended: () => {
        if (this.#timer.kind === HEADERS_TIMER) this.#timer.refresh();
        this.#requestSent();
      },
    });
  }

  #requestSent(): void {
    this.#sent = true;
    this.#handler?.onRequestSent();
  }

  /**
   * @internal `bytes` read into `buffer` (shared: valid during this call). False pauses the socket.
   */
  read(buffer: Buffer, bytes: number): boolean {
    const chunk = buffer.subarray(0, bytes);
    if (this.#state === HEAD) this.#response.readHead(chunk);
    else if (this.#state === BODY) this.#response.readBody(chunk);
    // bytes while no request waits for them: the connection cannot carry another
    else this.#closed(null);
    if (this.#state === BODY) this.#handler?.onReadEnd();
    return !this.#response.paused;
  }

  /**
   * The response is whole. `clean`: nothing followed it; else the connection is not reused. The
   * connection is closed, or idle, before the handler hears it, so that the handler may keep it or
   * send the next request on it at once.
   */
  #complete(clean: boolean): void {
    const handler = this.#handler!;
    const head = this.#response.head!;
    this.#response.completed();
    const idleMs = idleTimeoutMs(head, this.#options.keepAliveTimeout);
    const reusable = clean && this.#sent && !this.#reset && serverKeepsAlive(head, idleMs);
    this.#finishRequest();
    if (!reusable) this.#socket?.destroy();
    else {
      this.#state = IDLE;
      this.#timer.arm(IDLE_TIMER, idleMs);
    }
    handler.onComplete();
  }

  #finishRequest(): void {
    this.#stopBody?.();
    this.#stopBody = null;
    this.#request = null;
    this.#handler = null;
    this.#response.clear();
    // the timer stays, unarmed: the next arm re-arms it (no clear and set per request)
    this.#timer.disarm();
    this.#response.resume();
  }

  /** The request ends with `err`, and the connection with it. */
  #fail(err: Error): void {
    const handler = this.#handler;
    this.#finishRequest();
    this.#socket?.destroy();
    handler?.onError(err);
  }

  /** The server ended its side: the end of a body read until close, else an answer cut short. */
  #ended(): void {
    if (this.#state === BODY && this.#response.untilClose) {
      this.#complete(false);
      return;
    }
    if (this.#handler !== null) this.#fail(new UpstreamFailure('closed', 'other side closed'));
    // idle: gone now, not at the socket's 'close', so that no request is sent on it meanwhile
    else this.#closed(null);
  }

  #closed(err: Error | null): void {
    if (this.#state === CLOSED) return;
    if (this.#handler !== null && err === null && this.#state === BODY && this.#response.untilClose) {
      this.#complete(false);
    }
    this.#state = CLOSED;
    const handler = this.#handler;
    this.#finishRequest();
    this.#timer.clear();
    this.#socket?.destroy();
    handler?.onError(err ?? new UpstreamFailure('closed', 'other side closed'));
    this.#options.onDisconnect();
  }

  /** @internal the timer ran out. */
  timedOut(): void {
    const kind = this.#timer.kind;
    if (kind === NO_TIMER) return;
    // a paused body is the client's doing, not the server's: the wait starts again when it resumes
    if (kind === BODY_TIMER && this.#response.paused) return;
    // a body still going out to a server that takes it is a slow client, not a slow server
    if (kind === HEADERS_TIMER && !this.#sent && this.#socket?.writableNeedDrain === false) {
      this.#timer.refresh();
      return;
    }
    this.#timer.disarm();
    if (kind === IDLE_TIMER) {
      this.#closed(null);
      return;
    }
    if (kind === CONNECT_TIMER) {
      // proxy_connect_timeout covers an https:// upstream's handshake too
      const handshaking = this.#opened?.handshaking === true;
      this.#closed(
        handshaking
          ? new UpstreamFailure('handshake-timeout', 'SSL handshake timed out')
          : new UpstreamFailure('connect-timeout', 'Connect Timeout Error'),
      );
      return;
    }
    this.#fail(
      kind === HEADERS_TIMER
        ? new UpstreamFailure('read-timeout', 'Headers Timeout Error')
        : new UpstreamFailure('body-timeout', 'Body Timeout Error'),
    );
  }
}
