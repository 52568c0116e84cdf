/**
 * The response to a request read by the replica itself (http1-connection.ts), with the part of
 * `ServerResponse` the exchange uses — `writeHead(status, reason, flatHeaders)`, `write`, `end`,
 * `destroy`, `headersSent`, `statusCode`, `shouldKeepAlive`, 'drain' and 'close' — and the bytes
 * node:http writes for the same calls: the given headers, then `Date`, `Connection` (with
 * `Keep-Alive: timeout=N`), and `Transfer-Encoding: chunked` for a body without a length; no body
 * for HEAD, 204, 304 and 1xx. The head leaves with the first piece of the body, in one write. To
 * HTTP/0.9's simple request there is no head at all.
 * (A test holds the two byte for byte.)
 */
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import type { ClientTimers } from '../../../engine/http/client-timers.ts';
import type { ClientResponse } from '../contract/client-response.ts';
import { httpDate } from '../wire/http-date.ts';
import { statusReason } from '../wire/status-pages.ts';

/** What the response tells its connection. */
export interface ResponseOwner {
  /** Seconds for `Keep-Alive: timeout=N`. */
  readonly keepAliveTimeoutS: number;
  /** The last byte went out (or the connection failed under it): the next request may be read. */
  responseFinished(res: OwnResponse, keepAlive: boolean): void;
}

type WriteCallback = (err?: Error | null) => void;

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const INVALID_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

export class OwnResponse extends EventEmitter implements ClientResponse {
  statusCode = 200;
  headersSent = false;
  /** The head's bytes once `writeHead` made it (one byte a character: it is written as latin1). */
  headBytes = 0;
  shouldKeepAlive: boolean;
  /** How long the connection idles for the next request after this one (the location's `keepalive_timeout`). */
  keepAliveTimeoutMs = -1;
  /**
   * The location's `keepalive_timeout` header_timeout: `Keep-Alive: timeout=N` (null: none, as nginx
   * sends it only with that parameter); undefined: not told, node:http's `timeout=` of the idle time.
   */
  keepAliveHeaderS: number | null | undefined = undefined;
  socket: Socket | null;
  readonly #owner: ResponseOwner;
  #hasBody: boolean;
  #chunked = false;
  /** The head, until it leaves with the first write. */
  #head: string | null = null;
  #finished = false;
  #onFinished: (() => void) | null = null;
  #closed = false;
  /** To HTTP/0.9's simple request: the body alone, no head, then the connection closes (as nginx's). */
  readonly #simple: boolean;

  constructor(socket: Socket, owner: ResponseOwner, keepAlive: boolean, method: string, simple = false) {
    super();
    this.socket = socket;
    this.#owner = owner;
    this.#simple = simple;
    this.shouldKeepAlive = keepAlive && !simple;
    // a refused HEAD too: nginx's 400 page for HTTP/0.9's other methods comes alone
    this.#hasBody = simple || method !== 'HEAD';
  }

  writeHead(status: number, reason: string, headers: readonly string[] = []): this {
    this.statusCode = status;
    if (this.#simple) {
      this.#head = '';
      this.headersSent = true;
      return this;
    }
    if (status === 204 || status === 304 || (status >= 100 && status <= 199)) this.#hasBody = false;
    let head = `HTTP/1.1 ${status} ${reason}\r\n`;
    // node:http's rules for the headers it would otherwise add itself
    let length = false;
    let date = false;
    let connection = false;
    let encoding: string | null = null;
    for (let i = 0; i < headers.length; i += 2) {
      const name = headers[i]!;
      const value = headers[i + 1]!;
      if (!TOKEN.test(name))
        throw httpError('ERR_INVALID_HTTP_TOKEN', `Header name must be a valid HTTP token ["${name}"]`);
      if (INVALID_VALUE.test(value))
        throw httpError('ERR_INVALID_CHAR', `Invalid character in header content ["${name}"]`);
      switch (name.length) {
        case 4:
          date ||= name.toLowerCase() === 'date';
          break;
        case 10:
          if (name.toLowerCase() === 'connection') {
            connection = true;
            if (/(?:^|\W)close(?:$|\W)/i.test(value)) this.shouldKeepAlive = false;
          }
          break;
        case 14:
          length ||= name.toLowerCase() === 'content-length';
          break;
        case 17:
          if (name.toLowerCase() === 'transfer-encoding') encoding = value;
          break;
      }
      head += `${name}: ${value}\r\n`;
    }
    if (!date) head += `Date: ${httpDate()}\r\n`;
    if (!connection) {
      head += this.shouldKeepAlive
        ? `Connection: keep-alive\r\n${this.#keepAliveLine()}`
        : 'Connection: close\r\n';
    }
    if (encoding !== null) this.#chunked = /(?:^|,)\s*chunked\s*$/i.test(encoding);
    else if (!length && this.#hasBody) {
      this.#chunked = true;
      head += 'Transfer-Encoding: chunked\r\n';
    }
    this.#head = `${head}\r\n`;
    this.headBytes = this.#head.length;
    this.headersSent = true;
    return this;
  }

  /** The location's keep-alive timers (responder.ts). */
  idleUnder(timers: ClientTimers): void {
    this.keepAliveTimeoutMs = timers.keepaliveTimeoutMs;
    this.keepAliveHeaderS = timers.keepaliveHeaderS;
  }

  #keepAliveLine(): string {
    const told = this.keepAliveHeaderS;
    if (told === undefined) return `Keep-Alive: timeout=${this.#owner.keepAliveTimeoutS}\r\n`;
    // nginx's header filter sends it for a header_timeout other than 0
    return told === null || told === 0 ? '' : `Keep-Alive: timeout=${told}\r\n`;
  }

  /** `100 Continue` (not reached from here: a request with `Expect` is node:http's). */
  writeContinue(): void {
    this.socket?.write('HTTP/1.1 100 Continue\r\n\r\n', 'latin1');
  }

  write(chunk: Buffer | string, callback?: WriteCallback): boolean {
    const socket = this.socket;
    if (socket === null || this.#finished) return false;
    if (!this.#hasBody || chunk.length === 0) {
      if (this.#head === null) {
        callback?.();
        return true;
      }
      return this.#flushHead(socket, callback);
    }
    socket.cork();
    if (this.#head !== null) {
      socket.write(this.#head, 'latin1');
      this.#head = null;
    }
    let more: boolean;
    if (this.#chunked) {
      socket.write(`${byteLength(chunk).toString(16)}\r\n`, 'latin1');
      socket.write(chunk);
      more = socket.write('\r\n', 'latin1', callback);
    } else more = socket.write(chunk, callback);
    socket.uncork();
    return more;
  }

  /** Ends the response; `callback` runs once all of it went out. */
  end(chunk?: Buffer | string, callback?: WriteCallback): this {
    const socket = this.socket;
    if (socket === null || this.#finished) return this;
    if (!this.headersSent) this.writeHead(this.statusCode, statusReason(this.statusCode));
    socket.cork();
    if (chunk !== undefined) this.write(chunk);
    this.#finished = true;
    this.#onFinished = callback ?? null;
    let last = this.#head ?? '';
    this.#head = null;
    if (this.#chunked) last += '0\r\n\r\n';
    // an empty write too: its callback says the response's bytes are all out
    socket.write(last, 'latin1', (err?: Error | null) => this.#lastWritten(err));
    socket.uncork();
    return this;
  }

  /** Cuts the response: the connection closes under it. */
  destroy(): void {
    this.socket?.destroy();
  }

  #flushHead(socket: Socket, callback?: WriteCallback): boolean {
    const head = this.#head!;
    this.#head = null;
    return socket.write(head, 'latin1', callback);
  }

  #lastWritten(err?: Error | null): void {
    if (err) return;
    this.#onFinished?.();
    this.socket = null;
    this.#owner.responseFinished(this, this.shouldKeepAlive);
    this.close();
  }

  /** @internal 'close', once: the response ended, or its connection closed first. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.emit('close');
  }
}

function byteLength(chunk: Buffer | string): number {
  return typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
}

function httpError(code: string, message: string): TypeError {
  return Object.assign(new TypeError(message), { code });
}
