/**
 * Sends an upgrade request to one upstream server, on a connection of its own (an upgraded connection
 * never goes back to a pool), and reports the answer in the undici handler's terms, so the exchange
 * relays a non-101 answer exactly as any response. A 101 hands the connection over (`onUpgrade`).
 *
 * Timeouts, as nginx's: `proxy_connect_timeout` for the connection (and an `https://` upstream's
 * handshake, checked as upstream-tls.ts checks any), then `proxy_read_timeout` of silence while the
 * answer is awaited or its body read.
 */

import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { isUnixAddress, UNIX_PREFIX } from '../../../engine/net/address-text.ts';
import { guarded, together } from '../contract/fault-boundary.ts';
import { UpstreamFailure } from '../wire/upstream-failure.ts';
import {
  handshakeFailure,
  keepSessions,
  type TlsConnect,
  tlsOptions,
  verifyFailure,
} from '../wire/upstream-tls.ts';
import type { UpstreamPeer } from './upstream-group.ts';

export interface UpgradeRequest {
  readonly method: string;
  readonly path: string;
  /** Flat `[name, value, …]`, sent as is (they carry `Host`, `Upgrade` and `Connection: upgrade`). */
  readonly headers: readonly string[];
  /** The request's body (its `Content-Length` is among the headers), or null. */
  readonly body: Buffer | null;
  readonly connectTimeoutMs: number;
  readonly readTimeoutMs: number;
  /** TLS to an `https://` upstream; absent or null: plain. */
  readonly tls?: TlsConnect | null;
}

export interface UpgradeHandler {
  onConnect(abort: (err?: Error) => void): void;
  /** Connected, and the request (its body with it) written: what follows is the wait for the answer. */
  onRequestSent(): void;
  onHeaders(
    statusCode: number,
    rawHeaders: readonly string[],
    resume: () => void,
    statusText: string,
  ): boolean;
  onData(chunk: Buffer): boolean;
  onComplete(): void;
  onError(err: Error): void;
  /** A 101: `socket` is the upstream connection, `head` what the server sent after the response head. */
  onUpgrade(statusText: string, rawHeaders: readonly string[], socket: Socket, head: Buffer): void;
  /** The client connection the request came on (ended with this one if a callback of it throws). */
  readonly clientSocket: Socket | null;
}

export function dispatchUpgrade(peer: UpstreamPeer, upgrade: UpgradeRequest, handler: UpgradeHandler): void {
  let settled = false;
  let connected = false;
  const address = isUnixAddress(peer.host)
    ? { socketPath: peer.host.slice(UNIX_PREFIX.length) }
    : { host: peer.host, port: peer.port };
  const options = {
    ...address,
    method: upgrade.method,
    path: upgrade.path,
    headers: upgrade.headers as string[],
    agent: false,
    timeout: upgrade.connectTimeoutMs,
  };
  const tls = upgrade.tls ?? null;
  const req: ClientRequest =
    tls === null ? request(options) : httpsRequest({ ...options, ...tlsOptions(tls) });
  let handshaking = false;
  // node:http calls these from the upstream connection's reads: a throw ends both connections
  const both = together(req, handler.clientSocket);
  const guard = <A extends unknown[]>(fn: (...args: A) => void) =>
    guarded(
      'upstream',
      fn,
      () => both,
      () => handler.clientSocket,
    );
  const fail = guard((err: Error & { code?: string }): void => {
    if (settled) return;
    settled = true;
    handler.onError(handshaking ? handshakeFailure(err) : err);
  });
  req.on('socket', (socket: Socket) => {
    socket.setNoDelay(true);
    if (tls !== null) {
      socket.once('connect', () => {
        handshaking = true;
      });
      keepSessions(socket as TLSSocket, tls);
    }
    socket.once(
      tls === null ? 'connect' : 'secureConnect',
      guard(() => {
        handshaking = false;
        const failure = tls === null ? null : verifyFailure(socket as TLSSocket, tls);
        if (failure !== null) {
          req.destroy(failure);
          return;
        }
        connected = true;
        req.setTimeout(upgrade.readTimeoutMs);
        handler.onRequestSent();
      }),
    );
  });
  req.on('timeout', () => {
    const kind = connected ? 'read-timeout' : handshaking ? 'handshake-timeout' : 'connect-timeout';
    req.destroy(new UpstreamFailure(kind));
  });
  req.on('error', fail);
  req.on(
    'upgrade',
    guard((res: IncomingMessage, socket: Socket, head: Buffer) => {
      if (settled) {
        socket.destroy();
        return;
      }
      settled = true;
      handler.onUpgrade(res.statusMessage ?? '', res.rawHeaders, socket, head);
    }),
  );
  req.on(
    'response',
    guard((res: IncomingMessage) => {
      // a 101 without `Connection: upgrade` switches to nothing this side can follow
      if (res.statusCode === 101) {
        req.destroy(new UpstreamFailure('closed', 'upstream sent a 101 without "Connection: upgrade"'));
        return;
      }
      const resume = () => res.resume();
      if (!handler.onHeaders(res.statusCode ?? 502, res.rawHeaders, resume, res.statusMessage ?? '')) {
        settled = true;
        req.destroy();
        return;
      }
      res.on(
        'data',
        guard((chunk: Buffer) => {
          if (!handler.onData(chunk)) res.pause();
        }),
      );
      res.on(
        'end',
        guard(() => {
          if (settled) return;
          settled = true;
          handler.onComplete();
          req.destroy();
        }),
      );
      res.on('error', fail);
    }),
  );
  handler.onConnect((err) => {
    if (settled) return;
    settled = true;
    req.destroy(err);
  });
  if (upgrade.body === null) req.end();
  else req.end(upgrade.body);
}
