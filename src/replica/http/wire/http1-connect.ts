/**
 * The socket of one upstream connection (http1-client.ts), made and watched: plain TCP, or TLS to an
 * `https://` upstream, whose handshake and certificate checks (upstream-tls.ts) come between the TCP
 * connect and the request — a failure there is the connection's, `while SSL handshaking to upstream`.
 * Every event runs in the fault boundary: a throw ends the connection, not the process.
 */
import type { OnReadOpts } from 'node:net';
import { connect, type Socket } from 'node:net';
import type { CallbackKind } from '../contract/fault-boundary.ts';
import { connectAddress } from './upstream-address.ts';
import { UpstreamFailure } from './upstream-failure.ts';
import { connectTls, handshakeFailure, type TlsConnect, verifyFailure } from './upstream-tls.ts';

/** What the connection hears of its socket. */
export interface SocketEvents {
  /** Ready for the request: connected, and for TLS the handshake over and the certificate passed. */
  ready(): void;
  /** The server ended its side. */
  ended(): void;
  /** The socket is gone: `err`, or null when it closed without one. */
  closed(err: Error | null): void;
  faulted(kind: CallbackKind, error: unknown): void;
}

/** A socket being made; `handshaking` while its TLS handshake goes on. */
export interface OpenedSocket {
  readonly socket: Socket;
  readonly handshaking: boolean;
}

/** The peer closed the connection before the handshake was over (ngx_ssl_handshake's words). */
const CLOSED_IN_HANDSHAKE = 'peer closed connection in SSL handshake';

/** Opens the connection to `host:port` or `unix:/path` (`tls` null: plain), its reads going to `onread`. */
export function openSocket(
  host: string,
  port: number,
  tls: TlsConnect | null,
  onread: OnReadOpts,
  events: SocketEvents,
): OpenedSocket {
  const guard =
    <A extends unknown[]>(fn: (...args: A) => void) =>
    (...args: A): void => {
      try {
        fn(...args);
      } catch (error) {
        events.faulted('upstream', error);
      }
    };
  if (tls === null) {
    // TCP_NODELAY once connected (set on the socket before it, it was set twice); no TCP keep-alive
    // probes (nginx's `proxy_socket_keepalive off`): Node's default
    const socket = connect({ ...connectAddress(host, port), noDelay: true, onread });
    socket.once(
      'connect',
      guard(() => events.ready()),
    );
    socket.on(
      'end',
      guard(() => events.ended()),
    );
    socket.on(
      'error',
      guard((err: Error) => events.closed(err)),
    );
    socket.on(
      'close',
      guard(() => events.closed(null)),
    );
    return { socket, handshaking: false };
  }
  const opened = { socket: connectTls(host, port, tls, onread), handshaking: false };
  const socket = opened.socket;
  socket.once('connect', () => {
    opened.handshaking = true;
  });
  socket.once(
    'secureConnect',
    guard(() => {
      opened.handshaking = false;
      const failure = verifyFailure(socket, tls);
      if (failure === null) events.ready();
      else events.closed(failure);
    }),
  );
  socket.on(
    'end',
    guard(() => {
      // during the handshake the close that follows tells
      if (!opened.handshaking) events.ended();
    }),
  );
  socket.on(
    'error',
    guard((err: Error) => events.closed(opened.handshaking ? handshakeFailure(err) : err)),
  );
  socket.on(
    'close',
    guard(() =>
      events.closed(opened.handshaking ? new UpstreamFailure('handshake', CLOSED_IN_HANDSHAKE) : null),
    ),
  );
  return opened;
}
