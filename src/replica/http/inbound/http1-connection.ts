/**
 * A client's HTTP/1.1 connection, read by the replica itself while its requests are the common kind
 * (own-request-head.ts: HTTP/1.1, a body framed by Content-Length if any, nothing unusual), one
 * request at a time, keep-alive as node:http keeps it. The first head that is not — a chunked body,
 * `Expect`, an upgrade, a head cut off in the middle of a read, anything malformed — and the rest of
 * the connection go to node:http: the unread bytes are put back in front of the socket and node:http
 * takes it as a new connection, at a request boundary. So node:http still answers every head nginx
 * refuses, and the common request skips its request and response objects, its stream machinery and
 * its parser's crossings into C++ (a quarter of a proxied request's CPU; docs/benchmarks.md).
 * HTTP/0.9's simple request (`GET /`, simple-request.ts), which llhttp does not read, is read here
 * too: answered with the body alone, and the connection closes.
 *
 * node:http's rules kept here: `headersTimeout` for the first head, `keepAliveTimeout` between
 * requests; a body not read by the time its response is over is read and dropped; a client that
 * closes its side ends the connection, and within a body that is the exchange's fault to handle.
 */
import type { Socket } from 'node:net';
import { containFault, failpoint } from '../contract/fault-boundary.ts';
import { type FoundHead, findHead, MORE, parserBytes } from './head-line-ends.ts';
import { type BodySource, OwnRequest } from './own-request.ts';
import { type OwnHead, readOwnHead } from './own-request-head.ts';
import { OwnResponse, type ResponseOwner } from './own-response.ts';
import { findSimpleRequest } from './simple-request.ts';

export interface Http1Host {
  readonly keepAliveTimeoutMs: number;
  readonly headersTimeoutMs: number;
  /** A graceful close began: a finished response ends its connection. */
  readonly closing: boolean;
  /** The largest head node:http reads; a larger one goes to it (to be refused). */
  maxHeadBytes(): number;
  /** A request read here. */
  request(req: OwnRequest, res: OwnResponse): void;
  /** The client closed its side within the request's body (node:http: `HPE_INVALID_EOF_STATE`). */
  bodyCut(res: OwnResponse): void;
  /** node:http takes the connection from here on (its unread bytes are back in the socket). */
  handOver(socket: Socket): void;
  /** The connection closed (or left for node:http). */
  released(connection: Http1Connection): void;
}

/** Bytes buffered behind a request in progress (pipelined requests) before reading pauses. */
const PIPELINED_BYTES_MAX = 64 * 1024;

export class Http1Connection implements ResponseOwner, BodySource {
  readonly socket: Socket;
  readonly keepAliveTimeoutS: number;
  readonly #host: Http1Host;
  /** Read once per connection, as node:http sizes its parser (a reload counts for new connections). */
  readonly #maxHeadBytes: number;
  /** Bytes read and not yet taken by a request. */
  #unread: Buffer | null = null;
  #response: OwnResponse | null = null;
  /** The request whose body is still arriving. */
  #body: OwnRequest | null = null;
  /** No more requests are read here (closing, or node:http's). */
  #done = false;

  constructor(socket: Socket, host: Http1Host) {
    this.socket = socket;
    this.#host = host;
    this.keepAliveTimeoutS = Math.floor(host.keepAliveTimeoutMs / 1000);
    this.#maxHeadBytes = host.maxHeadBytes();
    socket.on('data', this.#onData);
    socket.on('end', this.#onEnd);
    socket.on('close', this.#onClose);
    socket.on('error', destroyOnError);
    socket.on('drain', this.#onDrain);
    socket.on('timeout', destroyOnError);
    socket.setTimeout(host.headersTimeoutMs);
  }

  #onData = (chunk: Buffer): void => {
    // closing (a lingering close reads and drops what still comes)
    if (this.#done) return;
    try {
      failpoint('client');
      const data = this.#body === null ? chunk : this.#feedBody(chunk);
      if (data === null) return;
      this.#unread = this.#unread === null ? data : Buffer.concat([this.#unread, data]);
      if (this.#response === null && this.#body === null) this.#readRequests();
      else if (this.#unread.length > PIPELINED_BYTES_MAX) this.socket.pause();
    } catch (error) {
      this.#fault(error);
    }
  };

  /** A callback of this connection threw: the connection ends (fault-boundary.ts). */
  #fault(error: unknown): void {
    this.#done = true;
    containFault('client', error, this.socket, this.socket);
  }

  /** Gives the body in progress what is its of `data`; returns the rest (null: none). */
  #feedBody(data: Buffer): Buffer | null {
    const req = this.#body!;
    const taken = Math.min(req.remainingBytes, data.length);
    req.push(taken === data.length ? data : data.subarray(0, taken));
    if (req.remainingBytes === 0) this.#body = null;
    return taken === data.length ? null : data.subarray(taken);
  }

  #readRequests(): void {
    const unread = this.#unread;
    if (unread === null || this.#done) return;
    const simple = findSimpleRequest(unread, this.#maxHeadBytes);
    if (simple !== null) {
      const { method, url } = simple;
      this.#start(
        { method, url, rawHeaders: [], keepAlive: false, contentLength: 0, simple: true },
        simple.end,
      );
      return;
    }
    const found = findHead(unread, this.#maxHeadBytes);
    if (found === MORE) {
      // the rest of a head with bare LFs: node:http's parser would refuse what came so far
      this.socket.setTimeout(this.#host.headersTimeoutMs);
      return;
    }
    if (found === null || !found.whole || found.end > this.#maxHeadBytes) {
      this.#handOver(found);
      return;
    }
    const head = readOwnHead(found.text);
    if (head === null) {
      this.#handOver(found);
      return;
    }
    this.#start(head, found.end);
  }

  /** A request read: its head's bytes end at `rest`. */
  #start(head: OwnHead, rest: number): void {
    const unread = this.#unread!;
    this.#unread = rest === unread.length ? null : unread.subarray(rest);
    const socket = this.socket;
    socket.setTimeout(0);
    const req = new OwnRequest(head, socket, this);
    if (head.contentLength > 0) {
      this.#body = req;
      // what came with the head waits in the request until it is read
      if (this.#unread !== null) this.#unread = this.#feedBody(this.#unread);
    }
    const res = new OwnResponse(socket, this, head.keepAlive, head.method, head.simple === true);
    this.#response = res;
    this.#host.request(req, res);
  }

  /** @internal the body waiting in the request is more than it holds. */
  pauseReading(): void {
    this.socket.pause();
  }

  /** @internal the request's body flows (again), or is dropped. */
  resumeReading(): void {
    if (!this.#done && this.socket.isPaused()) this.socket.resume();
  }

  /** @internal the response's last byte went out. */
  responseFinished(res: OwnResponse, keepAlive: boolean): void {
    if (this.#response !== res) return;
    this.#response = null;
    const socket = this.socket;
    if (!keepAlive || this.#host.closing) {
      this.#done = true;
      // lingers instead when the answer refused the request (lingering-close.ts)
      socket.destroySoon();
      return;
    }
    socket.setTimeout(res.keepAliveTimeoutMs === -1 ? this.#host.keepAliveTimeoutMs : res.keepAliveTimeoutMs);
    // the rest of a body nobody read is read and dropped; the next head follows it
    this.#body?.discard();
    if (socket.isPaused()) socket.resume();
    // after the exchange has heard its response's end ('close' comes first)
    queueMicrotask(() => {
      try {
        if (this.#response === null && this.#body === null) this.#readRequests();
      } catch (error) {
        this.#fault(error);
      }
    });
  }

  /** Closes the connection if no request is in progress (graceful close). */
  closeIfIdle(): void {
    if (this.#response === null) this.socket.destroy();
  }

  /** `head`: the head found first, whose lines the parser is given with CRLF ends. */
  #handOver(head: FoundHead | null): void {
    this.#done = true;
    const socket = this.socket;
    socket.off('data', this.#onData);
    socket.off('end', this.#onEnd);
    socket.off('close', this.#onClose);
    socket.off('error', destroyOnError);
    socket.off('drain', this.#onDrain);
    socket.off('timeout', destroyOnError);
    socket.setTimeout(0);
    socket.pause();
    if (this.#unread !== null) socket.unshift(head === null ? this.#unread : parserBytes(this.#unread, head));
    this.#unread = null;
    this.#host.released(this);
    this.#host.handOver(socket);
    socket.resume();
  }

  /** The client closed its side: as node:http does, the connection ends (a response in progress is cut). */
  #onEnd = (): void => {
    this.#done = true;
    try {
      if (this.#body !== null) {
        const res = this.#response;
        if (res === null) this.socket.destroy();
        else this.#host.bodyCut(res);
        return;
      }
      if (this.socket.writable) this.socket.end();
    } catch (error) {
      this.#fault(error);
    }
  };

  #onClose = (): void => {
    this.#done = true;
    try {
      this.#host.released(this);
      const res = this.#response;
      this.#response = null;
      res?.close();
    } catch (error) {
      this.#fault(error);
    }
  };

  #onDrain = (): void => {
    try {
      this.#response?.emit('drain');
    } catch (error) {
      this.#fault(error);
    }
  };
}

function destroyOnError(this: Socket): void {
  this.destroy();
}
