/**
 * The request half of the upstream HTTP/1.1 client (http1-client.ts): the handler the answer goes to,
 * the request head as one string, and the client's body streamed after it. Written as undici writes a
 * request (so upstreams see what they saw before): `host` first, then `connection: keep-alive` (`close`
 * on a connection's last request), the other headers as given, then the body's framing —
 * `content-length` as the client sent it, `transfer-encoding: chunked` for a body without one, and
 * `content-length: 0` for an empty POST, PUT or PATCH.
 */

import type { Socket } from 'node:net';
import type { ClientBodyStream } from '../contract/client-request.ts';
import { containFault, together } from '../contract/fault-boundary.ts';

/** undici's raw dispatch handler, as the exchange implements it. */
export interface Http1Handler {
  onConnect(abort: (err?: Error) => void): void;
  onBodySent(chunk: Buffer): void;
  onRequestSent(): void;
  onHeaders(statusCode: number, rawHeaders: string[], resume: () => void, statusText: string): boolean;
  onData(chunk: Buffer): boolean;
  /** The read that brought the head or body so far is over, and the response goes on. */
  onReadEnd(): void;
  onComplete(): void;
  onError(err: Error): void;
  /** The client connection the request came on (ended with this one if a callback of it throws). */
  readonly clientSocket: Socket | null;
}

export interface Http1Request {
  readonly path: string;
  readonly method: string;
  /** `[name, value, …]`; `host` and `content-length` among them are taken as undici takes them. */
  readonly headers: readonly string[];
  /** The client's body: streamed from its request, or read whole already (client-body.ts). */
  readonly body: ClientBodyStream | Buffer | null;
  /** Of a streamed body, what had come when the request went: it leaves with the head. */
  readonly preread?: Buffer | null;
  readonly headersTimeout?: number | undefined;
  readonly bodyTimeout?: number | undefined;
  /** The connection's last request: sent with `Connection: close`, closed after the answer. */
  readonly reset?: boolean;
}

/** Methods whose request carries a body by their meaning: an empty one is sent as `content-length: 0`. */
const EXPECTS_PAYLOAD = new Set(['PUT', 'POST', 'PATCH', 'QUERY', 'PROPFIND', 'PROPPATCH']);

/** A request target that can go out on a request line: origin form, bytes 0x21–0xff (as undici checks). */
export function validTarget(path: string): boolean {
  return path.charCodeAt(0) === 0x2f /* / */ && !/[^\u0021-\u00ff]/.test(path);
}

/** A request's head, and how its body goes: `chunked`, by its length, or none. */
export interface RequestHead {
  readonly text: string;
  readonly chunked: boolean;
}

/** The head of `request` (`hostLine`: the server's own `host:` line, for a request without Host). */
export function requestHead(request: Http1Request, hostLine: string, close: boolean): RequestHead {
  let host: string | null = null;
  let contentLength: string | null = null;
  let lines = '';
  const headers = request.headers;
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!;
    const value = headers[i + 1]!;
    if (name.length === 4 && name.toLowerCase() === 'host') {
      host ??= value;
      continue;
    }
    if (name.length === 14 && name.toLowerCase() === 'content-length') {
      contentLength = value;
      continue;
    }
    lines += `${name}: ${value}\r\n`;
  }
  let text = `${request.method} ${request.path} HTTP/1.1\r\n${host === null ? hostLine : `host: ${host}\r\n`}${close ? 'connection: close\r\n' : 'connection: keep-alive\r\n'}${lines}`;
  let chunked = false;
  if (request.body === null) {
    if (contentLength !== null && contentLength !== '0') text += `content-length: ${contentLength}\r\n`;
    else if (EXPECTS_PAYLOAD.has(request.method)) text += 'content-length: 0\r\n';
  } else if (Buffer.isBuffer(request.body)) {
    // read whole: it leaves as it is, so its length frames it — even when the client's Content-Length
    // is not in `headers` (`Connection: Content-Length` drops it), where `chunked` would announce
    // chunks the raw bytes are not, and a body holding `0\r\n\r\nGET /…` would be a second request
    text += `content-length: ${request.body.length}\r\n`;
  } else if (contentLength === null) {
    chunked = true;
    text += 'transfer-encoding: chunked\r\n';
  } else text += `content-length: ${contentLength}\r\n`;
  return { text: `${text}\r\n`, chunked };
}

/** The head with what had come of a streamed body, one chunk when the body is chunked (as nginx's). */
export function headWithPreread(head: RequestHead, preread: Buffer): Buffer {
  const text = Buffer.from(head.text, 'latin1');
  if (!head.chunked) return Buffer.concat([text, preread]);
  const size = Buffer.from(`${preread.length.toString(16)}\r\n`, 'latin1');
  return Buffer.concat([text, size, preread, Buffer.from('\r\n', 'latin1')]);
}

const EMPTY = Buffer.alloc(0);

/** What streaming a body tells the client. */
export interface BodyProgress {
  /** The request is still the connection's (not answered, failed or abandoned meanwhile). */
  current(): boolean;
  /** A piece went out. */
  wrote(chunk: Buffer): void;
  /** The whole body went out. */
  ended(): void;
}

/**
 * Streams the client's body to `socket` (chunked, or as it comes), pausing the client while the socket
 * is full. Returns what stops it.
 */
export function streamBody(
  body: ClientBodyStream,
  socket: Socket,
  chunked: boolean,
  progress: BodyProgress,
): () => void {
  // node:http emits a body it read from its own socket reads: a throw here ends both connections
  const fault = (error: unknown) => containFault('client', error, together(socket, body.socket), body.socket);
  const onDrain = () => {
    try {
      if (progress.current()) body.resume();
    } catch (error) {
      fault(error);
    }
  };
  const onData = (chunk: Buffer) => {
    try {
      writePiece(chunk);
    } catch (error) {
      fault(error);
    }
  };
  // a chunked body's pieces of one turn of the event loop (one read of the client) leave as one chunk,
  // as nginx's chunked filter gathers the small chunks of a read into one buffer
  let pending: Buffer[] = [];
  let gathering: NodeJS.Immediate | null = null;
  /** The pieces gathered, as one chunk (with the last chunk after it when `last`); what they held. */
  const writeChunk = (last: boolean): { data: Buffer | null; more: boolean } => {
    const data = pending.length === 0 ? null : pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    pending = [];
    socket.cork();
    // size line, data and CRLF leave in one write
    if (data !== null) socket.write(`${data.length.toString(16)}\r\n`, 'latin1');
    if (data !== null) socket.write(data);
    const more = socket.write(data === null ? '' : last ? '\r\n0\r\n\r\n' : '\r\n', 'latin1');
    if (data === null && last) socket.write('0\r\n\r\n', 'latin1');
    socket.uncork();
    return { data, more };
  };
  const sent = (chunk: Buffer | null, more: boolean) => {
    if (chunk !== null) progress.wrote(chunk);
    if (!more && progress.current()) {
      body.pause();
      socket.once('drain', onDrain);
    }
  };
  const onGathered = () => {
    gathering = null;
    try {
      if (!progress.current()) return;
      const { data, more } = writeChunk(false);
      sent(data, more);
    } catch (error) {
      fault(error);
    }
  };
  const writePiece = (chunk: Buffer) => {
    if (!progress.current()) return;
    if (chunked) {
      pending.push(chunk);
      gathering ??= setImmediate(onGathered);
      return;
    }
    sent(chunk, socket.write(chunk));
  };
  const onEnd = () => {
    try {
      stop();
      if (!progress.current()) return;
      if (chunked) progress.wrote(writeChunk(true).data ?? EMPTY);
      progress.ended();
    } catch (error) {
      fault(error);
    }
  };
  const stop = () => {
    body.off('data', onData);
    body.off('end', onEnd);
    socket.off('drain', onDrain);
    if (gathering !== null) clearImmediate(gathering);
    gathering = null;
  };
  body.on('data', onData);
  body.on('end', onEnd);
  if (body.isPaused()) body.resume();
  return stop;
}
