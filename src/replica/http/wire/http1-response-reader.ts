/**
 * The response to the request in progress on an upstream connection (http1-client.ts), read off its
 * socket: the head gathered across reads (1xx answers before it skipped), then the body by its framing
 * (a length, chunks, or until the server closes), handed to the request's handler as it comes, the
 * socket paused while the handler takes no more.
 * Reads land in one buffer shared by every upstream socket (`onread`: no stream per read); what is kept
 * of them is copied, a body into memory used again once written (body-buffers.ts).
 */
import type { OnReadOpts, Socket } from 'node:net';
import { type CallbackKind, failpoint } from '../contract/fault-boundary.ts';
import { copyBodyChunk } from './body-buffers.ts';
import type { Http1Handler } from './http1-request.ts';
import {
  CHUNKED,
  ChunkedDecoder,
  type Framing,
  LENGTH,
  NO_BODY,
  parseResponseHead,
  type ResponseHead,
  UNTIL_CLOSE,
} from './http1-response.ts';
import { findResponseHead } from './response-head-lines.ts';
import { UpstreamFailure } from './upstream-failure.ts';

/** Longest response head read (node's and undici's default). */
const MAX_HEAD_BYTES = 16 * 1024;
/** Every upstream socket reads into this: a read is handled before the next one, and what is kept is copied. */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/** What reads an upstream socket (http1-client.ts). */
export interface SocketReader {
  /** `bytes` read into `buffer` (shared: valid during this call). False pauses the socket. */
  read(buffer: Buffer, bytes: number): boolean;
  /** `read` threw (fault-boundary.ts). */
  faulted(kind: CallbackKind, error: unknown): void;
}

/** The `onread` of a socket read by `reader` (one function per connection, made once). */
export function sharedBufferReads(reader: SocketReader): OnReadOpts {
  return {
    buffer: READ_BUFFER,
    callback: (bytes, buffer) => {
      try {
        failpoint('upstream');
        return reader.read(buffer as Buffer, bytes);
      } catch (error) {
        reader.faulted('upstream', error);
        return false;
      }
    },
  };
}

/** What the reader needs of its connection (the client itself: one shape for every connection). */
export interface ResponseReaderHost {
  readonly socket: Socket | null;
  /** The request's handler: another one, or null, once a callback of it ended the request. */
  readonly handler: Http1Handler | null;
  /** The final head is read: the connection reads a body now, within its body timeout. */
  bodyStarted(): void;
  /** Body bytes came, or reading goes on: the body's wait starts again. */
  refreshTimer(): void;
  /** The response is whole. `clean`: nothing followed it. */
  responseComplete(clean: boolean): void;
  /** The request ends with `err`, and the connection with it. */
  responseFailed(err: Error): void;
}

export class Http1ResponseReader {
  readonly #host: ResponseReaderHost;
  /** Response bytes before the end of a head. */
  #headBuffer: Buffer | null = null;
  #head: ResponseHead | null = null;
  #remaining = 0;
  #chunked: ChunkedDecoder | null = null;
  /** The read that brought the response head brought none of a body that follows. */
  #headReadAlone = false;
  /** Reads of the response that began after the head's. */
  #bodyReads = 0;
  /** The last response came whole in at most two reads (set when it completes). */
  #shortAnswer = false;
  /** The request in progress was not a HEAD request: a head's framing says whether a body follows. */
  #expectBody = true;
  #paused = false;
  /** Given to the handler with the head: reading goes on after the handler paused it. */
  readonly #resume = (): void => this.resume();

  constructor(host: ResponseReaderHost) {
    this.#host = host;
  }

  /** The final head of the response being read, once it is. */
  get head(): ResponseHead | null {
    return this.#head;
  }

  /** The body being read ends when the server closes the connection. */
  get untilClose(): boolean {
    return this.#head!.framing === UNTIL_CLOSE;
  }

  /**
   * The last response came as a server with Nagle's algorithm on writes a head and a small body in two
   * `send`s: the head in a read of its own, the whole body in the next read (upstream-connection.ts).
   */
  get headAlone(): boolean {
    return this.#headReadAlone && this.#shortAnswer;
  }

  /**
   * The last response came whole in the read that brought its head, or in the one after: it does not
   * contradict a server marked for writing heads alone (a fresh connection's answer often comes whole,
   * read late).
   */
  get shortAnswer(): boolean {
    return this.#shortAnswer;
  }

  /** The handler took no more: the socket is not read until it asks for more. */
  get paused(): boolean {
    return this.#paused;
  }

  #pause(): void {
    if (this.#paused) return;
    this.#paused = true;
    this.#host.socket?.pause();
  }

  /** Reading goes on (if it was paused). */
  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    this.#host.refreshTimer();
    this.#host.socket?.resume();
  }

  /** A request goes out: its response is read from the start. */
  expect(method: string): void {
    this.#expectBody = method !== 'HEAD';
    this.clear();
  }

  /** The response is over: nothing of it is kept. */
  clear(): void {
    this.#head = null;
    this.#headBuffer = null;
    this.#chunked = null;
  }

  /** The response is whole: how many reads it took is kept (`shortAnswer`). */
  completed(): void {
    this.#shortAnswer = this.#bodyReads <= 1;
  }

  /** A read toward the head. */
  readHead(chunk: Buffer): void {
    // `chunk` is in the shared read buffer; a concatenation is the client's own
    const owned = this.#headBuffer !== null;
    let buffer = owned ? Buffer.concat([this.#headBuffer!, chunk]) : chunk;
    for (;;) {
      // lines may end in a bare LF, as nginx reads them (response-head-lines.ts)
      const found = findResponseHead(buffer);
      // the head without its blank line, or what has come of it
      const headBytes = found === null ? buffer.length : found.bodyStart - 4;
      if (found === null || headBytes > MAX_HEAD_BYTES) {
        if (headBytes > MAX_HEAD_BYTES) {
          this.#host.responseFailed(new UpstreamFailure('too-big-header', 'Headers Overflow Error'));
          return;
        }
        this.#headBuffer = owned ? buffer : Buffer.from(buffer);
        return;
      }
      let head: ResponseHead;
      try {
        head = parseResponseHead(found.bytes, found.end, this.#expectBody);
      } catch (err) {
        this.#host.responseFailed(err as Error);
        return;
      }
      const rest = buffer.subarray(found.bodyStart);
      // 1xx answers before the final one are not relayed
      if (head.status < 200) {
        if (head.status === 101) {
          this.#host.responseFailed(new UpstreamFailure('closed', 'bad upgrade'));
          return;
        }
        buffer = rest;
        if (buffer.length === 0) {
          this.#headBuffer = null;
          return;
        }
        continue;
      }
      this.#headBuffer = null;
      this.#startBody(head, rest);
      return;
    }
  }

  #startBody(head: ResponseHead, rest: Buffer): void {
    const host = this.#host;
    this.#head = head;
    this.#remaining = head.contentLength;
    this.#headReadAlone = head.framing !== NO_BODY && rest.length === 0;
    this.#bodyReads = 0;
    if (head.framing === CHUNKED) this.#chunked = new ChunkedDecoder();
    host.bodyStarted();
    const handler = host.handler!;
    if (!handler.onHeaders(head.status, head.rawHeaders, this.#resume, head.statusText)) this.#pause();
    if (host.handler !== handler) return;
    if (head.framing === NO_BODY) {
      host.responseComplete(rest.length === 0);
      return;
    }
    if (rest.length !== 0) this.#readBody(rest);
  }

  /** A read of the body (after the head's). */
  readBody(chunk: Buffer): void {
    this.#bodyReads++;
    this.#readBody(chunk);
  }

  #readBody(chunk: Buffer): void {
    const host = this.#host;
    host.refreshTimer();
    const handler = host.handler!;
    const framing: Framing = this.#head!.framing;
    // what the handler gets it may keep: copies out of the shared read buffer (body-buffers.ts)
    if (framing === UNTIL_CLOSE) {
      if (!handler.onData(copyBodyChunk(chunk))) this.#pause();
      return;
    }
    if (framing === LENGTH) {
      const remaining = this.#remaining;
      if (chunk.length <= remaining) {
        this.#remaining = remaining - chunk.length;
        if (!handler.onData(copyBodyChunk(chunk))) this.#pause();
        if (this.#remaining === 0 && host.handler === handler) host.responseComplete(true);
        return;
      }
      // more than the body: the rest is no answer to anything
      handler.onData(copyBodyChunk(chunk.subarray(0, remaining)));
      this.#remaining = 0;
      if (host.handler === handler) host.responseComplete(false);
      return;
    }
    const decoder = this.#chunked!;
    let done: boolean;
    let wantMore = true;
    try {
      done = decoder.push(chunk, (data) => {
        if (host.handler === handler && !handler.onData(copyBodyChunk(data))) wantMore = false;
      });
    } catch (err) {
      host.responseFailed(err as Error);
      return;
    }
    if (!wantMore) this.#pause();
    if (done && host.handler === handler) host.responseComplete(decoder.consumed === chunk.length);
  }
}
