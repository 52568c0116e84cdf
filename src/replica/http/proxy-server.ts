/**
 * The replica's HTTP listener: a bare `node:http` server (no framework on the data path) that resolves
 * the client address, asks the `decide` hook, and answers, holds or forwards each request.
 *
 * Graceful close: stop accepting, let in-flight and held requests finish (their answers carry
 * `Connection: close`), close keep-alive connections as they fall idle, then resolve.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { RealIpConf } from '../../config/model.ts';
import type { ClientClosedCallback, DecideHook, Decision } from './decision.ts';
import { type NginxAddr, normalizePeerAddress, parseAddr } from './ip-text.ts';
import { Exchange, type ExchangeHost } from './proxy-exchange.ts';
import { compileRealIp, type RealIpResolver } from './real-ip.ts';
import type { UpstreamGroup, UpstreamSet } from './upstream-group.ts';

export interface ProxyServerOptions<D extends Decision = Decision> {
  /** The limiting hook, called once per request. */
  readonly decide: DecideHook<D>;
  /** Every upstream group a decision may name. The owner closes them after `close()`. */
  readonly upstreams: UpstreamSet;
  /** The group for `pass`/`delay` decisions that name none. */
  readonly defaultUpstream?: string;
  /** `set_real_ip_from` / `real_ip_header` / `real_ip_recursive` of this listener. */
  readonly realIp?: RealIpConf | null;
  /** A client closed before its response was complete (nginx's 499), held or forwarding. */
  readonly onClientClosed?: ClientClosedCallback<D>;
  /** The hook threw: the request got a 500; this hears why. */
  readonly onHookError?: (err: unknown) => void;
  /** nginx `keepalive_timeout` (75 s). */
  readonly keepAliveTimeoutMs?: number;
  /** nginx `client_header_timeout` (60 s). */
  readonly headersTimeoutMs?: number;
  /** `$scheme`, sent as X-Forwarded-Proto. */
  readonly scheme?: string;
}

/** What the listener knows about a connection's peer, computed once per connection. */
interface PeerInfo {
  readonly text: string;
  readonly port: number;
  /** The parsed peer when realip is on and the peer is in `set_real_ip_from`; else null. */
  readonly trusted: NginxAddr | null;
}

const kPeer = Symbol('peer');
type PeerSocket = Socket & { [kPeer]?: PeerInfo };

export class ProxyServer<D extends Decision = Decision> implements ExchangeHost<D> {
  readonly server: Server;
  readonly upstreams: UpstreamSet;
  readonly defaultGroup: UpstreamGroup | null;
  readonly scheme: string;
  readonly onClientClosed: ClientClosedCallback<D> | null;
  readonly #decide: DecideHook<D>;
  #realIp: RealIpResolver | null;
  readonly #onHookError: ((err: unknown) => void) | null;
  /** Requests currently held by a `delay` decision. */
  held = 0;
  #closing = false;
  #closed: Promise<void> | null = null;

  constructor(options: ProxyServerOptions<D>) {
    this.upstreams = options.upstreams;
    this.defaultGroup =
      options.defaultUpstream === undefined ? null : (options.upstreams.get(options.defaultUpstream) ?? null);
    if (options.defaultUpstream !== undefined && this.defaultGroup === null) {
      throw new Error(`unknown upstream "${options.defaultUpstream}"`);
    }
    this.scheme = options.scheme ?? 'http';
    this.onClientClosed = options.onClientClosed ?? null;
    this.#decide = options.decide;
    this.#realIp = compileRealIp(options.realIp);
    this.#onHookError = options.onHookError ?? null;
    this.server = createServer(
      { noDelay: true, requestTimeout: 0, headersTimeout: options.headersTimeoutMs ?? 60_000 },
      this.#onRequest,
    );
    this.server.keepAliveTimeout = options.keepAliveTimeoutMs ?? 75_000;
    this.server.on('connection', this.#onConnection);
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

  /** Starts listening; resolves with the bound address. */
  listen(port: number, host = '127.0.0.1'): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve(this.server.address() as AddressInfo);
      });
    });
  }

  /**
   * Graceful close. `forceAfterMs` cuts whatever is still open after that long (held requests and
   * slow responses included).
   */
  close(options: { forceAfterMs?: number } = {}): Promise<void> {
    if (this.#closed !== null) return this.#closed;
    this.#closing = true;
    this.#closed = new Promise((resolve) => {
      let force: NodeJS.Timeout | null = null;
      this.server.close(() => {
        if (force !== null) clearTimeout(force);
        resolve();
      });
      if (options.forceAfterMs !== undefined) {
        force = setTimeout(() => this.server.closeAllConnections(), options.forceAfterMs);
      }
    });
    return this.#closed;
  }

  /** @internal */
  exchangeEnded(): void {
    if (this.#closing) setImmediate(() => this.server.closeIdleConnections());
  }

  #onConnection = (socket: PeerSocket): void => {
    socket[kPeer] = this.#peerOf(socket);
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

  #onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const socket = req.socket as PeerSocket;
    // 'connection' always comes first; the fallback covers sockets handed in by `emit('connection')`.
    const peer = socket[kPeer] ?? this.#peerOf(socket);
    let addr = peer.text;
    let port = peer.port;
    if (peer.trusted !== null && this.#realIp !== null) {
      const real = this.#realIp.resolve(peer.trusted, req.rawHeaders);
      if (real !== null) {
        addr = real.text;
        port = real.port;
      }
    }
    const exchange = new Exchange<D>(this, req, res, peer.text, peer.port, addr, port);
    let decision: D;
    try {
      decision = this.#decide(exchange);
    } catch (err) {
      this.#onHookError?.(err);
      exchange.sendPage(500);
      return;
    }
    exchange.run(decision);
  };
}

/** A listener for `options`; call `listen` to start it. */
export function createProxyServer<D extends Decision = Decision>(
  options: ProxyServerOptions<D>,
): ProxyServer<D> {
  return new ProxyServer(options);
}
