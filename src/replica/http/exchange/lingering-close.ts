/**
 * nginx's lingering close (ngx_http_set_lingering_close): after an answer that ends a connection
 * while the client may still be sending — a refused head, a body over `client_max_body_size`, a page
 * nginx closes after — the write side is shut (FIN once the answer is out), and whatever the client
 * still sends is read and dropped until it closes, `lingering_timeout` (5 s) passes without a byte,
 * or `lingering_time` (30 s) in all. Only then is the socket closed. Closing at once with unread
 * bytes makes the kernel send a reset, which can destroy the answer before the client has read it.
 * `lingering_close off` closes at once instead; the location's settings apply.
 *
 * node:http's parser reads the socket natively (no `'data'` events), so progress is `bytesRead`.
 */
import type { Socket } from 'node:net';
import { type ClientTimers, NGINX_CLIENT_TIMERS } from '../../../engine/http/client-timers.ts';
import { connectionOf } from '../contract/client-connection.ts';

/** The location's `lingering_close`, `lingering_time` and `lingering_timeout`. */
export type Lingering = Pick<ClientTimers, 'lingeringClose' | 'lingeringTimeMs' | 'lingeringTimeoutMs'>;

/**
 * True once the connection is closing: nothing more is answered on it (a request node:http read
 * behind the last answer, pipelined, is dropped unseen, as nginx never reads it).
 */
export function isLingering(socket: Socket): boolean {
  return connectionOf(socket).lastAnswered;
}

/**
 * The answer in progress is the connection's last: from now on nothing more is answered on it, and
 * node:http's close of it (its `destroySoon()` after a `Connection: close` answer) lingers instead.
 */
export function lingerOnClose(socket: Socket, lingering: Lingering = NGINX_CLIENT_TIMERS): void {
  connectionOf(socket).lastAnswered = true;
  if (lingering.lingeringClose === 'off') return;
  socket.destroySoon = function (this: Socket): void {
    lingeringClose(this, lingering);
  };
}

/** Ends the connection as nginx does (above). Idempotent. */
export function lingeringClose(socket: Socket, settings: Lingering = NGINX_CLIENT_TIMERS): void {
  const connection = connectionOf(socket);
  if (connection.lingering) return;
  connection.lingering = true;
  connection.lastAnswered = true;
  if (socket.destroyed) return;
  if (settings.lingeringClose === 'off') {
    socket.destroySoon();
    return;
  }
  socket.end();
  const startedMs = performance.now();
  let seen = socket.bytesRead;
  const timer = setInterval(() => {
    const read = socket.bytesRead;
    if (read === seen || performance.now() - startedMs >= settings.lingeringTimeMs) socket.destroy();
    seen = read;
  }, settings.lingeringTimeoutMs);
  socket.once('close', () => clearInterval(timer));
  // the client has closed its side: nothing more can come
  socket.once('end', () => socket.destroy());
  socket.resume();
}
