/**
 * A listener's HTTP/2 side (h2-listener.ts), made at its first h2 connection: a session's peer is noted
 * as an HTTP/1 connection's is, and each stream that becomes a request starts one of the listener's
 * exchanges through the adapters of h2-request.ts.
 */
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import type { PeerInfo } from '../contract/client-connection.ts';
import type { ClientRequest } from '../contract/client-request.ts';
import type { ClientResponse } from '../contract/client-response.ts';
import type { ClientInputRules } from '../contract/decision.ts';
import { H2Listener } from './h2-listener.ts';
import { H2Request, H2Response } from './h2-request.ts';

/** What the HTTP/2 side needs of the listener (proxy-server.ts). */
export interface H2InboundHost {
  /** The address's default server's client timers (read per session). */
  readonly clientTimers: ClientTimers;
  /** A graceful close began: new sessions are closed at once. */
  readonly closing: boolean;
  /** The configuration's rules for client input (null: node:http2's own limits only). */
  readonly clientInput: ClientInputRules | null;
  /** The connection's peer, and whether realip trusts it. */
  peerOf(socket: Socket): PeerInfo;
  /** A request read: its connection counts it, and its exchange starts. */
  exchange(req: ClientRequest, res: ClientResponse): void;
  /** A line about the connection at `info`, in nginx's words. */
  connectionInfo(message: string, socket: Socket): void;
}

export class H2Inbound {
  readonly #listener: H2InboundHost;
  #h2: H2Listener | null = null;

  constructor(listener: H2InboundHost) {
    this.#listener = listener;
  }

  /** An h2 connection (over TLS, or h2c with prior knowledge). */
  accept(socket: Socket): void {
    this.#h2Listener().accept(socket);
  }

  /** Graceful close: GOAWAY to every session, open streams finish. */
  close(): void {
    this.#h2?.close();
  }

  /** What is left when the graceful close ran out of time. */
  destroy(): void {
    this.#h2?.destroy();
  }

  #h2Listener(): H2Listener {
    if (this.#h2 !== null) return this.#h2;
    const listener = this.#listener;
    this.#h2 = new H2Listener({
      get clientTimers() {
        return listener.clientTimers;
      },
      get closing() {
        return listener.closing;
      },
      headerBlockFault: (rawHeaders, socket) =>
        listener.clientInput?.h2HeaderBlockFault?.(rawHeaders, socket) ?? null,
      sessionStarted: (connection) => {
        connection.peer ??= listener.peerOf(connection.socket);
      },
      request: (request, response) => {
        const req = new H2Request(request);
        listener.exchange(req, new H2Response(response));
      },
      connectionInfo: (message, socket) => listener.connectionInfo(message, socket),
    });
    return this.#h2;
  }
}
