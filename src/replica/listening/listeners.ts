/**
 * The replica's listeners: one ProxyServer per port and per UNIX-domain socket the configuration
 * serves (keyed by the port's number or the socket's `unix:/path`), wired to the engine
 * (policy/engine-hook.ts), the upstream groups and the error log. What a port takes from the configuration
 * is read here: its TLS/h2 edge, its default server's client timers (realip is the engine hook's, per
 * server and location). A reload keeps a port's listener (with the new edge settings) unless the port
 * is gone or went between plain and TLS/h2: that one drains while a new one listens.
 */
import type { Server as NetServer } from 'node:net';
import type { Config, ServerConf } from '../../config/model.ts';
import { NGINX_CLIENT_TIMERS } from '../../engine/http/client-timers.ts';
import {
  listensOn,
  type ServedAddress,
  servedAddresses,
  servedAddressKey,
} from '../../engine/http/served-ports.ts';
import type { Site } from '../../engine/http/site.ts';
import type { Clock } from '../../shared/clock.ts';
import type { ClientRequestHead } from '../http/contract/decision.ts';
import { bindTcp } from '../http/edge/bind-socket.ts';
import type { EdgeConf } from '../http/edge/edge-listener.ts';
import type { TlsSessionBackend } from '../http/edge/tls-sessions.ts';
import { ProxyServer } from '../http/proxy-server.ts';
import type { UpstreamSet } from '../http/upstream/upstream-set.ts';
import type { ResponseFacts } from '../logs/access-log.ts';
import type { ErrorLog } from '../logs/error-log.ts';
import { logClosedInDelay, logConnectionInfo, logUpstreamError } from '../logs/listener-log-lines.ts';
import { writeAccessLogs } from '../logs/location-access-log.ts';
import type { ProcessLog } from '../logs/process-log.ts';
import type { Admissions } from '../policy/admissions.ts';
import { engineHook, type RoutedDecision, upgradeHook } from '../policy/engine-hook.ts';
import type { ProxyTargets } from '../policy/proxy-targets.ts';
import { bindAddresses } from './bind-addresses.ts';

/** How long a listener that stops (a reload dropped it, or the replica stops) finishes its requests. */
export const DRAIN_MS = 30_000;

export interface ListenersOptions {
  /** The configuration running now and what was built from it: a reload swaps them under the listeners. */
  config(): Config;
  site(): Site;
  targets(): ProxyTargets;
  upstreams(): UpstreamSet;
  readonly clock: Clock;
  readonly errorLog: ErrorLog;
  /** Listen address for every port, instead of each `listen`'s own. */
  readonly host?: string;
  /** Config port → actual port (0 = any free one). */
  readonly portMap?: ReadonlyMap<number, number>;
  /** Listen with SO_REUSEPORT: one of several worker threads on the same ports. */
  readonly reusePort?: boolean;
  /** The replica's TLS ticket keys' seed, the same in all its worker threads (edge-listener.ts). */
  readonly ticketKeySeed?: Uint8Array;
  /** Where a port's `ssl_session_cache` keeps sessions (absent: each port's listener its own). */
  tlsSessions?(configuredPort: number): TlsSessionBackend;
  /** Who admits requests waiting for an API limiter or a priority level (default: this thread). */
  readonly admissions?: Admissions;
  /** Every request routed, by server name and location name. */
  countRequest(server: string, location: string): void;
  readonly onCompleted?: (req: ClientRequestHead, outcome: ResponseFacts) => void;
  readonly onClientClosed?: (phase: string) => void;
  readonly log: ProcessLog;
}

interface Listener {
  readonly served: ServedAddress;
  readonly server: ProxyServer<RoutedDecision>;
  /** The addresses it is bound on (bind-addresses.ts), the first the ProxyServer's own. */
  readonly hosts: readonly string[];
  /** The listening sockets of the other addresses, handing their connections to `server`. */
  readonly also: readonly NetServer[];
  /** The port bound (0 for a UNIX-domain socket). */
  readonly port: number;
  /** What it was created for (edgeKind, the addresses): a reload that changes it listens anew. */
  readonly edge: string;
}

/** Stops a listener's sockets; resolves once its connections are done (see ProxyServer.close). */
function closeListener(listener: Listener, forceAfterMs: number): Promise<void> {
  const also = listener.also.map((socket) => new Promise<void>((done) => socket.close(() => done())));
  return Promise.all([listener.server.close({ forceAfterMs }), ...also]).then(() => undefined);
}

export class Listeners {
  readonly #options: ListenersOptions;
  /** By served address's key (servedAddressKey). */
  readonly #byKey = new Map<string, Listener>();
  /** Listeners a reload dropped, still finishing their requests. */
  readonly #closing: Promise<void>[] = [];
  /** Listeners a reload added, still binding, by key: neither bound twice nor left open by `stop`. */
  readonly #opening = new Map<string, Promise<void>>();

  constructor(options: ListenersOptions) {
    this.#options = options;
  }

  /** Actual listen port per configured TCP port. */
  get ports(): ReadonlyMap<number, number> {
    const tcp = [...this.#byKey.values()].filter((listener) => listener.served.unix === null);
    return new Map(tcp.map((listener) => [listener.served.port, listener.port]));
  }

  /** `host:port` of every listener, as bound (`[::]:80` for IPv6), and `unix:/path` of each socket. */
  addresses(): string[] {
    return [...this.#byKey.values()].flatMap(({ served, hosts, port }) =>
      served.unix !== null
        ? [served.unix]
        : hosts.map((host) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`)),
    );
  }

  /** Listens on every served address; when one cannot be bound, closes those that were and throws. */
  async start(): Promise<void> {
    try {
      for (const served of this.#served()) await this.#listen(served);
    } catch (err) {
      await Promise.all([...this.#byKey.values()].map((listener) => closeListener(listener, 0)));
      this.#byKey.clear();
      throw err;
    }
  }

  /** Follows a reload that has swapped the configuration in. */
  reload(): void {
    const served = new Map(this.#served().map((address) => [servedAddressKey(address), address]));
    for (const [key, listener] of this.#byKey) {
      const edge = edgeOf(this.#options, listener.served);
      if (served.has(key) && this.#kindOf(listener.served, edge) === listener.edge) {
        if (edge !== null) listener.server.setEdge(edge);
        continue;
      }
      // An address the new configuration no longer listens on (or now with or without TLS/h2): stop
      // accepting, finish what it has.
      this.#byKey.delete(key);
      this.#closing.push(closeListener(listener, DRAIN_MS));
    }
    for (const [key, address] of served) {
      if (this.#byKey.has(key) || this.#opening.has(key)) continue;
      const opening = this.#listen(address)
        .catch((err: unknown) =>
          this.#options.log('error', 'could not listen on an address added by the reload', {
            listen: key,
            err: String(err),
          }),
        )
        .finally(() => this.#opening.delete(key));
      this.#opening.set(key, opening);
    }
  }

  /**
   * Stops accepting; resolves once every listener, those a reload dropped too, has finished (what is
   * still open after `drainMs` is closed).
   */
  async stop(drainMs = DRAIN_MS): Promise<void> {
    await Promise.all(this.#opening.values());
    await Promise.all([
      ...[...this.#byKey.values()].map((listener) => closeListener(listener, drainMs)),
      ...this.#closing,
    ]);
  }

  /** Addresses to serve (servers holding only an `api` location are left to the control plane). */
  #served(): ServedAddress[] {
    return servedAddresses(this.#options.site());
  }

  async #listen(served: ServedAddress): Promise<void> {
    const options = this.#options;
    const configuredPort = served.port;
    const server = options.site().servers.find((s) => listensOn(s, served));
    const listenHost = server?.listen.find((l) => l.port === configuredPort)?.host ?? null;
    const listen = served.unix ?? `${listenHost ?? '0.0.0.0'}:${configuredPort}`;
    const errorLog = options.errorLog;
    const edge = edgeOf(options, served);
    const engine = engineHook({
      ssl: edge?.ssl ?? false,
      nowMs: () => options.clock.nowMs(),
      site: () => options.site(),
      targets: () => options.targets(),
      errorLog,
      port: configuredPort,
      countRequest: (server, location) => options.countRequest(server, location),
      admissions: options.admissions,
    });
    const onCompleted = options.onCompleted;
    const proxy = new ProxyServer<RoutedDecision>({
      decide: engine,
      // the port's default server's (a reload swaps the configuration under the listener)
      clientTimers: () => defaultServerOf(options.config(), served)?.client ?? NGINX_CLIENT_TIMERS,
      ...(edge === null ? {} : { edge }),
      onConnectionInfo: (message, socket) => logConnectionInfo(errorLog, listen, message, socket),
      canUpgrade: upgradeHook({ site: () => options.site(), port: configuredPort }),
      // Looked up per request: a reload swaps the set under open listeners.
      upstreams: {
        get: (name: string) => options.upstreams().get(name),
        addressed: (server) => options.upstreams().addressed(server),
      },
      onClientClosed: (ctx, decision, phase) => {
        if (phase === 'delay') logClosedInDelay(errorLog, ctx, decision.serverName ?? '');
        options.onClientClosed?.(phase);
      },
      onUpstreamError: (ctx, decision, error) =>
        logUpstreamError(errorLog, ctx, decision.serverName ?? '', error),
      onHookError: (err) => options.log('error', 'request failed in the engine', { err: String(err) }),
      onCompleted: (ctx, _decision, outcome) => {
        writeAccessLogs(ctx, outcome, options.clock.nowMs());
        onCompleted?.(ctx.req, { ...outcome, remoteAddr: ctx.remoteAddr });
      },
    });
    const kind = this.#kindOf(served, edge);
    if (served.unix !== null) {
      await proxy.listenUnix(served.unix);
      const listener = { served, server: proxy, hosts: [], also: [], port: 0, edge: kind };
      this.#byKey.set(served.unix, listener);
      return;
    }
    const port = options.portMap?.get(configuredPort) ?? configuredPort;
    const hosts = options.host === undefined ? bindAddresses(options.site(), configuredPort) : [options.host];
    const reusePort = options.reusePort ?? false;
    const address = await proxy.listen(port, hosts[0] ?? '0.0.0.0', reusePort);
    const also: NetServer[] = [];
    const listener = { served, server: proxy, hosts, also, port: address.port, edge: kind };
    try {
      for (const host of hosts.slice(1)) also.push(await listenAlso(proxy, host, address.port, reusePort));
    } catch (err) {
      await closeListener(listener, 0);
      throw err;
    }
    this.#byKey.set(servedAddressKey(served), listener);
  }

  /** What a listener is made for: its TLS/h2 edge and the addresses it is bound on. */
  #kindOf(served: ServedAddress, edge: EdgeConf | null): string {
    const bound =
      served.unix !== null || this.#options.host !== undefined
        ? []
        : bindAddresses(this.#options.site(), served.port);
    return `${edgeKind(edge)} ${bound.join(',')}`;
  }
}

/** Another address of the port, its connections the listener's (`[::]` for IPv6 only, as nginx's). */
async function listenAlso(
  proxy: ProxyServer<RoutedDecision>,
  host: string,
  port: number,
  reusePort: boolean,
): Promise<NetServer> {
  const socket = proxy.alsoListening();
  await bindTcp(socket, port, host, { reusePort, ipv6Only: host === '::' });
  return socket;
}

/** The port's TLS/h2 settings (ssl and http2 belong to the address), or null for plain HTTP/1. */
function edgeOf(options: ListenersOptions, served: ServedAddress): EdgeConf | null {
  // `listen unix:` takes neither (server.ts refuses them)
  if (served.unix !== null) return null;
  const configuredPort = served.port;
  const config = options.config();
  const servers = config.http.servers.filter((s) => listensOn(s, served));
  const listens = servers.flatMap((s) => s.listen.filter((l) => l.port === configuredPort));
  const ssl = listens.some((l) => l.ssl);
  const http2 = listens.some((l) => l.http2);
  if (!ssl && !http2) return null;
  const { ticketKeySeed, tlsSessions } = options;
  return {
    port: configuredPort,
    ssl,
    http2,
    servers,
    ...(ticketKeySeed === undefined ? {} : { ticketKeySeed }),
    ...(tlsSessions === undefined ? {} : { sessions: tlsSessions(configuredPort) }),
  };
}

/** The address's default server (`listen … default_server`, else the first on it). */
function defaultServerOf(config: Config, served: ServedAddress): ServerConf | undefined {
  const servers = config.http.servers.filter((s) => listensOn(s, served));
  const isDefault = (s: ServerConf) => listensOn({ listen: s.listen.filter((l) => l.defaultServer) }, served);
  return servers.find(isDefault) ?? servers[0];
}

/** What a listener was created for: a reload that changes it listens anew. */
function edgeKind(edge: EdgeConf | null): string {
  return edge === null ? 'plain' : `ssl=${edge.ssl} http2=${edge.http2}`;
}
