/**
 * The replica's HTTP listener (no framework on the data path): it resolves the client address, asks
 * the `decide` hook, and answers, holds or forwards each request. HTTP/1.1 connections start out read
 * by the replica itself (http1-connection.ts) and go to a `node:http` server, which never listens
 * itself, at the first head that is not the common kind; HTTP/2 streams are node:http2's. Upgrade
 * requests (WebSocket) to a location that tunnels them take the same path up to the upstream
 * (upgrade-exchange.ts); to any other location they are plain requests (upgrade-replay.ts).
 *
 * Graceful close: stop accepting, let in-flight and held requests finish (their answers carry
 * `Connection: close`), close keep-alive connections as they fall idle, end open tunnels at once,
 * then resolve.
 *
 * Client input nginx refuses is answered as nginx answers it, and never reaches a server: node:http
 * is given room for any head nginx would read (`maxHeaderSize` from the hook's rules, no cap on the
 * header count, no Host check of its own), the hook refuses what nginx refuses of a parsed head, and
 * a head the parser gives up on (too large, a version or syntax it rejects, CONNECT) gets nginx's
 * page, then a lingering close (client-error.ts, lingering-close.ts).
 */

import { createServer, type IncomingMessage, type Server, ServerResponse } from 'node:http';
import {
  type AddressInfo,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import type { RealIpConf } from '../../config/model.ts';
import { type ClientTimers, NGINX_CLIENT_TIMERS } from '../../engine/http/client-timers.ts';
import { type NginxAddr, normalizePeerAddress, parseAddr } from '../../engine/net/address-text.ts';
import { bindError } from '../../shared/bind-error.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import { answerClientError, type ClientError } from './client-error.ts';
import {
  type ClientConnection,
  connectionOf,
  type PeerInfo,
  type RemoteAddress,
} from './contract/client-connection.ts';
import type { ClientRequest } from './contract/client-request.ts';
import type { ClientResponse } from './contract/client-response.ts';
import type {
  ClientClosedCallback,
  ClientInputRules,
  CompletedCallback,
  DecideHook,
  Decision,
  DownstreamRequest,
  UpstreamErrorCallback,
} from './decision.ts';
import { type EdgeConf, EdgeListener } from './edge-listener.ts';
import { guarded } from './fault-boundary.ts';
import { H2Listener } from './h2-listener.ts';
import { H2Request, H2Response } from './h2-request.ts';
import { Http1Connection, type Http1Host } from './http1-connection.ts';
import { isLingering } from './lingering-close.ts';
import { Exchange } from './proxy-exchange.ts';
import { compileRealIp, type RealIpResolver } from './real-ip.ts';
import type { Tunnel } from './tunnel.ts';
import { UpgradeExchange, type UpgradeHost } from './upgrade-exchange.ts';
import { replayWithoutUpgrade } from './upgrade-replay.ts';
import type { UpstreamGroup, UpstreamLookup } from './upstream-group.ts';

export interface ProxyServerOptions<D extends Decision = Decision> {
  /** The limiting hook, called once per request. */
  readonly decide: DecideHook<D>;
  /**
   * Whether the request's location tunnels protocol upgrades (nginx: `proxy_http_version 1.1` with
   * `proxy_set_header Upgrade`/`Connection`). Called before `decide`, for upgrade requests only.
   * Absent: no location does, and upgrade requests are forwarded as plain ones.
   */
  readonly canUpgrade?: (ctx: DownstreamRequest) => boolean;
  /** Every upstream group a decision may name. The owner closes them after `close()`. */
  readonly upstreams: UpstreamLookup;
  /** The group for `pass`/`delay` decisions that name none. */
  readonly defaultUpstream?: string;
  /** `set_real_ip_from` / `real_ip_header` / `real_ip_recursive` of this listener. */
  readonly realIp?: RealIpConf | null;
  /** A client closed before its response was complete (nginx's 499), held or forwarding. */
  readonly onClientClosed?: ClientClosedCallback<D>;
  /** An upstream failed a forwarded request (the client got 502/504 or a cut response), in nginx's words. */
  readonly onUpstreamError?: UpstreamErrorCallback<D>;
  /** Every exchange once it is over: status (444, 499), body bytes, time — for access logs and metrics. */
  readonly onCompleted?: CompletedCallback<D>;
  /** The hook threw: the request got a 500; this hears why. */
  readonly onHookError?: (err: unknown) => void;
  /**
   * The address's default server's client connection timers (`client_header_timeout`,
   * `keepalive_*`, …), read per connection (a reload counts); answers the hook gave none of their
   * own go by them too. Absent: nginx's defaults, or the two below.
   */
  readonly clientTimers?: () => ClientTimers;
  /** nginx `keepalive_timeout` (75 s), without `clientTimers`. */
  readonly keepAliveTimeoutMs?: number;
  /** nginx `client_header_timeout` (60 s), without `clientTimers`. */
  readonly headersTimeoutMs?: number;
  /** `$scheme`, sent as X-Forwarded-Proto. */
  readonly scheme?: string;
  /** An `ssl` or `http2` address: TLS, ALPN and h2 in front of the HTTP/1 server (edge-listener.ts). */
  readonly edge?: EdgeConf;
  /**
   * A line about a connection rather than a request, in nginx's error-log words (at `info`): a TLS
   * handshake that failed, an HTTP/2 client refused for the streams it opens.
   */
  readonly onConnectionInfo?: (message: string, socket: Socket) => void;
}

/** node:http's default `maxHeaderSize` (16 KiB), when no rules set one. */
const DEFAULT_MAX_HEADER_BYTES = 16 * 1024;

/**
 * node:http emits a pipelined request as soon as it has read it, while the answer before it is still
 * in progress; nginx reads a connection's next request only once its answer is out. So a request runs
 * when its response is given the connection (node:http queues the responses): after the answer before
 * it, and never if that answer ended the connection (a refusal that closes it: nginx never reads what
 * follows). False: `run` is called then instead.
 */
function inTurn(
  req: IncomingMessage,
  res: ServerResponse,
  run: (req: IncomingMessage, res: ServerResponse) => void,
): boolean {
  if (res.socket !== null) return true;
  res.once(
    'socket',
    guarded(
      'client',
      () => run(req, res),
      () => req.socket,
    ),
  );
  return false;
}

export class ProxyServer<D extends Decision = Decision> implements UpgradeHost<D> {
  readonly server: Server;
  readonly upstreams: UpstreamLookup;
  readonly defaultGroup: UpstreamGroup | null;
  readonly scheme: string;
  readonly onClientClosed: ClientClosedCallback<D> | null;
  readonly onUpstreamError: UpstreamErrorCallback<D> | null;
  readonly onCompleted: CompletedCallback<D> | null;
  readonly clientInput: ClientInputRules<D> | null;
  readonly #decide: DecideHook<D>;
  #realIp: RealIpResolver | null;
  readonly #onHookError: ((err: unknown) => void) | null;
  readonly #canUpgrade: ((ctx: DownstreamRequest) => boolean) | null;
  /** Connections taken by an upgrade request: in its exchange, then in its tunnel. */
  readonly #upgrading = new Set<Socket>();
  readonly #tunnels = new Set<Tunnel>();
  /** Requests currently held by a `delay` decision. */
  held = 0;
  readonly #edgeConf: EdgeConf | null;
  #edge: EdgeListener | null = null;
  /** The listening socket of a plain address (an `ssl`/`http2` one listens through the edge). */
  #plainListener: NetServer | null = null;
  /** HTTP/1 connections read by the replica itself (until node:http takes them). */
  readonly #http1 = new Set<Http1Connection>();
  readonly #http1Host: Http1Host;
  #h2: H2Listener | null = null;
  readonly #onConnectionInfo: ((message: string, socket: Socket) => void) | null;
  #closing = false;
  #closed: Promise<void> | null = null;
  readonly #timers: () => ClientTimers;

  constructor(options: ProxyServerOptions<D>) {
    const fixed = Object.freeze({
      ...NGINX_CLIENT_TIMERS,
      headerTimeoutMs: options.headersTimeoutMs ?? NGINX_CLIENT_TIMERS.headerTimeoutMs,
      keepaliveTimeoutMs: options.keepAliveTimeoutMs ?? NGINX_CLIENT_TIMERS.keepaliveTimeoutMs,
    });
    this.#timers = options.clientTimers ?? (() => fixed);
    this.upstreams = options.upstreams;
    this.defaultGroup =
      options.defaultUpstream === undefined ? null : (options.upstreams.get(options.defaultUpstream) ?? null);
    if (options.defaultUpstream !== undefined && this.defaultGroup === null) {
      throw new LimitswitchError('InternalError', `unknown upstream "${options.defaultUpstream}"`);
    }
    this.scheme = options.scheme ?? 'http';
    this.onClientClosed = options.onClientClosed ?? null;
    this.onUpstreamError = options.onUpstreamError ?? null;
    this.onCompleted = options.onCompleted ?? null;
    this.#decide = options.decide;
    this.clientInput = options.decide.client ?? null;
    this.#realIp = compileRealIp(options.realIp);
    this.#onHookError = options.onHookError ?? null;
    this.#canUpgrade = options.canUpgrade ?? null;
    this.server = createServer(
      {
        noDelay: true,
        requestTimeout: 0,
        headersTimeout: this.#timers().headerTimeoutMs,
        // node:http checks head timeouts this often (its default, 30 s, made 60 s up to 90 s)
        connectionsCheckingInterval: 1000,
        // nginx's own checks decide (the hook): HTTP/1.1 without Host is its 400, with its page
        requireHostHeader: false,
        maxHeaderSize: this.clientInput?.maxHeaderBytes(),
      },
      guarded('client', this.#onRequest, (req: IncomingMessage) => req.socket),
    );
    // nginx passes every header line on; the head's size is bounded by maxHeaderSize
    this.server.maxHeadersCount = 0;
    this.server.keepAliveTimeout = this.#timers().keepaliveTimeoutMs;
    // before node:http's own listener, which reads maxHeaderSize for the connection's parser
    this.server.prependListener('connection', this.#perConnection);
    // node:http calls these from its reads of a client connection: a throw ends that connection
    const socketOf = (req: IncomingMessage) => req.socket;
    this.server.on(
      'connection',
      guarded('client', this.#onConnection, (socket: Socket) => socket),
    );
    this.server.on(
      'clientError',
      guarded('client', this.#onClientError, (_err, socket: Socket) => socket),
    );
    this.server.on('checkContinue', guarded('client', this.#onCheckContinue, socketOf));
    // another expectation is a request like any other: nginx ignores it (node:http would answer 417
    // and read the connection on, where nginx may refuse the request and close)
    this.server.on('checkExpectation', guarded('client', this.#onRequest, socketOf));
    this.server.on('connect', guarded('client', this.#onConnect, socketOf));
    if (this.#canUpgrade !== null) this.server.on('upgrade', guarded('client', this.#onUpgrade, socketOf));
    this.#edgeConf = options.edge ?? null;
    this.#onConnectionInfo = options.onConnectionInfo ?? null;
    this.#http1Host = this.#createHttp1Host();
  }

  #createHttp1Host(): Http1Host {
    const proxy = this;
    const server = this.server;
    return {
      get keepAliveTimeoutMs() {
        return proxy.#timers().keepaliveTimeoutMs;
      },
      get headersTimeoutMs() {
        return proxy.#timers().headerTimeoutMs;
      },
      get closing() {
        return proxy.closing;
      },
      maxHeadBytes: () => this.clientInput?.maxHeaderBytes() ?? DEFAULT_MAX_HEADER_BYTES,
      request: (req, res) => this.#exchange(req, res),
      bodyCut: (res) => {
        const exchange = res.socket === null ? null : connectionOf(res.socket).exchange;
        if (exchange === null || !exchange.bodyFailed('HPE_INVALID_EOF_STATE')) res.destroy();
      },
      // node documents emitting 'connection' as the way to hand a server a connection
      handOver: (socket) => server.emit('connection', socket),
      released: (connection) => this.#http1.delete(connection),
    };
  }

  /** New servers and certificates for an `ssl`/`http2` address (a reload); open connections keep theirs. */
  setEdge(conf: EdgeConf): void {
    this.#edge?.update(conf);
  }

  /**
   * New realip settings (a configuration reload). Connections already open keep the trust their peer
   * was given; the header is read with the new settings.
   */
  setRealIp(realIp: RealIpConf | null): void {
    this.#realIp = compileRealIp(realIp);
  }

  get closing(): boolean {
    return this.#closing;
  }

  /** Starts listening; resolves with the bound address, rejects with nginx's `bind() … failed`. */
  listen(port: number, host = '127.0.0.1'): Promise<AddressInfo> {
    const listener =
      this.#edgeConf === null ? this.#createPlainListener() : this.#createEdge(this.#edgeConf).server;
    return new Promise((resolve, reject) => {
      const fail = (err: unknown) => reject(bindError(host, port, err));
      listener.once('error', fail);
      listener.listen(port, host, () => {
        listener.off('error', fail);
        // node:http tracks the connections it is given (idle close, header timeouts) from its 'listening'
        this.server.emit('listening');
        resolve(listener.address() as AddressInfo);
      });
    });
  }

  /** As node:http listens (half-open connections allowed: its own rules decide when to end them). */
  #createPlainListener(): NetServer {
    this.#plainListener = createNetServer({ allowHalfOpen: true, noDelay: true }, this.#acceptHttp1);
    return this.#plainListener;
  }

  /** A new HTTP/1 connection (plain, or TLS after its handshake) starts out read by the replica. */
  #acceptHttp1 = guarded(
    'client',
    (socket: Socket): void => {
      connectionOf(socket).peer = this.#peerOf(socket);
      this.#http1.add(new Http1Connection(socket, this.#http1Host));
    },
    (socket) => socket,
  );

  #createEdge(conf: EdgeConf): EdgeListener {
    this.#edge = new EdgeListener(conf, {
      http1: this.#acceptHttp1,
      http2: (socket) => this.#h2Listener().accept(socket),
      plainOnTls: (socket) => {
        connectionOf(socket).plainOnTls = true;
        this.server.emit('connection', socket);
      },
      handshakeFailed: (message, socket) => this.#onConnectionInfo?.(message, socket),
    });
    return this.#edge;
  }

  #h2Listener(): H2Listener {
    if (this.#h2 !== null) return this.#h2;
    const proxy = this;
    this.#h2 = new H2Listener({
      get clientTimers() {
        return proxy.#timers();
      },
      get closing() {
        return proxy.#closing;
      },
      sessionStarted: (connection) => {
        connection.peer ??= this.#peerOf(connection.socket);
      },
      request: (request, response) => {
        const req = new H2Request(request);
        this.#exchange(req, new H2Response(response));
      },
      connectionInfo: (message, socket) => this.#onConnectionInfo?.(message, socket),
    });
    return this.#h2;
  }

  /** Tunnels (upgraded connections) open now. */
  get tunnels(): number {
    return this.#tunnels.size;
  }

  /**
   * Graceful close. Open tunnels are ended at once: a WebSocket never finishes by itself, so waiting
   * for it would only hold the close until `forceAfterMs` (what nginx's worker_shutdown_timeout does),
   * and the client reconnects elsewhere anyway. `forceAfterMs` cuts whatever is still open after that
   * long (held requests, slow responses and upgrade requests waiting for their upstream included).
   */
  close(options: { forceAfterMs?: number } = {}): Promise<void> {
    if (this.#closed !== null) return this.#closed;
    this.#closing = true;
    this.#closed = new Promise((resolve) => {
      let force: NodeJS.Timeout | null = null;
      const closed = (): void => {
        if (force !== null) clearTimeout(force);
        resolve();
      };
      // the listening socket counts the connections; the HTTP/1 servers close their idle ones
      const listener = this.#edge?.server ?? this.#plainListener;
      if (listener === null) closed();
      else listener.close(closed);
      this.server.close();
      this.#closeIdleHttp1();
      this.#h2?.close();
      if (options.forceAfterMs !== undefined) {
        force = setTimeout(() => {
          this.#h2?.destroy();
          this.server.closeAllConnections();
          for (const connection of this.#http1) connection.socket.destroy();
          for (const tunnel of this.#tunnels) tunnel.destroy();
          for (const socket of this.#upgrading) socket.destroy();
        }, options.forceAfterMs);
      }
    });
    for (const tunnel of this.#tunnels) tunnel.close();
    return this.#closed;
  }

  /** @internal */
  exchangeEnded(): void {
    if (this.#closing) {
      setImmediate(() => {
        this.server.closeIdleConnections();
        this.#closeIdleHttp1();
      });
    }
  }

  #closeIdleHttp1(): void {
    for (const connection of this.#http1) connection.closeIfIdle();
  }

  /** @internal */
  tunnelOpened(tunnel: Tunnel): void {
    this.#tunnels.add(tunnel);
    if (this.#closing) tunnel.close();
  }

  /** @internal */
  tunnelClosed(tunnel: Tunnel): void {
    this.#tunnels.delete(tunnel);
  }

  /** node:http reads these per connection (a reload counts for the connections after it). */
  #perConnection = (): void => {
    const server = this.server as Server & { maxHeaderSize?: number };
    if (this.clientInput !== null) server.maxHeaderSize = this.clientInput.maxHeaderBytes();
    const timers = this.#timers();
    server.headersTimeout = timers.headerTimeoutMs;
    server.keepAliveTimeout = timers.keepaliveTimeoutMs;
  };

  /** The address's default server's client timers. */
  get clientTimers(): ClientTimers {
    return this.#timers();
  }

  #onConnection = (socket: Socket): void => {
    const connection = connectionOf(socket);
    connection.peer ??= this.#peerOf(socket);
  };

  /** node:http could not read a request, or the connection failed (client-error.ts). */
  #onClientError = (err: ClientError, socket: Socket): void => {
    answerClientError(err, socket, this.clientInput, this.#timers());
  };

  /** `Expect: 100-continue`: the exchange says when to go on (never for a refusal). */
  #onCheckContinue = (req: IncomingMessage, res: ServerResponse): void => {
    if (!inTurn(req, res, this.#onCheckContinue)) return;
    this.#exchange(req, res, true);
  };

  /** CONNECT: node:http hands the connection over; nginx refuses the method (the hook says how). */
  #onConnect = (req: IncomingMessage, socket: Socket, head: Buffer): void => {
    void head;
    socket.on('error', destroyOnError);
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    res.once('finish', endConnection);
    this.#exchange(req, res);
  };

  #peerOf(socket: Socket): PeerInfo {
    const text = normalizePeerAddress(socket.remoteAddress);
    const port = socket.remotePort ?? 0;
    let trusted: NginxAddr | null = null;
    if (this.#realIp !== null) {
      const parsed = parseAddr(text, port);
      if (parsed !== null && this.#realIp.matches(parsed)) trusted = parsed;
    }
    return { text, port, trusted };
  }

  /** A request read: its connection counts it, and its exchange starts. */
  #exchange(req: ClientRequest, res: ClientResponse, expectsContinue = false): void {
    const connection = connectionOf(req.socket);
    connection.countRequest();
    const exchange = new Exchange<D>(this, req, res, connection, this.#remoteOf(req, connection));
    if (expectsContinue) exchange.expectContinue();
    this.#run(exchange);
  }

  /** `$remote_addr`/`$remote_port`: the peer, or what `real_ip_header` says when the peer is trusted. */
  #remoteOf(req: ClientRequest, connection: ClientConnection): RemoteAddress {
    connection.peer ??= this.#peerOf(req.socket);
    const peer = connection.peer;
    if (peer.trusted !== null && this.#realIp !== null) {
      const real = this.#realIp.resolve(peer.trusted, req.rawHeaders);
      if (real !== null) return real;
    }
    return peer;
  }

  #onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (!inTurn(req, res, this.#onRequest)) return;
    if (isLingering(req.socket)) {
      // behind an answer that closes the connection: nginx reads no more requests
      req.resume();
      return;
    }
    this.#exchange(req, res);
  };

  #onUpgrade = (req: IncomingMessage, socket: Socket, head: Buffer): void => {
    const connection = connectionOf(req.socket);
    connection.countRequest();
    // The parser is gone from this connection: answers go out through a response of our own, and
    // the connection closes after it (unless it becomes a tunnel).
    const res = new ServerResponse(req);
    res.shouldKeepAlive = false;
    res.assignSocket(socket);
    const exchange = new UpgradeExchange<D>(
      this,
      req,
      res,
      connection,
      this.#remoteOf(req, connection),
      head,
    );
    let upgrades: boolean;
    try {
      // a chunked body is node:http's to decode: such a request goes on as a plain one
      upgrades = req.headers['transfer-encoding'] === undefined && this.#canUpgrade!(exchange);
    } catch (err) {
      this.#onHookError?.(err);
      upgrades = false;
    }
    if (!upgrades) {
      res.detachSocket(socket);
      replayWithoutUpgrade(this.server, req, socket, head);
      return;
    }
    res.once('finish', endConnection);
    // Node took its own error listener off with the parser: a reset must not become an uncaught error.
    socket.on('error', destroyOnError);
    this.#upgrading.add(socket);
    socket.once('close', () => this.#upgrading.delete(socket));
    this.#run(exchange);
  };

  #run(exchange: Exchange<D>): void {
    let decision: D;
    try {
      decision = this.#decide(exchange);
    } catch (err) {
      this.#onHookError?.(err);
      exchange.sendPage(500);
      return;
    }
    exchange.run(decision);
  }
}

function destroyOnError(this: Socket): void {
  this.destroy();
}

/** A response of an upgrade request that did not become a tunnel: the connection ends with it. */
function endConnection(this: ServerResponse): void {
  this.socket?.destroySoon();
}

/** A listener for `options`; call `listen` to start it. */
export function createProxyServer<D extends Decision = Decision>(
  options: ProxyServerOptions<D>,
): ProxyServer<D> {
  return new ProxyServer(options);
}
