/**
 * What an exchange holds for an upgrade request (WebSocket) to a location that tunnels upgrades. Up
 * to the upstream the exchange is any other: the hook decides once, a rejection gets the zone's page,
 * a delay holds, 444 closes, the group picks the server (round robin, failover on a refused
 * connection, 502/504 with nginx's pages). The request then goes out with `Upgrade` and
 * `Connection: upgrade` on a connection of its own (upgrade-dispatch.ts); a 101 splices the two
 * connections (tunnel.ts), any other answer is relayed as a response. Node's parser stops at an
 * upgrade request, so the client connection closes after any answer that is not a 101.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import { isUnixAddress, UNIX_HOST } from '../../../engine/net/address-text.ts';
import type { ClientRequest } from '../contract/client-request.ts';
import type { DownstreamRequest, HeldUntilEnd } from '../contract/decision.ts';
import { containFault } from '../contract/fault-boundary.ts';
import { switchingProtocolsHeaders } from '../upstream/forward-headers.ts';
import type { ForwardSending } from '../upstream/forward-owner.ts';
import { tlsConnect } from '../upstream/peer-tls.ts';
import { dispatchUpgrade } from '../upstream/upgrade-dispatch.ts';
import type { UpstreamPeer } from '../upstream/upstream-group.ts';
import { isFieldValue } from '../wire/field-value.ts';
import { httpDate } from '../wire/http-date.ts';
import { serverValue } from '../wire/own-answer-head.ts';
import type { Responder } from './responder.ts';
import { Tunnel } from './tunnel.ts';

/** What the listener does with tunnels: it closes the open ones when it closes. */
export interface TunnelHost {
  tunnelOpened(tunnel: Tunnel): void;
  tunnelClosed(tunnel: Tunnel): void;
}

/** What the leg reads of its exchange (proxy-exchange.ts). */
export interface UpgradingExchange {
  readonly req: ClientRequest;
  /** Its `Host` (`""`: none) and `Content-Length` (-1: none) among the rest. */
  readonly downstream: DownstreamRequest;
  readonly clientSocket: Socket | null;
  /** Held, or waiting for the upstream's answer (no byte of it sent yet). */
  readonly waiting: boolean;
  /** The client settings of the request's location (`server_tokens` for the 101's `Server`). */
  readonly timers: ClientTimers;
  /** Its answer's writer, which adds the `add_header` fields (`always` ones, to a 101). */
  readonly answer: Pick<Responder, 'addHeaders'>;
  /** What the request holds until it ends (its decision's slots); null when nothing. */
  readonly slots: HeldUntilEnd | null;
  /** The connection leaves the exchange (a 101): false if it is over already. */
  handOver(): boolean;
  /** The exchange with the server is over (its `max_conns` count drops). */
  upstreamEnded(): void;
}

/** Bytes a client may send before the 101 that are kept for the upstream; past it, reading pauses. */
const EARLY_BYTES_MAX = 64 * 1024;

export class UpgradeLeg {
  readonly #exchange: UpgradingExchange;
  readonly #listener: TunnelHost;
  /** node:http's response of the upgrade request: the connection leaves it for a tunnel. */
  readonly #response: ServerResponse;
  #early: Buffer[];
  #earlyBytes: number;
  #readTimeoutMs = 0;
  /** The request waits for the rest of its body before it goes out. */
  #sendWhenBodyIn: (() => void) | null = null;
  #body: Buffer | null = null;
  #reading = false;

  constructor(exchange: UpgradingExchange, listener: TunnelHost, response: ServerResponse, head: Buffer) {
    this.#exchange = exchange;
    this.#listener = listener;
    this.#response = response;
    this.#early = head.length === 0 ? [] : [head];
    this.#earlyBytes = head.length;
  }

  /** The exchange runs: the parser left the connection, so it is read here (early bytes, a client leaving). */
  start(): void {
    if (this.#reading) return;
    this.#reading = true;
    const socket = this.#exchange.req.socket;
    socket.on('data', this.#onEarlyData);
    socket.on('end', this.#onEarlyEnd);
  }

  #onEarlyData = (chunk: Buffer): void => {
    try {
      this.#earlyData(chunk);
    } catch (error) {
      const socket = this.#exchange.clientSocket;
      containFault('client', error, socket, socket);
    }
  };

  #earlyData(chunk: Buffer): void {
    this.#early.push(chunk);
    this.#earlyBytes += chunk.length;
    if (this.#earlyBytes >= EARLY_BYTES_MAX + this.#bodyBytes) this.#exchange.req.socket.pause();
    const send = this.#sendWhenBodyIn;
    if (send !== null && this.#earlyBytes >= this.#bodyBytes) {
      this.#sendWhenBodyIn = null;
      send();
    }
  }

  /**
   * The request's body (`Content-Length`; node:http reads none for an upgrade request): the first
   * bytes the client sent after the head. It goes out with the request, as nginx sends it; what
   * follows it is the client's first tunnel bytes. (`client_max_body_size` bounds it: a larger
   * length was refused with its head.)
   */
  get #bodyBytes(): number {
    return Math.max(this.#exchange.downstream.contentLength, 0);
  }

  /** The body, taken out of the early bytes once (a request tried on the next server sends it again). */
  #takeBody(): Buffer | null {
    const bytes = this.#bodyBytes;
    if (bytes === 0 || this.#body !== null) return this.#body;
    const early = Buffer.concat(this.#early, this.#earlyBytes);
    this.#early = early.length === bytes ? [] : [early.subarray(bytes)];
    this.#earlyBytes -= bytes;
    this.#body = early.subarray(0, bytes);
    return this.#body;
  }

  /** A client that ends its side while held or while the upstream is asked is gone, for nginx too (499). */
  #onEarlyEnd = (): void => {
    if (this.#exchange.waiting) this.#exchange.req.socket.destroy();
  };

  /** Sends the upgrade request on a connection of its own (once its body is in). */
  send(
    forwarder: ForwardSending,
    peer: UpstreamPeer,
    path: string,
    headers: string[],
    readTimeoutMs: number | undefined,
  ): void {
    if (this.#body === null && this.#earlyBytes < this.#bodyBytes) {
      this.#sendWhenBodyIn = () => this.send(forwarder, peer, path, headers, readTimeoutMs);
      return;
    }
    this.#readTimeoutMs = readTimeoutMs ?? peer.readTimeoutMs;
    const req = this.#exchange.req;
    const upgrade = [...headers, 'Upgrade', req.headers.upgrade ?? '', 'Connection', 'upgrade'];
    // the upstream client adds the server's address as Host when none goes (`proxy_set_header Host
    // ""`); a raw request must do it itself
    if (!upgrade.some((name, i) => i % 2 === 0 && name.toLowerCase() === 'host'))
      upgrade.push('Host', isUnixAddress(peer.host) ? UNIX_HOST : peer.server);
    dispatchUpgrade(
      peer,
      {
        method: req.method ?? 'GET',
        path,
        headers: upgrade,
        body: this.#takeBody(),
        connectTimeoutMs: forwarder.connectTimeoutMs ?? peer.connectTimeoutMs,
        readTimeoutMs: this.#readTimeoutMs,
        tls: forwarder.tls === null ? null : tlsConnect(forwarder.tls, peer),
      },
      forwarder,
    );
  }

  /** A 101: the two connections are spliced into a tunnel. */
  upgraded(statusText: string, rawHeaders: readonly string[], upstream: Socket, upstreamHead: Buffer): void {
    const exchange = this.#exchange;
    const client = exchange.req.socket;
    if (client.destroyed || !exchange.handOver()) {
      upstream.destroy();
      exchange.upstreamEnded();
      return;
    }
    client.off('data', this.#onEarlyData);
    client.off('end', this.#onEarlyEnd);
    this.#response.detachSocket(client);
    const headers = switchingProtocolsHeaders(rawHeaders);
    exchange.answer.addHeaders(101, headers);
    // a reason phrase that is not a field value's text is not relayed (as for any answer: http1-response.ts)
    const reason = statusText !== '' && isFieldValue(statusText, 0, statusText.length) ? statusText : '';
    const server = serverValue(exchange.timers.serverTokens);
    let head = `HTTP/1.1 101 ${reason || 'Switching Protocols'}\r\nServer: ${server}\r\nDate: ${httpDate()}\r\n`;
    for (let i = 0; i < headers.length; i += 2) head += `${headers[i]}: ${headers[i + 1]}\r\n`;
    const slots = exchange.slots;
    const tunnel = new Tunnel(client, upstream, (closed) => {
      slots?.release(101);
      // as in nginx, the tunnel counts against the server's max_conns until it closes
      exchange.upstreamEnded();
      this.#listener.tunnelClosed(closed);
    });
    tunnel.start(`${head}\r\n`, upstreamHead, Buffer.concat(this.#early), this.#readTimeoutMs);
    this.#listener.tunnelOpened(tunnel);
  }
}
