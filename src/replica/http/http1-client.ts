/**
 * One HTTP/1.1 connection to an upstream server, carrying one request at a time: the request head
 * written in one piece, its body after it as it comes (http1-request.ts), the response read straight
 * off the socket (http1-response.ts) and handed on through the callbacks of undici's raw dispatch
 * handler, which the exchange implements. It replaced an undici `Client` per connection: the request
 * objects, queue, checks and stream plumbing of a general client cost a proxied request about a fifth
 * of its CPU, and the data path needs none of them (node:http validated the client's head; the proxy
 * writes the rest).
 * Reads land in one buffer shared by every upstream socket (`onread`: no stream per read); what is kept
 * of them is copied, a body into memory used again once written (body-buffers.ts). Failures are
 * undici's error classes' names and codes (http1-errors.ts).
 *
 * Timers are undici's client's: a connection within `connectTimeout`, the head within `headersTimeout`
 * of the request going out, each piece of the body within `bodyTimeout` of the last, and an idle
 * connection closes after `keepAliveTimeout`, or 2 s before the server's `Keep-Alive: timeout=n` would
 * close it, so that no request goes out on a connection the server is closing. One timer per
 * connection, re-armed.
 */
import { connect, type Socket } from 'node:net';
import { copyBodyChunk } from './body-buffers.ts';
import { type CallbackKind, containFault, failpoint, together } from './fault-boundary.ts';
import {
  BodyTimeoutError,
  ClientDestroyedError,
  ConnectTimeoutError,
  HeadersOverflowError,
  HeadersTimeoutError,
  InvalidArgumentError,
  RequestAbortedError,
  SocketError,
} from './http1-errors.ts';
import {
  type Http1Handler,
  type Http1Request,
  requestHead,
  streamBody,
  validTarget,
} from './http1-request.ts';
import {
  CHUNKED,
  ChunkedDecoder,
  type Framing,
  LENGTH,
  NO_BODY,
  parseResponseHead,
  type ResponseHead,
  UNTIL_CLOSE,
} from './http1-response.ts';

export interface Http1ClientOptions {
  /** `proxy_connect_timeout`. */
  readonly connectTimeout: number;
  readonly keepAliveTimeout: number;
  readonly headersTimeout: number;
  readonly bodyTimeout: number;
  /** The connection is gone (closed by either side, or failed). Once. */
  readonly onDisconnect: () => void;
}

/** Longest response head read (node's and undici's default). */
const MAX_HEAD_BYTES = 16 * 1024;
/** How long before the server's announced idle timeout a connection stops being reused (undici's). */
const KEEP_ALIVE_THRESHOLD_MS = 2000;
const CRLF_CRLF = Buffer.from('\r\n\r\n');
/** Every upstream socket reads into this: a read is handled before the next one, and what is kept is copied. */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** A read of the upstream socket, for `client` (one function per connection, made once). */
function readerOf(client: Http1Client): (bytes: number, buffer: Uint8Array) => boolean {
  return (bytes, buffer) => {
    try {
      failpoint('upstream');
      return client.read(buffer as Buffer, bytes);
    } catch (error) {
      client.faulted('upstream', error);
      return false;
    }
  };
}

/** Where the connection is. */
const IDLE = 0;
const CONNECTING = 1;
/** A request is out (or going out) and its response head not read yet. */
const HEAD = 2;
const BODY = 3;
const CLOSED = 4;

/** What the one timer is armed for. */
const NO_TIMER = 0;
const HEADERS_TIMER = 1;
const BODY_TIMER = 2;
const IDLE_TIMER = 3;
const CONNECT_TIMER = 4;

function onTimer(client: Http1Client): void {
  try {
    failpoint('timer');
    client.timedOut();
  } catch (error) {
    client.faulted('timer', error);
  }
}

export class Http1Client {
  readonly #host: string;
  readonly #port: number;
  readonly #options: Http1ClientOptions;
  readonly #hostHeader: string;
  #socket: Socket | null = null;
  #state = IDLE;
  #request: Http1Request | null = null;
  #handler: Http1Handler | null = null;
  /** The request (head and body) is written. */
  #sent = false;
  #reset = false;
  #timer: NodeJS.Timeout | null = null;
  #timerKind = NO_TIMER;
  /** The delay the timer was last set with (a re-arm with the same one only refreshes it). */
  #timerMs = 0;
  /** Response bytes before the end of a head. */
  #headBuffer: Buffer | null = null;
  #head: ResponseHead | null = null;
  #remaining = 0;
  #chunked: ChunkedDecoder | null = null;
  /** The read that brought the response head brought none of a body that follows. */
  #headReadAlone = false;
  /** Reads of the response that began after the head's. */
  #bodyReads = 0;
  /** The last response came whole in at most two reads (set when it completes). */
  #shortAnswer = false;
  #paused = false;
  readonly #resume = (): void => this.#resumeReading();
  /** Stops reading the client's body for the request in progress (set while one streams). */
  #stopBody: (() => void) | null = null;

  /** `host`: a name or an address (IPv6 without brackets). */
  constructor(host: string, port: number, options: Http1ClientOptions) {
    this.#host = host;
    this.#port = port;
    this.#options = options;
    this.#hostHeader = `host: ${host.includes(':') ? `[${host}]` : host}:${port}\r\n`;
  }

  /** The connection's socket, once it is being made. */
  get socket(): Socket | null {
    return this.#socket;
  }

  /**
   * The last response came as a server with Nagle's algorithm on writes a head and a small body in two
   * `send`s: the head in a read of its own, the whole body in the next read (upstream-connection.ts).
   */
  get headAlone(): boolean {
    return this.#headReadAlone && this.#shortAnswer;
  }

  /**
   * The last response came whole in the read that brought its head, or in the one after: it does not
   * contradict a server marked for writing heads alone (a fresh connection's answer often comes whole,
   * read late).
   */
  get shortAnswer(): boolean {
    return this.#shortAnswer;
  }

  /** Sends a request; the answer comes through `handler`. One at a time. */
  dispatch(request: Http1Request, handler: Http1Handler): void {
    if (this.#state === CLOSED) {
      handler.onError(new ClientDestroyedError());
      return;
    }
    if (!validTarget(request.path)) {
      // what undici refuses too: nothing goes to the server
      handler.onError(new InvalidArgumentError('invalid request path'));
      return;
    }
    this.#request = request;
    this.#handler = handler;
    this.#sent = false;
    this.#head = null;
    this.#headBuffer = null;
    this.#chunked = null;
    this.#reset = request.reset === true || request.method === 'HEAD';
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
    this.#disarm();
    containFault(kind, error, together(socket, client), client);
  }

  /** Closes the connection now (a request in flight fails with undici's `ClientDestroyedError`). */
  destroy(): void {
    this.#closed(new ClientDestroyedError());
  }

  #connect(): void {
    this.#state = CONNECTING;
    // TCP_NODELAY once connected (set on the socket before it, it was set twice); no TCP keep-alive
    // probes (nginx's `proxy_socket_keepalive off`): Node's default
    const socket = connect({
      host: this.#host,
      port: this.#port,
      noDelay: true,
      onread: { buffer: READ_BUFFER, callback: readerOf(this) },
    });
    this.#socket = socket;
    this.#arm(CONNECT_TIMER, this.#options.connectTimeout);
    socket.once('connect', () => {
      try {
        if (this.#state === CONNECTING) this.#write();
      } catch (error) {
        this.faulted('upstream', error);
      }
    });
    socket.on('end', () => {
      try {
        this.#ended();
      } catch (error) {
        this.faulted('upstream', error);
      }
    });
    socket.on('error', (err) => {
      try {
        this.#closed(err);
      } catch (error) {
        this.faulted('upstream', error);
      }
    });
    socket.on('close', () => {
      try {
        this.#closed(null);
      } catch (error) {
        this.faulted('upstream', error);
      }
    });
  }

  /** Writes the request head (and starts its body). */
  #write(): void {
    const request = this.#request!;
    const handler = this.#handler!;
    this.#state = HEAD;
    this.#arm(HEADERS_TIMER, request.headersTimeout ?? this.#options.headersTimeout);
    // the exchange gives up on its request (its client left, its send timer ran out): this request only
    handler.onConnect((err?: Error) => {
      if (this.#handler === handler) this.#fail(err ?? new RequestAbortedError());
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
    socket.write(head.text, 'latin1');
    if (body === null) {
      this.#requestSent();
      return;
    }
    this.#stopBody = streamBody(body, socket, head.chunked, {
      current: () => this.#request === request && this.#state !== CLOSED,
      // the head's wait counts from the last piece of the request that went out
      wrote: (chunk) => {
        if (this.#timerKind === HEADERS_TIMER) this.#timer?.refresh();
        this.#handler?.onBodySent(chunk);
      },
      ended: () => {
        if (this.#timerKind === HEADERS_TIMER) this.#timer?.refresh();
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
    if (this.#state === HEAD) this.#readHead(chunk);
    else if (this.#state === BODY) {
      this.#bodyReads++;
      this.#readBody(chunk);
    }
    // bytes while no request waits for them: the connection cannot carry another
    else this.#closed(null);
    if (this.#state === BODY) this.#handler?.onReadEnd();
    return !this.#paused;
  }

  #readHead(chunk: Buffer): void {
    // `chunk` is in the shared read buffer; a concatenation is the client's own
    const owned = this.#headBuffer !== null;
    let buffer = owned ? Buffer.concat([this.#headBuffer!, chunk]) : chunk;
    for (;;) {
      const end = buffer.indexOf(CRLF_CRLF);
      if (end === -1 || end > MAX_HEAD_BYTES) {
        if (end > MAX_HEAD_BYTES || buffer.length > MAX_HEAD_BYTES) {
          this.#fail(new HeadersOverflowError());
          return;
        }
        this.#headBuffer = owned ? buffer : Buffer.from(buffer);
        return;
      }
      let head: ResponseHead;
      try {
        head = parseResponseHead(buffer, end, this.#request!.method !== 'HEAD');
      } catch (err) {
        this.#fail(err as Error);
        return;
      }
      const rest = buffer.subarray(end + 4);
      // 1xx answers before the final one are not relayed
      if (head.status < 200) {
        if (head.status === 101) {
          this.#fail(new SocketError('bad upgrade'));
          return;
        }
        buffer = rest;
        if (buffer.length === 0) {
          this.#headBuffer = null;
          return;
        }
        continue;
      }
      this.#headBuffer = null;
      this.#startBody(head, rest);
      return;
    }
  }

  #startBody(head: ResponseHead, rest: Buffer): void {
    this.#head = head;
    this.#state = BODY;
    this.#remaining = head.contentLength;
    this.#headReadAlone = head.framing !== NO_BODY && rest.length === 0;
    this.#bodyReads = 0;
    if (head.framing === CHUNKED) this.#chunked = new ChunkedDecoder();
    this.#arm(BODY_TIMER, this.#request!.bodyTimeout ?? this.#options.bodyTimeout);
    const handler = this.#handler!;
    if (!handler.onHeaders(head.status, head.rawHeaders, this.#resume, head.statusText)) this.#pause();
    if (this.#handler !== handler) return;
    if (head.framing === NO_BODY) {
      this.#complete(rest.length === 0);
      return;
    }
    if (rest.length !== 0) this.#readBody(rest);
  }

  #readBody(chunk: Buffer): void {
    this.#timer?.refresh();
    const handler = this.#handler!;
    const framing: Framing = this.#head!.framing;
    // what the handler gets it may keep: copies out of the shared read buffer (body-buffers.ts)
    if (framing === UNTIL_CLOSE) {
      if (!handler.onData(copyBodyChunk(chunk))) this.#pause();
      return;
    }
    if (framing === LENGTH) {
      const remaining = this.#remaining;
      if (chunk.length <= remaining) {
        this.#remaining = remaining - chunk.length;
        if (!handler.onData(copyBodyChunk(chunk))) this.#pause();
        if (this.#remaining === 0 && this.#handler === handler) this.#complete(true);
        return;
      }
      // more than the body: the rest is no answer to anything
      handler.onData(copyBodyChunk(chunk.subarray(0, remaining)));
      this.#remaining = 0;
      if (this.#handler === handler) this.#complete(false);
      return;
    }
    const decoder = this.#chunked!;
    let done: boolean;
    let wantMore = true;
    try {
      done = decoder.push(chunk, (data) => {
        if (this.#handler === handler && !handler.onData(copyBodyChunk(data))) wantMore = false;
      });
    } catch (err) {
      this.#fail(err as Error);
      return;
    }
    if (!wantMore) this.#pause();
    if (done && this.#handler === handler) this.#complete(decoder.consumed === chunk.length);
  }

  /**
   * The response is whole. `clean`: nothing followed it; else the connection is not reused. The
   * connection is closed, or idle, before the handler hears it, so that the handler may keep it or
   * send the next request on it at once.
   */
  #complete(clean: boolean): void {
    const handler = this.#handler!;
    const head = this.#head!;
    this.#shortAnswer = this.#bodyReads <= 1;
    let idleMs = this.#options.keepAliveTimeout;
    if (head.keepAliveTimeoutMs !== -1)
      idleMs = Math.min(idleMs, head.keepAliveTimeoutMs - KEEP_ALIVE_THRESHOLD_MS);
    const reusable = clean && this.#sent && !this.#reset && head.keepAlive && idleMs > 0;
    this.#finishRequest();
    if (!reusable) this.#socket?.destroy();
    else {
      this.#state = IDLE;
      this.#arm(IDLE_TIMER, idleMs);
    }
    handler.onComplete();
  }

  #finishRequest(): void {
    this.#stopBody?.();
    this.#stopBody = null;
    this.#request = null;
    this.#handler = null;
    this.#head = null;
    this.#chunked = null;
    // the timer stays, unarmed: the next arm re-arms it (no clear and set per request)
    this.#timerKind = NO_TIMER;
    if (this.#paused) this.#resumeReading();
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
    if (this.#state === BODY && this.#head!.framing === UNTIL_CLOSE) {
      this.#complete(false);
      return;
    }
    if (this.#handler !== null) this.#fail(new SocketError('other side closed'));
    // idle: gone now, not at the socket's 'close', so that no request is sent on it meanwhile
    else this.#closed(null);
  }

  #closed(err: Error | null): void {
    if (this.#state === CLOSED) return;
    if (
      this.#handler !== null &&
      err === null &&
      this.#state === BODY &&
      this.#head!.framing === UNTIL_CLOSE
    ) {
      this.#complete(false);
    }
    this.#state = CLOSED;
    const handler = this.#handler;
    this.#finishRequest();
    this.#disarm();
    this.#socket?.destroy();
    handler?.onError(err ?? new SocketError('other side closed'));
    this.#options.onDisconnect();
  }

  /** @internal the timer ran out. */
  timedOut(): void {
    const kind = this.#timerKind;
    if (kind === NO_TIMER) return;
    // a paused body is the client's doing, not the server's: the wait starts again when it resumes
    if (kind === BODY_TIMER && this.#paused) return;
    // a body still going out to a server that takes it is a slow client, not a slow server
    if (kind === HEADERS_TIMER && !this.#sent && this.#socket?.writableNeedDrain === false) {
      this.#timer?.refresh();
      return;
    }
    this.#timerKind = NO_TIMER;
    if (kind === IDLE_TIMER) {
      this.#closed(null);
      return;
    }
    if (kind === CONNECT_TIMER) {
      this.#closed(new ConnectTimeoutError());
      return;
    }
    this.#fail(kind === HEADERS_TIMER ? new HeadersTimeoutError() : new BodyTimeoutError());
  }

  #arm(kind: number, ms: number): void {
    this.#timerKind = kind;
    if (!(ms > 0)) {
      this.#disarm();
      return;
    }
    const timer = this.#timer;
    if (timer !== null && this.#timerMs === ms) {
      timer.refresh();
      return;
    }
    if (timer !== null) clearTimeout(timer);
    this.#timerMs = ms;
    this.#timer = setTimeout(onTimer, ms, this);
    this.#timer.unref();
  }

  #disarm(): void {
    this.#timerKind = NO_TIMER;
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
  }

  #pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#socket?.pause();
  }

  #resumeReading(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#timer?.refresh();
    this.#socket?.resume();
  }
}
