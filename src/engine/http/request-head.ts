/**
 * nginx reading a request head (ngx_http_request.c), for what it refuses before any phase runs:
 *
 * - the request line and the header lines go into `client_header_buffer_size` (1k); when it is full
 *   mid-line, the line so far moves to one of `large_client_header_buffers` (4 8k), and so on. A line
 *   that does not fit one large buffer, or a head that needs more of them than there are, is refused:
 *   the request line with 414 (`client sent too long URI`), a header line with 494, which goes out as
 *   400 "Request Header Or Cookie Too Large" (`client sent too long header line: "…..."`);
 * - the version: HTTP/0.9 is an invalid request (400), 2 and above an invalid version (505);
 * - header lines are processed as they are read: a second Host line (whatever its case or value) is
 *   `client sent duplicate host header` (400), an invalid one (empty, `a..b`, `a/b`, a control
 *   character) `client sent invalid host header` (400);
 * - a second line of a header nginx keeps one of (`Transfer-Encoding`, `Authorization`, `Expect`,
 *   `If-Match`, …) is `client sent duplicate header line` (400);
 * - once the head is read: HTTP/1.1 without Host, `Transfer-Encoding` with HTTP/1.0 (400), one that is
 *   not `chunked` (`gzip, chunked` too: 501), TRACE (405).
 *
 * The buffers are the connection's default server's until a valid Host line selects a server; the
 * large buffers are then that server's (nginx switches `r->srv_conf`). All of these are logged at
 * `info`, with nginx's `while reading client request line` / `headers`.
 *
 * The head is counted as the bytes nginx would hold: `name: value` and CRLF per header line (a parser
 * that hands over names and values has dropped the exact spacing), each head from the start of a
 * buffer (nginx may find a pipelined request part-way into one).
 */
import { HeadBuffers, type HeadServers } from './header-buffers.ts';
import { isChunked, TRANSFER_ENCODING, uniqueLine } from './unique-header-lines.ts';

/**
 * A request head as an HTTP parser hands it over (named as node:http's IncomingMessage names it, so
 * one is passed as it is).
 */
export interface RequestHead {
  readonly method?: string;
  /** The request-target as sent. */
  readonly url?: string;
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  /** `[name, value, name, value, …]` in the order received. */
  readonly rawHeaders: readonly string[];
  /** An HTTP/2 stream's head (an HTTP/1 head that says `HTTP/2.0` is a 505). */
  readonly h2?: true;
  /** HTTP/0.9's simple request: a request line without a version, no header lines. */
  readonly simple?: boolean;
}

/** Where nginx stopped reading a head, and what it logs about it. */
export interface HeadFault {
  /** 400, 405, 414, 494 (sent as 400), 501 or 505. */
  readonly code: number;
  /** nginx's error-log text at `info`, with its `while reading client request …`. */
  readonly message: string;
  /** nginx's `request:` field: the request line as far as it was read; null before any was read. */
  readonly requestLine: string | null;
  /** nginx's `host:` field: the first Host line's value, null when none was read. */
  readonly host: string | null;
  /** That Host line selected the server (it was valid); otherwise the default server has the request. */
  readonly hostSelected: boolean;
}

/** nginx's NGX_MAX_ERROR_STR - 300: how much of a too long header line it logs. */
const LOGGED_LINE_BYTES = 1748;

export function isHostHeader(name: string): boolean {
  return name.length === 4 && (name === 'Host' || name.toLowerCase() === 'host');
}

/**
 * ngx_http_validate_host: false for a value nginx refuses as `invalid host header` — empty once a
 * port and one trailing dot are taken off, two dots in a row, a `/`, a control character or space.
 */
export function validateHost(host: string): boolean {
  let dotPos = -2;
  let hostLength = host.length;
  let state = 0; // 0 usual, 1 in an IPv6 literal, 2 past the host (the port)
  for (let i = 0; i < host.length; i++) {
    const ch = host.charCodeAt(i);
    if (ch === 0x2e /* . */) {
      if (dotPos === i - 1) return false;
      dotPos = i;
    } else if (ch === 0x3a /* : */) {
      if (state === 0) {
        hostLength = i;
        state = 2;
      }
    } else if (ch === 0x5b /* [ */) {
      if (i === 0) state = 1;
    } else if (ch === 0x5d /* ] */) {
      if (state === 1) {
        hostLength = i + 1;
        state = 2;
      }
    } else if (ch === 0x2f /* / */ || ch <= 0x20 || ch === 0x7f) {
      return false;
    }
  }
  if (dotPos === hostLength - 1) hostLength--;
  return hostLength > 0;
}

const WHILE_LINE = 'while reading client request line';
export const WHILE_HEADERS = 'while reading client request headers';

/** Reads a head line by line, as nginx does, and stops at the first fault. */
class HeadReader {
  readonly buffers: HeadBuffers;
  requestLine: string | null = null;
  host: string | null = null;
  hostName = '';
  hostSelected = false;
  /** The last header line read whole, with its line end (what nginx logs when the next has no room). */
  previous: string | null = null;
  /** The `Transfer-Encoding` line's value. */
  codings: string | null = null;
  /** The first line of each header nginx keeps one of, by its bit (`uniqueLine`). */
  readonly #unique = new Map<number, string>();

  constructor(servers: HeadServers) {
    this.buffers = new HeadBuffers(servers);
  }

  fault(code: number, message: string): HeadFault {
    return {
      code,
      message,
      requestLine: this.requestLine,
      host: this.host,
      hostSelected: this.hostSelected,
    };
  }

  /** The request line, `length` with its line end (Infinity: it had not ended). */
  readRequestLine(text: string, length: number, major: number): HeadFault | null {
    const held = this.buffers.take(length);
    if (held >= 0) {
      this.requestLine = `${text}\r\n`.slice(0, held);
      return this.fault(414, `client sent too long URI ${WHILE_LINE}`);
    }
    this.requestLine = text;
    if (major === 0) return this.fault(400, `client sent invalid request ${WHILE_LINE}`);
    if (major > 1) return this.fault(505, `client sent invalid version ${WHILE_LINE}`);
    return null;
  }

  /** A header line `name: value`; `text` is the line as sent, `length` with its line end. */
  readHeader(name: string, value: string, text: string, length: number): HeadFault | null {
    const held = this.buffers.take(length);
    if (held >= 0) return this.tooLong(`${text}\r\n`, held);
    this.previous = `${text}\r\n`;
    const unique = uniqueLine(name);
    if (unique !== 0) {
      const first = this.#unique.get(unique);
      if (first !== undefined) {
        return this.fault(
          400,
          `client sent duplicate header line: "${name}: ${value}", previous value: "${first}" ${WHILE_HEADERS}`,
        );
      }
      this.#unique.set(unique, `${name}: ${value}`);
      if (unique === TRANSFER_ENCODING) this.codings = value;
      return null;
    }
    if (!isHostHeader(name)) return null;
    if (this.host !== null) {
      return this.fault(
        400,
        `client sent duplicate host header: "${name}: ${value}", previous value: "${this.hostName}: ${this.host}" ${WHILE_HEADERS}`,
      );
    }
    this.host = value;
    this.hostName = name;
    if (!validateHost(value)) return this.fault(400, `client sent invalid host header ${WHILE_HEADERS}`);
    this.hostSelected = true;
    this.buffers.hostSelected(value);
    return null;
  }

  /** The empty line that ends the head. */
  readEnd(): HeadFault | null {
    const held = this.buffers.take(2);
    return held >= 0 ? this.tooLong('\r\n', held) : null;
  }

  /** nginx logs the line it was reading from where it started to the end of the full buffer. */
  tooLong(line: string, held: number): HeadFault {
    let text: string;
    if (held > 0) text = line.slice(0, held);
    else if (this.previous !== null) text = this.previous;
    else return this.fault(494, `client sent too large request ${WHILE_HEADERS}`);
    return this.fault(
      494,
      `client sent too long header line: "${text.slice(0, LOGGED_LINE_BYTES)}..." ${WHILE_HEADERS}`,
    );
  }
}

/** The bytes of the request line with its CRLF (`HTTP/1.1` is 8 of them). */
function requestLineBytes(method: string, target: string): number {
  return method.length + target.length + 12;
}

/**
 * What nginx refuses of a parsed head, or null. The common head — one short request line, a few
 * header lines within the first buffer, one valid Host, HTTP/1.x — is recognised in one pass over the
 * header list, without building any line.
 */
export function readRequestHead(head: RequestHead, servers: HeadServers): HeadFault | null {
  const raw = head.rawHeaders;
  const method = head.method ?? 'GET';
  const target = head.url ?? '/';
  // HTTP/0.9 knows GET only (ngx_http_process_request_line)
  if (head.simple === true)
    return method === 'GET'
      ? null
      : {
          code: 400,
          message: `client sent invalid method in HTTP/0.9 request ${WHILE_LINE}`,
          requestLine: `${method} ${target}`,
          host: null,
          hostSelected: false,
        };
  let bytes = requestLineBytes(method, target) + 2;
  let host: string | null = null;
  let hosts = 0;
  let codings: string | null = null;
  let unique = 0;
  let duplicate = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    bytes += name.length + value.length + 4;
    if (isHostHeader(name)) {
      hosts++;
      host = value;
    } else {
      const line = uniqueLine(name);
      if (line !== 0) {
        if ((unique & line) !== 0) duplicate = true;
        unique |= line;
        if (line === TRANSFER_ENCODING) codings = value;
      }
    }
  }
  const major = head.httpVersionMajor;
  const minor = head.httpVersionMinor;
  const http11 = major > 1 || (major === 1 && minor >= 1);
  if (
    bytes <= servers.defaultBuffers.firstBytes &&
    major === 1 &&
    hosts <= 1 &&
    (host === null ? !http11 : validateHost(host)) &&
    !duplicate &&
    (codings === null || (http11 && isChunked(codings))) &&
    method !== 'TRACE' &&
    method !== 'CONNECT'
  ) {
    return null;
  }
  const reader = new HeadReader(servers);
  const line = `${method} ${target} HTTP/${major}.${minor}`;
  const fault = reader.readRequestLine(line, line.length + 2, major);
  if (fault !== null) return fault;
  // nginx's parser knows no CONNECT request line (it takes the target for a URI)
  if (method === 'CONNECT') return reader.fault(400, `client sent invalid request ${WHILE_LINE}`);
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    const text = `${name}: ${value}`;
    const headerFault = reader.readHeader(name, value, text, text.length + 2);
    if (headerFault !== null) return headerFault;
  }
  const endFault = reader.readEnd();
  if (endFault !== null) return endFault;
  // ngx_http_process_request_header, in its order
  if (reader.host === null && http11) {
    return reader.fault(400, `client sent HTTP/1.1 request without "Host" header ${WHILE_HEADERS}`);
  }
  if (reader.codings !== null && !http11) {
    return reader.fault(400, `client sent HTTP/1.0 request with "Transfer-Encoding" header ${WHILE_HEADERS}`);
  }
  // node:http reads any list that ends in chunked (`gzip, chunked`); nginx knows chunked alone
  if (reader.codings !== null && !isChunked(reader.codings)) {
    return reader.fault(501, `client sent unknown "Transfer-Encoding": "${reader.codings}" ${WHILE_HEADERS}`);
  }
  if (method === 'TRACE') return reader.fault(405, `client sent TRACE method ${WHILE_HEADERS}`);
  return null;
}

const REQUEST_LINE = /^[A-Z_-]+ \S+ HTTP\/(\d+)\.\d+$/;

/**
 * What nginx makes of a head a parser gave up on as too large, from the bytes it had been given: the
 * request line and header lines so far, the last one unfinished. A head larger than every buffer
 * together must fail somewhere; null when these bytes do not show where (they do not start with a
 * request line, or stop before the fault).
 */
export function readOversizedHead(bytes: string, servers: HeadServers): HeadFault | null {
  const reader = new HeadReader(servers);
  let start = 0;
  let first = true;
  for (;;) {
    const lf = bytes.indexOf('\n', start);
    const ended = lf !== -1;
    const end = ended ? lf : bytes.length;
    const text = bytes.slice(start, end > start && bytes.charCodeAt(end - 1) === 0x0d ? end - 1 : end);
    const length = ended ? end + 1 - start : Number.POSITIVE_INFINITY;
    if (first) {
      first = false;
      const version = ended ? REQUEST_LINE.exec(text) : null;
      if (ended ? version === null : !/^[A-Z_-]+ /.test(text)) return null;
      const fault = reader.readRequestLine(text, length, Number(version?.[1] ?? 1));
      if (fault !== null) return fault;
    } else if (text === '' && ended) {
      return reader.readEnd();
    } else {
      const colon = text.indexOf(':');
      const name = colon === -1 ? text : text.slice(0, colon);
      const value = colon === -1 ? '' : text.slice(colon + 1).trim();
      const fault = reader.readHeader(name, value, text, length);
      if (fault !== null) return fault;
    }
    if (!ended) return null;
    start = lf + 1;
  }
}

/**
 * A request line whose version a parser rejected (it takes HTTP/1.0, 1.1 and 2.0 only): nginx's
 * answer from the line as received — 505 for a major version above 1 (`HTTP/3.0`), else 400 (nginx
 * would read `HTTP/1.2`, a parser that rejects it cannot).
 */
export function rejectedVersion(bytes: string): HeadFault {
  const lf = bytes.indexOf('\n');
  const line = (lf === -1 ? bytes : bytes.slice(0, lf)).replace(/\r$/, '');
  const major = /HTTP\/([1-9][0-9]*)\.[0-9]+$/.exec(line)?.[1];
  const invalidVersion = major !== undefined && major !== '1';
  return {
    code: invalidVersion ? 505 : 400,
    message: `client sent ${invalidVersion ? 'invalid version' : 'invalid request'} ${WHILE_LINE}`,
    requestLine: line,
    host: null,
    hostSelected: false,
  };
}
