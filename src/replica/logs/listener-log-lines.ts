/**
 * The error-log lines a listener writes of its own, in nginx's words: a line about a connection
 * rather than a request (a TLS handshake that failed, an HTTP/2 client refused), a client gone while
 * its request waited out its delay, an upstream that failed a forwarded request.
 */
import type { Socket } from 'node:net';
import { normalizePeerAddress } from '../../engine/net/address-text.ts';
import type { DownstreamRequest } from '../http/contract/decision.ts';
import type { UpstreamError } from '../http/contract/exchange-events.ts';
import { connectionNumber, type ErrorLog, requestLogContext } from './error-log.ts';

/** `[info] … *N <message>, client: …, server: host:port`; `listen` is the port's `host:port`. */
export function logConnectionInfo(errorLog: ErrorLog, listen: string, message: string, socket: Socket): void {
  if (!errorLog.enabled('info')) return;
  errorLog.request(
    { level: 'info', message },
    {
      connection: connectionNumber(socket),
      client: normalizePeerAddress(socket.remoteAddress),
      server: listen,
      requestLine: null,
      host: null,
    },
  );
}

/**
 * nginx notices the EOF while the request waits out its delay, and says so at info. The context is
 * built even when info is off, so the connection's `*N` is given here as it always was.
 */
export function logClosedInDelay(errorLog: ErrorLog, ctx: DownstreamRequest, serverName: string): void {
  errorLog.request(
    { level: 'info', message: 'client prematurely closed connection' },
    requestLogContext(ctx, serverName),
  );
}

/** The upstream's failure with the `upstream:` the request was sent to. */
export function logUpstreamError(
  errorLog: ErrorLog,
  ctx: DownstreamRequest,
  serverName: string,
  error: UpstreamError,
): void {
  if (!errorLog.enabled(error.level)) return;
  errorLog.request(error, requestLogContext(ctx, serverName, error.upstream));
}
