/** node:http's 'clientError' on the replica's listener: nginx's answers to what it could not read. */
import type { Socket } from 'node:net';
import { connectionOf } from '../contract/client-connection.ts';
import type { ClientInputRules, Decision } from '../contract/decision.ts';
import { isLingering, type Lingering, lingeringClose, lingerOnClose } from '../exchange/lingering-close.ts';
import { httpDate } from '../wire/http-date.ts';
import { serverValue } from '../wire/own-answer-head.ts';
import { closesConnection, errorPage, statusReason, wireStatus } from '../wire/status-pages.ts';

/** The address's default server's lingering close, and its `server_tokens` for the answer's `Server`. */
type UnreadAnswerRules = Lingering & { readonly serverTokens: boolean };

/** node:http's 'clientError': its parser's `HPE_…` code and the bytes of the read it failed in. */
export type ClientError = Error & { code?: string; rawPacket?: Buffer };

/**
 * node:http could not read a request (or the connection failed). A head it gave up on gets nginx's
 * answer for it (the hook's `client.unreadableHead` says which); a failure inside a request body in progress is that exchange's (the client's
 * fault, as nginx reads it: `client sent invalid chunked body`, `client prematurely closed
 * connection`); anything else — a reset, a fault behind an answer still going out — closes.
 */
export function answerClientError<D extends Decision>(
  err: ClientError,
  socket: Socket,
  clientInput: ClientInputRules<D> | null,
  lingering: UnreadAnswerRules,
): void {
  if (isLingering(socket) || socket.destroyed) return;
  const code = err.code ?? '';
  // a reset, or a head slower than client_header_timeout (nginx closes without an answer)
  if (!socket.writable || code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.destroy();
    return;
  }
  if (code === 'HPE_CLOSED_CONNECTION') {
    // bytes behind a request that ends its connection (HTTP/1.0, `Connection: close`): its answer
    // still goes out, and nothing after it is read (nginx answers it, then closes, lingering)
    lingerOnClose(socket, lingering);
    return;
  }
  const exchange = connectionOf(socket).exchange;
  if (exchange !== null) {
    const inBody = !exchange.bodyComplete && code.startsWith('HPE_');
    if (!inBody || !exchange.bodyFailed(code)) socket.destroy();
    return;
  }
  const status =
    clientInput === null
      ? code === 'HPE_HEADER_OVERFLOW'
        ? 494
        : 400
      : clientInput.unreadableHead({
          code,
          bytes: (err.rawPacket ?? EMPTY).toString('latin1'),
          socket,
        });
  answerUnread(socket, status, lingering);
}

const EMPTY = Buffer.alloc(0);

/** A request line nginx refuses once read (an invalid host in an absolute-form target): its 400. */
export function answerInvalidRequestLine(socket: Socket, lingering: UnreadAnswerRules): void {
  if (isLingering(socket) || socket.destroyed) return;
  answerUnread(socket, 400, lingering);
}

/**
 * nginx's answer to a head it did not read: its page with `Connection: close`, then a lingering
 * close; a closing code (408, a client that timed out) closes without one.
 */
function answerUnread(socket: Socket, code: number, lingering: UnreadAnswerRules): void {
  if (closesConnection(code)) {
    socket.destroy();
    return;
  }
  const page = errorPage(code, lingering.serverTokens);
  const status = wireStatus(code);
  const head =
    `HTTP/1.1 ${status} ${statusReason(code)}\r\nServer: ${serverValue(lingering.serverTokens)}\r\n` +
    (page === null ? '' : 'Content-Type: text/html\r\n') +
    `Content-Length: ${page === null ? 0 : page.length}\r\nDate: ${httpDate()}\r\nConnection: close\r\n\r\n`;
  socket.write(page === null ? head : Buffer.concat([Buffer.from(head, 'latin1'), page]));
  lingeringClose(socket, lingering);
}
