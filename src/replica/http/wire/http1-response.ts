/**
 * An upstream's HTTP/1.1 response as the proxy reads it: the head (status line and header lines) and
 * the body's framing (RFC 9112 §6.3: none for HEAD, 1xx, 204 and 304;
 * `Transfer-Encoding: chunked`; `Content-Length`; else until the server closes). Pure: bytes in,
 * facts or an error out. What it refuses is what nginx's upstream module calls an invalid header or
 * an invalid chunked response; the failures carry llhttp's codes and messages (`HPE_…`),
 * so that one classification (upstream-failure.ts) serves every upstream client.
 */
import { isFieldValue } from './field-value.ts';
import { UpstreamFailure } from './upstream-failure.ts';

/** How the body after a head is delimited. */
export const NO_BODY = 0;
export const LENGTH = 1;
export const CHUNKED = 2;
export const UNTIL_CLOSE = 3;
export type Framing = typeof NO_BODY | typeof LENGTH | typeof CHUNKED | typeof UNTIL_CLOSE;

export interface ResponseHead {
  readonly status: number;
  readonly statusText: string;
  /** `[name, value, …]` as received (latin1), names' case kept. */
  readonly rawHeaders: string[];
  readonly framing: Framing;
  /** Body bytes with `LENGTH`. */
  readonly contentLength: number;
  /** The connection may carry another request after this response. */
  readonly keepAlive: boolean;
  /** The server's `Keep-Alive: timeout=n`, ms; -1 when it says nothing. */
  readonly keepAliveTimeoutMs: number;
}

/** RFC 9110 tchar, for header names: 1 where a latin1 code is one. */
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
  TCHAR[c.charCodeAt(0)] = 1;

/** `text[from, to)` is a token (a header name); not empty. */
function isToken(text: string, from: number, to: number): boolean {
  if (from >= to) return false;
  for (let i = from; i < to; i++) if (TCHAR[text.charCodeAt(i)] !== 1) return false;
  return true;
}

/** `text[from, to)` is all decimal digits, and not empty. */
function isDigits(text: string, from: number, to: number): boolean {
  if (from >= to) return false;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * Parses the head in `buffer[0, end)` (`end` is where `\r\n\r\n` starts). `expectBody`: false for the
 * answer to a HEAD request.
 */
export function parseResponseHead(buffer: Buffer, end: number, expectBody: boolean): ResponseHead {
  const text = buffer.toString('latin1', 0, end);
  let at = text.indexOf('\r\n');
  const statusLine = at === -1 ? text : text.slice(0, at);
  // HTTP/1.x SP 3DIGIT SP reason
  if (
    statusLine.length < 12 ||
    !statusLine.startsWith('HTTP/1.') ||
    (statusLine[7] !== '1' && statusLine[7] !== '0') ||
    statusLine[8] !== ' ' ||
    !isDigits(statusLine, 9, 12) ||
    (statusLine.length > 12 && statusLine[12] !== ' ')
  ) {
    throw parserError('HPE_INVALID_CONSTANT', 'Expected HTTP/');
  }
  const http10 = statusLine[7] === '0';
  const status = Number(statusLine.slice(9, 12));
  // A reason phrase with a control in it (a bare CR or LF, \x01) is not relayed: written as it came
  // it could end the status line early and add header lines of the server's making past the
  // hop-by-hop filter. The client gets the standard phrase for the code instead (nginx's own).
  const statusText = isFieldValue(statusLine, 13, statusLine.length) ? statusLine.slice(13) : '';
  const rawHeaders: string[] = [];
  let contentLength = -1;
  let chunked = false;
  let close = false;
  let keepAliveToken = false;
  let keepAliveTimeoutMs = -1;
  // one header line a turn, [start, lineEnd), without splitting the head into lines
  while (at !== -1) {
    const start = at + 2;
    at = text.indexOf('\r\n', start);
    const lineEnd = at === -1 ? text.length : at;
    const colon = text.indexOf(':', start);
    if (colon <= start || colon > lineEnd || !isToken(text, start, colon)) {
      throw parserError('HPE_INVALID_HEADER_TOKEN', 'Invalid header token');
    }
    if (!isFieldValue(text, colon + 1, lineEnd)) {
      throw parserError('HPE_INVALID_HEADER_TOKEN', 'Invalid header value char');
    }
    const name = text.slice(start, colon);
    const value = trimmed(text, colon + 1, lineEnd);
    rawHeaders.push(name, value);
    switch (name.length) {
      case 10: {
        const lower = name.toLowerCase();
        if (lower === 'connection') {
          const tokens = value.toLowerCase();
          if (tokens === 'keep-alive') keepAliveToken = true;
          else if (tokens === 'close') close = true;
          else {
            for (const token of tokens.split(',')) {
              const t = token.trim();
              if (t === 'close') close = true;
              else if (t === 'keep-alive') keepAliveToken = true;
            }
          }
        } else if (lower === 'keep-alive') {
          keepAliveTimeoutMs = keepAliveTimeout(value);
        }
        break;
      }
      case 14:
        if (name.toLowerCase() === 'content-length') {
          if (!isDigits(value, 0, value.length)) {
            throw parserError('HPE_INVALID_CONTENT_LENGTH', 'Invalid character in Content-Length');
          }
          const length = Number(value);
          if (contentLength !== -1 && contentLength !== length) {
            throw parserError('HPE_UNEXPECTED_CONTENT_LENGTH', 'Duplicate Content-Length');
          }
          contentLength = length;
        }
        break;
      case 17:
        if (name.toLowerCase() === 'transfer-encoding') {
          const codings = value.toLowerCase().split(',');
          chunked = codings[codings.length - 1]!.trim() === 'chunked';
        }
        break;
    }
  }
  if (chunked && contentLength !== -1) {
    throw parserError(
      'HPE_UNEXPECTED_CONTENT_LENGTH',
      "Content-Length can't be present with Transfer-Encoding",
    );
  }
  let framing: Framing;
  if (!expectBody || status < 200 || status === 204 || status === 304) framing = NO_BODY;
  else if (chunked) framing = CHUNKED;
  else if (contentLength !== -1) framing = contentLength === 0 ? NO_BODY : LENGTH;
  else framing = UNTIL_CLOSE;
  const keepAlive = framing !== UNTIL_CLOSE && !close && (!http10 || keepAliveToken);
  return { status, statusText, rawHeaders, framing, contentLength, keepAlive, keepAliveTimeoutMs };
}

/** `text[from, to)` without the optional whitespace (SP, HTAB) around a field value. */
function trimmed(text: string, from: number, to: number): string {
  let start = from;
  let end = to;
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return text.slice(start, end);
}

function isOws(c: number): boolean {
  return c === 0x20 || c === 0x09;
}

/** `timeout=n` of a Keep-Alive header, in ms; -1 without one. */
function keepAliveTimeout(value: string): number {
  const at = value.indexOf('timeout=');
  if (at === -1) return -1;
  let end = at + 8;
  while (end < value.length && value.charCodeAt(end) >= 0x30 && value.charCodeAt(end) <= 0x39) end++;
  return end === at + 8 ? -1 : Number(value.slice(at + 8, end)) * 1000;
}

/** Reading a chunk-size line, the chunk's data, the CRLF after it, or the trailer section. */
const SIZE = 0;
const DATA = 1;
const DATA_END = 2;
const TRAILERS = 3;
const DONE = 4;
/** A chunk-size line (with extensions) or a trailer line longer than this is refused. */
const MAX_LINE_BYTES = 16 * 1024;

/**
 * Decodes a chunked body piece by piece: `push` hands each piece of chunk data to `onData` and says
 * whether the body ended (the bytes after the end are not the body's).
 */
export class ChunkedDecoder {
  #state = SIZE;
  #remaining = 0;
  /** A line (size or trailer) not yet ended. */
  #line = '';
  /** Bytes of the buffer given to the last `push` that belong to the body (with framing). */
  consumed = 0;

  get done(): boolean {
    return this.#state === DONE;
  }

  /** Feeds `chunk`; throws an `invalid-response` failure on a broken framing. True once the last chunk ended. */
  push(chunk: Buffer, onData: (data: Buffer) => void): boolean {
    let at = 0;
    const length = chunk.length;
    while (at < length && this.#state !== DONE) {
      switch (this.#state) {
        case SIZE:
        case TRAILERS:
        case DATA_END: {
          const lf = chunk.indexOf(10, at);
          const end = lf === -1 ? length : lf + 1;
          this.#line += chunk.toString('latin1', at, end);
          at = end;
          if (this.#line.length > MAX_LINE_BYTES) throw invalidChunk();
          if (lf === -1) break;
          if (!this.#line.endsWith('\r\n')) throw invalidChunk();
          const line = this.#line.slice(0, -2);
          this.#line = '';
          this.#endLine(line);
          break;
        }
        case DATA: {
          const take = Math.min(this.#remaining, length - at);
          onData(chunk.subarray(at, at + take));
          at += take;
          this.#remaining -= take;
          if (this.#remaining === 0) this.#state = DATA_END;
          break;
        }
      }
    }
    this.consumed = at;
    return this.#state === DONE;
  }

  #endLine(line: string): void {
    if (this.#state === DATA_END) {
      if (line !== '') throw invalidChunk();
      this.#state = SIZE;
      return;
    }
    if (this.#state === TRAILERS) {
      if (line === '') this.#state = DONE;
      return;
    }
    const semicolon = line.indexOf(';');
    const size = (semicolon === -1 ? line : line.slice(0, semicolon)).trimEnd();
    if (!/^[0-9A-Fa-f]{1,15}$/.test(size)) throw invalidChunk();
    this.#remaining = Number.parseInt(size, 16);
    this.#state = this.#remaining === 0 ? TRAILERS : DATA;
  }
}

function invalidChunk(): UpstreamFailure {
  return parserError('HPE_INVALID_CHUNK_SIZE', 'Invalid character in chunk size');
}

/** A head or framing refused, named as llhttp names it (`code`, message). */
function parserError(code: string, message: string): UpstreamFailure {
  return new UpstreamFailure('invalid-response', message, code);
}
