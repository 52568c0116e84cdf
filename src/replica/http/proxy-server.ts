/**
 * The replica's HTTP listener (no framework on the data path): it resolves the client address, asks
 * the `decide` hook, and answers, holds or forwards each request. HTTP/1.1 connections start out read
 * by the replica itself (http1-inbound.ts) and go to a `node:http` server, which never listens itself,
 * at the first head that is not the common kind (node-http-inbound.ts); HTTP/2 streams are
 * node:http2's (h2-inbound.ts). Upgrade requests (WebSocket) to a location that tunnels them take the
 * same path up to the upstream, with an upgrade leg (upgrade-leg.ts); to any other location they are plain requests.
 *
 * Graceful close: stop accepting, let in-flight and held requests finish (their answers carry
 * `Connection: close`), close keep-alive connections as they fall idle, end open tunnels at once,
 * then resolve.
 */

import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  type AddressInfo,
  createServer as createNetServer,
  type Server as NetServer,
  type Socket,
} from 'node:net';
import type { RealIpConf } from '../../config/model.ts';
import { type ClientTimers, NGINX_CLIENT_TIMERS } from '../../engine/http/client-timers.ts';
import { type NginxAddr, normalizePeerAddress, parseAddr } from '../../engine/net/address-text.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import {
  type ClientConnection,
  connectionOf,
  type PeerInfo,
  type RemoteAddress,
  UNIX_CLIENT,
} from './contract/client-connection.ts';
import type { ClientRequest } from './contract/client-request.ts';
import type { ClientResponse } from './contract/client-response.ts';
import type { ClientInputRules, DecideHook, Decision, DownstreamRequest } from './contract/decision.ts';
import type { ExchangeEvents } from './contract/exchange-events.ts';
import { guarded } from './contract/fault-boundary.ts';
import { bindTcp, bindUnix } from './edge/bind-socket.ts';
import { type EdgeConf, EdgeListener } from './edge/edge-listener.ts';
import { compileRealIp, type RealIpResolver } from './edge/real-ip.ts';
import { Downstream } from './exchange/downstream.ts';
import type { ExchangeHost } from './exchange/exchange-host.ts';
import { Exchange } from './exchange/proxy-exchange.ts';
import type { Tunnel } from './exchange/tunnel.ts';
import { type TunnelHost, UpgradeLeg } from './exchange/upgrade-leg.ts';
import { H2Inbound } from './inbound/h2-inbound.ts';
import { Http1Inbound } from './inbound/http1-inbound.ts';
import { NodeHttpInbound } from './inbound/node-http-inbound.ts';
import { InboundHost } from './inbound-host.ts';
import type { ProxyServerOptions } from './proxy-server-options.ts';
import type { UpstreamGroup, UpstreamLookup } from './upstream/upstream-group.ts';

export class ProxyServer<D extends Decision = Decision> implements ExchangeHost<D>, TunnelHost {
  readonly server: Server;
  readonly upstreams: UpstreamLookup;
  readonly defaultGroup: UpstreamGroup | null;
  readonly events: ExchangeEvents<D>;
  readonly clientInput: ClientInputRules<D> | null;
  readonly #decide: DecideHook<D>;
  #realIp: RealIpResolver | null;
  readonly #onHookError: ((err: unknown) => void) | null;
  readonly #canUpgrade: ((ctx: DownstreamRequest) => boolean) | null;
  readonly #nodeHttp: NodeHttpInbound<D>;
  readonly #tunnels = new Set<Tunnel>();
  /** Requests currently held by a `delay` decision. */
  held = 0;
  readonly #edgeConf: EdgeConf | null;
  #edge: EdgeListener | null = null;
  /** The listening socket of a plain address (an `ssl`/`http2` one listens through the edge). */
  #plainListener: NetServer | null = null;
  /** `unix:/path` when it listens on a UNIX-domain socket, whose sockets node gives no addresses. */
  #unixAddress: string | null = null;
  /** HTTP/1 connections read by the replica itself (until node:http takes them). */
  readonly #http1: Http1Inbound;
  readonly #h2: H2Inbound;
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
    this.events = {
      clientClosed: options.onClientClosed ?? ignore,
      upstreamError: options.onUpstreamError ?? ignore,
      completed: options.onCompleted ?? ignore,
    };
    this.#decide = options.decide;
    this.clientInput = options.decide.client ?? null;
    this.#realIp = compileRealIp(options.realIp);
    this.#onHookError = options.onHookError ?? null;
    this.#canUpgrade = options.canUpgrade ?? null;
    const inbound = this.#createInboundHost();
    this.#nodeHttp = new NodeHttpInbound<D>(inbound);
    this.server = this.#nodeHttp.server;
    this.#edgeConf = options.edge ?? null;
    this.#onConnectionInfo = options.onConnectionInfo ?? null;
    this.#http1 = new Http1Inbound(inbound);
    this.#h2 = new H2Inbound(inbound);
  }

  /** What the listener's readers of connections (HTTP/1: its own, then node:http's; h2) need of it. */
  #createInboundHost(): InboundHost<D> {
    return new InboundHost<D>(this, this.clientInput, {
      peerOf: (socket) => this.#peerOf(socket),
      exchange: (req, res, expectsContinue) => this.#exchange(req, res, expectsContinue),
      upgradeExchange: (req, res, head) => this.#upgradeExchange(req, res, head),
      canTunnel: this.#canUpgrade === null ? null : (exchange) => this.#canTunnel(exchange),
      run: (exchange) => this.#run(exchange),
      handOver: (socket) => this.#nodeHttp.take(socket),
      connectionInfo: (message, socket) => this.#onConnectionInfo?.(message, socket),
    });
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
  async listen(port: number, host = '127.0.0.1', reusePort = false): Promise<AddressInfo> {
    const listener =
      this.#edgeConf === null ? this.#createPlainListener() : this.#createEdge(this.#edgeConf).server;
    const address = await bindTcp(listener, port, host, { reusePort });
    this.#nodeHttp.listening();
    return address;
  }

  /** Starts listening on a UNIX-domain socket, `unix:/path` (plain HTTP/1 only: no edge for it). */
  async listenUnix(address: string): Promise<void> {
    this.#unixAddress = address;
    await bindUnix(this.#createPlainListener(), address);
    this.#nodeHttp.listening();
  }

  /**
   * A listening socket for another address of the same port (`listen 127.0.0.1:80` beside
   * `listen [::1]:80`): its connections are this one's. Call after `listen`.
   */
  alsoListening(): NetServer {
    const main = this.#edge?.server ?? this.#plainListener!;
    const options = { allowHalfOpen: this.#edge === null, noDelay: true };
    return createNetServer(options, (socket) => main.emit('connection', socket));
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
      const connection = connectionOf(socket);
      connection.peer = this.#peerOf(socket);
      connection.unixAddress = this.#unixAddress;
      this.#http1.accept(socket);
    },
    (socket) => socket,
  );

  #createEdge(conf: EdgeConf): EdgeListener {
    this.#edge = new EdgeListener(conf, {
      http1: this.#acceptHttp1,
      http2: (socket) => this.#h2.accept(socket),
      plainOnTls: (socket) => {
        connectionOf(socket).plainOnTls = true;
        this.#nodeHttp.take(socket);
      },
      handshakeFailed: (message, socket) => this.#onConnectionInfo?.(message, socket),
    });
    return this.#edge;
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
      this.#http1.closeIdle();
      this.#h2.close();
      if (options.forceAfterMs !== undefined) {
        force = setTimeout(() => {
          this.#h2.destroy();
          this.server.closeAllConnections();
          this.#http1.destroy();
          for (const tunnel of this.#tunnels) tunnel.destroy();
          this.#nodeHttp.destroyUpgrading();
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
        this.#http1.closeIdle();
      });
    }
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

  /** The address's default server's client timers. */
  get clientTimers(): ClientTimers {
    return this.#timers();
  }

  #peerOf(socket: Socket): PeerInfo {
    if (this.#unixAddress !== null) return UNIX_CLIENT;
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
    const exchange = new Exchange<D>(this, this.#downstream(req, res), res);
    if (expectsContinue) exchange.answer.expectContinue();
    this.#run(exchange);
  }

  /** An upgrade request read: its connection counts it, and its exchange is made (run once it tunnels). */
  #upgradeExchange(req: IncomingMessage, res: ServerResponse, head: Buffer): Exchange<D> {
    const exchange = new Exchange<D>(this, this.#downstream(req, res), res);
    exchange.upgradeBy(new UpgradeLeg(exchange, this, res, head));
    return exchange;
  }

  /** Whether the upgrade request's location tunnels it (`canUpgrade`; a throw is a no). */
  #canTunnel(exchange: Exchange<D>): boolean {
    try {
      return this.#canUpgrade!(exchange.downstream);
    } catch (err) {
      this.#onHookError?.(err);
      return false;
    }
  }

  /** A request read: its connection counts it; what the hook sees of it. */
  #downstream(req: ClientRequest, res: ClientResponse): Downstream {
    const connection = connectionOf(req.socket);
    connection.countRequest();
    return new Downstream(req, res, connection, this.#remoteOf(req, connection));
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

  #run(exchange: Exchange<D>): void {
    let decision: D;
    try {
      decision = this.#decide(exchange.downstream);
    } catch (err) {
      this.#onHookError?.(err);
      exchange.sendPage(500);
      return;
    }
    exchange.run(decision);
  }
}

function ignore(): void {}

/** A listener for `options`; call `listen` to start it. */
export function createProxyServer<D extends Decision = Decision>(
  options: ProxyServerOptions<D>,
): ProxyServer<D> {
  return new ProxyServer(options);
}
