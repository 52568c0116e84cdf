/**
 * An HTTP/2 stream as the exchange sees a request: node:http2's compatibility objects, with the
 * request's head in HTTP/1.1's shape — `:authority` as `Host`, no pseudo-headers, the cookie
 * crumbs joined (RFC 9113 §8.2.3; nginx joins them with "; ") — and a response that leaves out what
 * HTTP/2 forbids (the connection-specific headers and the reason phrase). A body without a length
 * is marked as chunked, so it is forwarded as one.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { Socket } from 'node:net';
import type { ClientRequest } from '../contract/client-request.ts';
import type { ClientResponse } from '../contract/client-response.ts';
import { writeJoiningSingles } from './h2-single-fields.ts';

/** Connection-specific fields (RFC 9113 §8.2.2): a response carrying them is malformed in h2. */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

function h2Head(req: Http2ServerRequest): string[] {
  const raw = req.rawHeaders;
  const out: string[] = [];
  let authority: string | null = null;
  let cookies: string | null = null;
  let hasLength = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    if (name.charCodeAt(0) === 58 /* ':' */) {
      if (name === ':authority') authority = value;
      continue;
    }
    if (name === 'cookie') {
      cookies = cookies === null ? value : `${cookies}; ${value}`;
      continue;
    }
    if (name === 'content-length') hasLength = true;
    out.push(name, value);
  }
  // nginx 1.22 reads `:authority` as a Host line: a Host field too is a second one (refused)
  if (authority !== null) out.unshift('host', authority);
  if (cookies !== null) out.push('cookie', cookies);
  if (!hasLength && !req.stream.endAfterHeaders) out.push('transfer-encoding', 'chunked');
  return out;
}

/** A flat header list as an HTTP/2 response may carry it. */
function h2Headers(headers: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!.toLowerCase();
    if (CONNECTION_SPECIFIC.has(name)) continue;
    const value = headers[i + 1]!;
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

/** An HTTP/2 stream's request, in the shape every request has on the data path. */
export class H2Request implements ClientRequest {
  readonly h2 = true;
  readonly method: string;
  readonly url: string;
  readonly httpVersion: string;
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  /** The head in HTTP/1.1's shape (above), computed once: the exchange and the engine read it often. */
  readonly rawHeaders: string[];
  readonly headers: IncomingHttpHeaders;
  readonly socket: Socket;
  readonly #stream: Http2ServerRequest;

  constructor(stream: Http2ServerRequest) {
    this.#stream = stream;
    this.method = stream.method;
    this.url = stream.url;
    this.httpVersion = stream.httpVersion;
    this.httpVersionMajor = stream.httpVersionMajor;
    this.httpVersionMinor = stream.httpVersionMinor;
    this.socket = stream.socket as Socket;
    const raw = h2Head(stream);
    const headers: Record<string, string> = {};
    for (let i = 0; i < raw.length; i += 2) {
      const name = raw[i]!;
      headers[name] = headers[name] === undefined ? raw[i + 1]! : `${headers[name]}, ${raw[i + 1]}`;
    }
    this.rawHeaders = raw;
    this.headers = headers;
  }

  get complete(): boolean {
    return this.#stream.complete;
  }

  on(event: 'data' | 'end', listener: (chunk: Buffer) => void): this {
    this.#stream.on(event, listener);
    return this;
  }

  off(event: 'data' | 'end', listener: (chunk: Buffer) => void): this {
    this.#stream.off(event, listener);
    return this;
  }

  pause(): this {
    this.#stream.pause();
    return this;
  }

  resume(): this {
    this.#stream.resume();
    return this;
  }

  isPaused(): boolean {
    return this.#stream.isPaused();
  }
}

/** An HTTP/2 stream's response: the head without what HTTP/2 forbids, no reason phrase. */
export class H2Response implements ClientResponse {
  /** A stream ends by itself; its session counts its streams (h2-listener.ts). */
  shouldKeepAlive = true;
  readonly #stream: Http2ServerResponse;

  constructor(stream: Http2ServerResponse) {
    this.#stream = stream;
  }

  get statusCode(): number {
    return this.#stream.statusCode;
  }

  set statusCode(status: number) {
    this.#stream.statusCode = status;
  }

  get headersSent(): boolean {
    return this.#stream.headersSent;
  }

  get socket(): Socket | null {
    return (this.#stream.socket as Socket | null) ?? null;
  }

  writeHead(status: number, _reason: string, headers: string[]): this {
    writeJoiningSingles((fields) => this.#stream.writeHead(status, fields), h2Headers(headers));
    return this;
  }

  writeContinue(): void {
    this.#stream.writeContinue();
  }

  write(chunk: Buffer, callback?: (err?: Error | null) => void): boolean {
    return this.#stream.write(chunk, callback);
  }

  end(chunk?: Buffer | string, callback?: () => void): this {
    if (chunk === undefined) this.#stream.end();
    else this.#stream.end(chunk, callback);
    return this;
  }

  destroy(): this {
    this.#stream.destroy();
    return this;
  }

  on(event: 'close', listener: () => void): this {
    this.#stream.on(event, listener);
    return this;
  }

  once(event: 'drain' | 'close', listener: () => void): this {
    this.#stream.once(event, listener);
    return this;
  }
}
