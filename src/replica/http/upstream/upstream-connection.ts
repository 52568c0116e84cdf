/**
 * One connection to an upstream server: an HTTP/1.1 client (http1-client.ts) that carries one request
 * at a time, and the handler of that request, which passes every callback on to the exchange. Standing
 * between the two, it sees how the request ends and whether the connection can go back to its group's
 * keepalive cache (upstream-keepalive.ts), and it acts on how the server writes its responses (the
 * client, which sees the reads, tells).
 *
 * Why that matters: a server that writes a response head and then a small body in a second `send`,
 * with Nagle's algorithm on (Python's `http.server`, many Ruby and Java servers), holds the body back
 * until the head is acknowledged; on a connection that has carried requests before, Linux delays that
 * acknowledgement (40 ms or more) in the hope of sending it with the next request. Every request
 * reusing such a connection waits that long. A fresh connection acknowledges at once. So a response
 * whose head arrived in a read of its own and whose body came, complete, in the next one marks its
 * server (`UpstreamPeer.sawHeadAlone`): for a while its requests get a connection of their own, closed
 * after the answer, as nginx does without `keepalive`. On those fresh connections the answer often
 * comes whole, read late, and cannot show the pattern: any short answer keeps the mark (a server whose
 * long answers span reads loses it a minute later).
 */
import type { Socket } from 'node:net';
import type { Clock } from '../../../shared/clock.ts';
import { Http1Client } from '../wire/http1-client.ts';
import type { Http1Handler, Http1Request } from '../wire/http1-request.ts';
import { type PeerTls, type SessionHolder, tlsConnect } from './peer-tls.ts';
import type { TryRecord } from './try-record.ts';
import type { CachedConnection, KeepaliveCache } from './upstream-keepalive.ts';

/** What a connection needs of its server (`UpstreamPeer` in upstream-group.ts). */
export interface ConnectionPeer extends SessionHolder {
  readonly host: string;
  readonly port: number;
  /** The server wrote a response head alone and its body after it (see above). */
  sawHeadAlone(): void;
  /** A response came whole in at most two reads: the server's mark, if it has one, holds on. */
  answeredShort(): void;
}

/** The exchange's side of a request: the client's handler callbacks, as the exchange has them. */
export interface ExchangeHandler extends Http1Handler {
  /** Set before the request goes out: it goes on a connection that carried requests before. */
  reusedConnection: boolean;
  /** The request's upstream states, told what this connection sees of its try. */
  readonly tryRecord?: TryRecord;
}

/** Settings of a connection shared by the server's connections. */
export interface ConnectionOptions {
  /** `proxy_connect_timeout`. */
  readonly connectTimeoutMs: number;
  /** `keepalive_timeout`: the client closes the connection after this long idle. */
  readonly idleTimeoutMs: number;
  /** `proxy_read_timeout` for requests that do not name one. */
  readonly readTimeoutMs: number;
  /** For `keepalive_time`. */
  readonly clock: Clock;
}

export class UpstreamConnection implements CachedConnection<UpstreamConnection>, Http1Handler {
  readonly peer: ConnectionPeer;
  readonly cache: KeepaliveCache<UpstreamConnection>;
  readonly poolKey: string;
  /** When it was made (nginx's `c->start_time`, for `keepalive_time`). */
  readonly startedMs: number;
  /** Requests it has carried (nginx's `c->requests`, for `keepalive_requests`). */
  requests = 0;
  /** Links of the cache's list (most recently used first); null when not cached. */
  newer: UpstreamConnection | null = null;
  older: UpstreamConnection | null = null;
  cached = false;

  readonly #client: Http1Client;
  readonly #clock: Clock;
  #handler: ExchangeHandler | null = null;
  /** The request in progress is the connection's last (it was sent with `Connection: close`). */
  #last = false;
  #gone = false;
  /** The socket's byte counts when the request in progress was sent (`$upstream_bytes_*`). */
  #readAt = 0;
  #writtenAt = 0;

  /** `tls`: the request's TLS to an `https://` upstream (peer-tls.ts); null: plain TCP. */
  constructor(
    peer: ConnectionPeer,
    cache: KeepaliveCache<UpstreamConnection>,
    options: ConnectionOptions,
    tls: PeerTls | null = null,
  ) {
    this.peer = peer;
    this.cache = cache;
    this.poolKey = tls?.poolKey ?? '';
    this.#clock = options.clock;
    this.startedMs = options.clock.nowMs();
    this.#client = new Http1Client(peer.host, peer.port, {
      connectTimeout: options.connectTimeoutMs,
      keepAliveTimeout: options.idleTimeoutMs,
      headersTimeout: options.readTimeoutMs,
      bodyTimeout: options.readTimeoutMs,
      onDisconnect: () => this.#disconnected(),
      tls: tls === null ? null : tlsConnect(tls, peer),
    });
  }

  /**
   * Sends a request on this connection. `last`: it is the connection's last (sent with
   * `Connection: close`, the connection closed after the answer).
   */
  dispatch(request: Http1Request, handler: ExchangeHandler, last: boolean): void {
    this.requests++;
    handler.reusedConnection = this.requests > 1;
    this.#handler = handler;
    this.#last = last;
    const socket = this.#client.socket;
    this.#readAt = socket?.bytesRead ?? 0;
    this.#writtenAt = socket?.bytesWritten ?? 0;
    this.#client.dispatch(last ? { ...request, reset: true } : request, this);
  }

  /** Closes it now: it is idle, or its request failed. */
  close(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.cache.forget(this);
    this.#client.destroy();
  }

  /** `close()`, resolved once the socket is closed. */
  closeAndWait(): Promise<void> {
    const socket = this.#client.socket;
    if (socket === null || socket.closed) {
      this.close();
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      socket.once('close', () => resolve());
      this.close();
    });
  }

  // the client's handler: everything goes on to the exchange

  get clientSocket(): Socket | null {
    return this.#handler?.clientSocket ?? null;
  }

  onConnect(abort: (err?: Error) => void): void {
    const socket = this.#client.socket;
    this.#handler!.tryRecord?.connected(socket?.remoteAddress, socket?.remotePort);
    this.#handler!.onConnect(abort);
  }

  onBodySent(chunk: Buffer): void {
    this.#handler!.onBodySent(chunk);
  }

  onRequestSent(): void {
    this.#handler!.onRequestSent();
  }

  onHeaders(statusCode: number, rawHeaders: string[], resume: () => void, statusText: string): boolean {
    if (statusCode >= 200) this.#handler!.tryRecord?.head(statusCode, rawHeaders);
    return this.#handler!.onHeaders(statusCode, rawHeaders, resume, statusText);
  }

  onData(chunk: Buffer): boolean {
    this.#handler!.tryRecord?.data(chunk.length);
    return this.#handler!.onData(chunk);
  }

  onReadEnd(): void {
    this.#handler!.onReadEnd();
  }

  onComplete(): void {
    const handler = this.#handler!;
    this.#handler = null;
    // the whole body in the one read after the head's: the pattern that waits on a reused connection
    const headAlone = this.#client.headAlone;
    this.#countBytes(handler);
    handler.onComplete();
    if (headAlone) this.peer.sawHeadAlone();
    else if (this.#client.shortAnswer) this.peer.answeredShort();
    if (this.#last || headAlone) {
      this.close();
      return;
    }
    // back to the cache, unless the client closed it (the server said `close`, an HTTP/1.0 answer)
    if (this.#gone) return;
    const socket = this.#client.socket;
    if (socket === null || socket.destroyed) this.close();
    else this.cache.keep(this, this.#clock.nowMs());
  }

  onError(err: Error): void {
    const handler = this.#handler;
    this.#handler = null;
    if (handler !== null) this.#countBytes(handler);
    handler?.onError(err);
    this.close();
  }

  /** What the socket read and wrote for the request (`$upstream_bytes_received`, `_sent`). */
  #countBytes(handler: ExchangeHandler): void {
    const socket = this.#client.socket;
    if (socket === null || handler.tryRecord === undefined) return;
    handler.tryRecord.bytes(socket.bytesRead - this.#readAt, socket.bytesWritten - this.#writtenAt);
  }

  #disconnected(): void {
    // the server closed it, the client's idle timer did, or it failed: it carries nothing more
    this.#gone = true;
    this.cache.forget(this);
  }
}
