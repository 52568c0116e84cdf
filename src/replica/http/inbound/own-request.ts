/**
 * A request read by the replica itself (http1-connection.ts), with the part of `IncomingMessage` the
 * exchange, the hook and the logs read: the request line's parts, `rawHeaders`, `headers` (folded by
 * node:http's own rule, lazily, as node:http does), the socket, and a body framed by its
 * `Content-Length` as the part of a readable stream the exchange uses: 'data' and 'end' while it
 * flows, `pause`/`resume`/`isPaused`, `complete`. As in a `Readable`, the body waits until a 'data'
 * listener or `resume()` lets it flow, and the connection stops reading when too much of it waits.
 */
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';
import type { ClientRequest } from '../contract/client-request.ts';
import { containFault } from '../contract/fault-boundary.ts';
import { foldHeaders } from './fold-headers.ts';
import type { OwnHead } from './own-request-head.ts';

/** Where the body comes from: the connection, which stops and restarts reading. */
export interface BodySource {
  pauseReading(): void;
  resumeReading(): void;
}

/** Body bytes held for a reader that is not reading before the connection stops reading (a Readable's). */
const WAITING_BYTES_MAX = 16 * 1024;

export class OwnRequest extends EventEmitter implements ClientRequest {
  readonly method: string;
  readonly url: string;
  readonly httpVersion: string;
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  /** HTTP/0.9's simple request: answered with the body alone. */
  readonly simple: boolean;
  readonly rawHeaders: string[];
  readonly socket: Socket;
  /** The whole body arrived (at once when there is none). */
  complete: boolean;
  /** Body bytes still to come. */
  remainingBytes: number;
  readonly #source: BodySource;
  #headers: IncomingHttpHeaders | null = null;
  /** Body pieces not yet handed to a reader. */
  #waiting: Buffer[] = [];
  #waitingBytes = 0;
  /** A Readable's three states: not yet flowing (null), flowing, paused. */
  #flowing: boolean | null = null;
  #ended = false;
  /** The body is not wanted any more (the response is over): what comes is dropped. */
  #discarding = false;

  constructor(head: OwnHead, socket: Socket, source: BodySource) {
    super();
    this.method = head.method;
    this.url = head.url;
    this.simple = head.simple === true;
    // no version on its request line: `$server_protocol` is empty, as nginx's
    this.httpVersion = this.simple ? '' : '1.1';
    this.httpVersionMajor = this.simple ? 0 : 1;
    this.httpVersionMinor = this.simple ? 9 : 1;
    this.rawHeaders = head.rawHeaders;
    this.socket = socket;
    this.#source = source;
    this.remainingBytes = head.contentLength;
    this.complete = head.contentLength === 0;
  }

  get headers(): IncomingHttpHeaders {
    this.#headers ??= foldHeaders(this.rawHeaders);
    return this.#headers;
  }

  /** A 'data' listener lets the body flow, unless it was paused (a Readable's rule). */
  override on(event: string | symbol, listener: Parameters<EventEmitter['on']>[1]): this {
    super.on(event, listener);
    if (event === 'data' && this.#flowing === null) this.resume();
    return this;
  }

  isPaused(): boolean {
    return this.#flowing === false;
  }

  pause(): this {
    this.#flowing = false;
    return this;
  }

  /** Lets the body flow; what waited is handed over in a microtask, as a Readable does it later. */
  resume(): this {
    if (this.#flowing === true) return this;
    this.#flowing = true;
    queueMicrotask(() => {
      try {
        this.#flow();
      } catch (error) {
        containFault('client', error, this.socket, this.socket);
      }
    });
    return this;
  }

  /** @internal the next piece of the body (at most `remainingBytes`), from the connection. */
  push(piece: Buffer): void {
    this.remainingBytes -= piece.length;
    if (this.remainingBytes === 0) this.complete = true;
    if (this.#discarding) return;
    if (this.#flowing !== true || this.#waiting.length > 0) {
      this.#waiting.push(piece);
      this.#waitingBytes += piece.length;
      if (this.#waitingBytes > WAITING_BYTES_MAX) this.#source.pauseReading();
      return;
    }
    this.emit('data', piece);
    this.#endIfComplete();
  }

  /** @internal the response is over: the rest of the body is read and dropped (node:http's dump). */
  discard(): void {
    this.#discarding = true;
    this.#waiting = [];
    this.#waitingBytes = 0;
    this.#source.resumeReading();
  }

  // a method, not an arrow field: one of those is a function made for every request, read or not
  #flow(): void {
    while (this.#flowing === true && this.#waiting.length > 0 && !this.#discarding) {
      const piece = this.#waiting.shift()!;
      this.#waitingBytes -= piece.length;
      this.emit('data', piece);
    }
    if (this.#flowing !== true || this.#discarding) return;
    this.#source.resumeReading();
    this.#endIfComplete();
  }

  #endIfComplete(): void {
    if (!this.complete || this.#ended || this.remainingBytes !== 0 || this.#waiting.length > 0) return;
    this.#ended = true;
    this.emit('end');
  }
}
