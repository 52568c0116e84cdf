/**
 * The HTTP/2 side of a listener: node:http2's server, which never listens itself (the edge listener
 * hands it connections: h2 over TLS, or h2c with prior knowledge), its sessions, and the guards each
 * session's streams go through (h2-stream-guard.ts) before they become requests. A request runs at
 * the end of the turn its frames were read in, so a stream its client reset in the same read (rapid
 * reset) costs its check and nothing more. `keepalive_timeout` closes an idle session;
 * `keepalive_requests` and `keepalive_time` send GOAWAY, as nginx 1.19.7+ does.
 */
import {
  createServer as createHttp2Server,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type Http2Session,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import { aliasConnection, type ClientConnection, connectionOf } from '../contract/client-connection.ts';
import { containFault, failpoint, guarded } from '../contract/fault-boundary.ts';
import { H2StreamGuard } from './h2-stream-guard.ts';

/**
 * The SETTINGS nginx 1.22 sends (ngx_http_v2_send_settings): `http2_max_concurrent_streams`, a stream
 * window of `http2_body_preread_size` (64k; the address's default server's), and the largest frame it
 * reads (NGX_HTTP_V2_MAX_FRAME_SIZE).
 */
const NGINX_H2_SETTINGS = Object.freeze({
  maxConcurrentStreams: 128,
  initialWindowSize: 65_536,
  maxFrameSize: 2 ** 24 - 1,
});
/** RFC 9113 §6.9.1: the largest flow-control window, 2^31 - 1 bytes (NGX_HTTP_V2_MAX_WINDOW). */
const H2_MAX_WINDOW_BYTES = 2 ** 31 - 1;
const H2_MAX_CONCURRENT_STREAMS = NGINX_H2_SETTINGS.maxConcurrentStreams;
/** HTTP/2's error codes (RFC 9113 §7). */
const H2_NO_ERROR = 0x0;
const H2_INTERNAL_ERROR = 0x2;
const H2_REFUSED_STREAM = 0x7;
const H2_ENHANCE_YOUR_CALM = 0xb;
/**
 * The fields node:http2 takes in one header block (its default, 128, refuses more with RST_STREAM):
 * as many as nginx's default `large_client_header_buffers` (4 8k) could hold, one byte each; nginx
 * counts no fields, only their bytes (h2-header-limits.ts), which the session's memory bounds.
 */
const H2_MAX_HEADER_PAIRS = 32_768;

export interface H2Host {
  /** The address's default server's client timers (read per session). */
  readonly clientTimers: ClientTimers;
  /** A graceful close began: new sessions are closed at once. */
  readonly closing: boolean;
  /**
   * What nginx finds too large in a header block of the session on `socket` (its log line's words),
   * or null (`large_client_header_buffers`, engine/http/h2-header-limits.ts).
   */
  headerBlockFault(rawHeaders: readonly string[], socket: Socket): string | null;
  /** A new session's connection (its peer is read once). */
  sessionStarted(connection: ClientConnection): void;
  /** A stream that became a request, at the end of its turn. */
  request(request: Http2ServerRequest, response: Http2ServerResponse): void;
  /** A line about the connection at `info`, in nginx's words. */
  connectionInfo(message: string, socket: Socket): void;
}

export class H2Listener {
  readonly #host: H2Host;
  readonly #server: Http2Server;
  readonly #sessions = new Set<ServerHttp2Session>();
  readonly #guards = new WeakMap<Http2Session, H2StreamGuard>();
  /** Sessions that sent GOAWAY and close once their last stream is over. */
  readonly #closing = new WeakSet<Http2Session>();
  /** Sessions ended for a header block too large: none of their streams becomes a request. */
  readonly #ended = new WeakSet<Http2Session>();
  /** Streams taken and not closed yet, per session. */
  readonly #open = new WeakMap<Http2Session, number>();
  /** Requests arrived in this turn of the event loop, run at its end. */
  #arrived: [Http2ServerRequest, Http2ServerResponse][] = [];
  /** The stream window new sessions advertise (`http2_body_preread_size`). */
  #streamWindow: number;
  /** The connection being handed to node:http2, which starts its session synchronously. */
  #accepting: ClientConnection | null = null;

  constructor(host: H2Host) {
    this.#host = host;
    this.#streamWindow = host.clientTimers.h2BodyPrereadBytes;
    const server = createHttp2Server({
      maxHeaderListPairs: H2_MAX_HEADER_PAIRS,
      settings: { ...NGINX_H2_SETTINGS, initialWindowSize: this.#streamWindow },
    });
    server.on(
      'session',
      guarded(
        'h2',
        (session: ServerHttp2Session) => this.#sessionStarted(session),
        // GOAWAY at once (no stream of it is taken), the session destroyed once node:http2 has
        // finished setting it up (it reads the first bytes next)
        (session) => ({
          destroy: () => {
            session.goaway(H2_INTERNAL_ERROR, 0);
            setImmediate(() => session.destroy());
          },
        }),
        (session) => session.socket as Socket,
      ),
    );
    // before node:http2's own listener makes the stream a request: a stream refused is not one
    server.prependListener(
      'stream',
      guarded(
        'h2',
        (stream: ServerHttp2Stream, _headers: unknown, _flags: number, rawHeaders: string[]) =>
          this.#admit(stream, rawHeaders),
        (stream) => stream,
        (stream) => stream.session?.socket as Socket | null,
      ),
    );
    server.on(
      'request',
      guarded(
        'h2',
        (request: Http2ServerRequest, response: Http2ServerResponse) => this.#arrive(request, response),
        (request) => request.stream,
        (request) => request.stream.session?.socket as Socket | null,
      ),
    );
    this.#server = server;
  }

  /** A connection whose first bytes (or ALPN) said h2. */
  accept(socket: Socket): void {
    this.#accepting = connectionOf(socket);
    try {
      // node documents emitting 'connection' as the way to hand a server a connection
      this.#server.emit('connection', socket);
    } finally {
      this.#accepting = null;
    }
  }

  /** Graceful close: GOAWAY to every session, open streams finish. */
  close(): void {
    for (const session of this.#sessions) session.close();
  }

  /** What is left when the graceful close ran out of time. */
  destroy(): void {
    for (const session of this.#sessions) session.destroy();
  }

  #sessionStarted(session: ServerHttp2Session): void {
    const connection = this.#accepting ?? connectionOf(session.socket as Socket);
    // its requests carry node:http2's stand-in of the socket: it is the same connection
    aliasConnection(session.socket as Socket, connection);
    this.#host.sessionStarted(connection);
    session.setTimeout(this.#host.clientTimers.keepaliveTimeoutMs, () => session.close());
    // nginx opens the connection's window to the most at once (ngx_http_v2_init: a WINDOW_UPDATE
    // after its SETTINGS); streams stay bounded by their own windows. Clients that wait for it stall.
    session.setLocalWindowSize(H2_MAX_WINDOW_BYTES);
    // the stream window is the address's default server's `http2_body_preread_size`; after a reload
    // changed it, this session's SETTINGS say it again, and the next sessions' first ones
    const preread = this.#host.clientTimers.h2BodyPrereadBytes;
    if (preread !== this.#streamWindow) {
      this.#streamWindow = preread;
      this.#server.updateSettings({ initialWindowSize: preread });
      session.settings({ initialWindowSize: preread });
    }
    this.#sessions.add(session);
    this.#guards.set(session, new H2StreamGuard(H2_MAX_CONCURRENT_STREAMS));
    session.once('close', () => this.#sessions.delete(session));
    if (this.#host.closing) session.close();
  }

  /**
   * A header block too large for nginx ends the session, as nginx ends the connection: GOAWAY
   * ENHANCE_YOUR_CALM naming this stream the last, before the guards against streams opened faster
   * than they run (h2-stream-guard.ts), as nginx reads a refused stream's block too.
   */
  #admit(stream: ServerHttp2Stream, rawHeaders: readonly string[]): void {
    const session = stream.session;
    const guard = session === undefined ? undefined : this.#guards.get(session);
    // ending: a stream read after the one too large waits for nothing
    if (session === undefined || guard === undefined || this.#ended.has(session)) return;
    const tooLarge = this.#host.headerBlockFault(rawHeaders, session.socket as Socket);
    if (tooLarge !== null) {
      this.#host.connectionInfo(`${tooLarge} while processing HTTP/2 connection`, session.socket as Socket);
      // the session ends once GOAWAY is out (destroyed at once, a TLS socket would drop it unsent)
      this.#ended.add(session);
      session.goaway(H2_ENHANCE_YOUR_CALM, stream.id ?? 0);
      setImmediate(() => session.destroy());
      return;
    }
    const admission = guard.admit(stream);
    if (admission === 'take') {
      this.#open.set(session, (this.#open.get(session) ?? 0) + 1);
      stream.once('close', () => {
        this.#open.set(session, this.#open.get(session)! - 1);
        this.#closeIfIdle(session);
      });
      return;
    }
    const socket = session.socket as Socket;
    if (admission === 'refuse') {
      if (guard.refusedOnce())
        this.#host.connectionInfo(
          'client sent too many streams at once while processing HTTP/2 connection',
          socket,
        );
      stream.close(H2_REFUSED_STREAM);
      return;
    }
    if (admission === 'close-refused') stream.close(H2_REFUSED_STREAM);
    if (session.closed) return;
    this.#host.connectionInfo(
      admission === 'close-refused'
        ? 'client sent too many refused streams while processing HTTP/2 connection'
        : 'client reset too many streams before they ran while processing HTTP/2 connection',
      socket,
    );
    session.close();
  }

  #arrive(request: Http2ServerRequest, response: Http2ServerResponse): void {
    // refused before it became a request, or reset by its client already, or its session ended
    const session = request.stream.session;
    if (request.stream.closed || session === undefined || this.#ended.has(session)) return;
    const connection = connectionOf(session.socket as Socket);
    connection.countRequest();
    if (!connection.mayKeepAlive(this.#host.clientTimers)) this.#closeAfter(request.stream);
    if (this.#arrived.length === 0) setImmediate(this.#runArrived);
    this.#arrived.push([request, response]);
  }

  /**
   * `stream` is the request past `keepalive_requests` or `keepalive_time`: GOAWAY with it as the last
   * stream taken (as nginx sends it), and the session closed once its streams are over. Not
   * `session.close()` with streams open: on a TLS connection, node:http2 (Node 20) then corrupted
   * the process's heap under load (glibc aborted it within seconds of 50 streams in flight; the
   * test below `keepalive_requests on HTTP/2 under load` saw it in one run of two).
   */
  #closeAfter(stream: ServerHttp2Stream): void {
    const session = stream.session;
    if (session === undefined || this.#closing.has(session)) return;
    this.#closing.add(session);
    session.goaway(H2_NO_ERROR, stream.id ?? 0);
    this.#closeIfIdle(session);
  }

  #closeIfIdle(session: Http2Session): void {
    if (this.#closing.has(session) && (this.#open.get(session) ?? 0) === 0 && !session.closed)
      session.close();
  }

  #runArrived = (): void => {
    const arrived = this.#arrived;
    this.#arrived = [];
    for (const [request, response] of arrived) {
      if (request.stream.closed) continue;
      try {
        failpoint('h2');
        this.#host.request(request, response);
      } catch (error) {
        const socket = (request.stream.session?.socket as Socket | undefined) ?? null;
        containFault('h2', error, request.stream, socket);
      }
    }
  };
}
