/**
 * A listener's HTTP/1 connections read by the replica itself (http1-connection.ts), from their accept
 * until they close or node:http takes them (node-http-inbound.ts): they keep node:http's rules (its
 * head size and timeouts, read per connection), and close as they fall idle once the listener closes.
 */
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import { connectionOf } from '../contract/client-connection.ts';
import type { ClientRequest } from '../contract/client-request.ts';
import type { ClientResponse } from '../contract/client-response.ts';
import type { ClientInputRules } from '../contract/decision.ts';
import { Http1Connection, type Http1Host } from './http1-connection.ts';
import { DEFAULT_MAX_HEADER_BYTES } from './node-http-inbound.ts';
import type { OwnResponse } from './own-response.ts';

/** What the connections need of the listener (proxy-server.ts). */
export interface Http1InboundHost {
  /** The address's default server's client timers (read per connection: a reload counts). */
  readonly clientTimers: ClientTimers;
  /** A graceful close began: a finished response ends its connection. */
  readonly closing: boolean;
  /** The hook's rules for client input: the largest head node:http reads. */
  readonly clientInput: Pick<ClientInputRules, 'maxHeaderBytes'> | null;
  /** A request read: its connection counts it, and its exchange starts. */
  exchange(req: ClientRequest, res: ClientResponse): void;
  /** node:http reads the connection from here on. */
  handOver(socket: Socket): void;
}

export class Http1Inbound {
  /** The connections read here now. */
  readonly #connections = new Set<Http1Connection>();
  readonly #host: Http1Host;

  constructor(listener: Http1InboundHost) {
    this.#host = new ConnectionsHost(listener, this.#connections);
  }

  /** A new connection (plain, or TLS after its handshake), its peer noted already. */
  accept(socket: Socket): void {
    this.#connections.add(new Http1Connection(socket, this.#host));
  }

  closeIdle(): void {
    for (const connection of this.#connections) connection.closeIfIdle();
  }

  /** A forced close: every connection ends now. */
  destroy(): void {
    for (const connection of this.#connections) connection.socket.destroy();
  }
}

/**
 * What every connection of the listener reads of it. A class, not an object literal with getters:
 * its accessors live on one prototype, so the compiler inlines them on the per-request path.
 */
class ConnectionsHost implements Http1Host {
  readonly #listener: Http1InboundHost;
  readonly #connections: Set<Http1Connection>;

  constructor(listener: Http1InboundHost, connections: Set<Http1Connection>) {
    this.#listener = listener;
    this.#connections = connections;
  }

  get keepAliveTimeoutMs(): number {
    return this.#listener.clientTimers.keepaliveTimeoutMs;
  }

  get headersTimeoutMs(): number {
    return this.#listener.clientTimers.headerTimeoutMs;
  }

  get closing(): boolean {
    return this.#listener.closing;
  }

  maxHeadBytes(): number {
    return this.#listener.clientInput?.maxHeaderBytes() ?? DEFAULT_MAX_HEADER_BYTES;
  }

  request(req: ClientRequest, res: ClientResponse): void {
    this.#listener.exchange(req, res);
  }

  bodyCut(res: OwnResponse): void {
    const exchange = res.socket === null ? null : connectionOf(res.socket).exchange;
    if (exchange === null || !exchange.bodyFailed('HPE_INVALID_EOF_STATE')) res.destroy();
  }

  handOver(socket: Socket): void {
    this.#listener.handOver(socket);
  }

  released(connection: Http1Connection): void {
    this.#connections.delete(connection);
  }
}
