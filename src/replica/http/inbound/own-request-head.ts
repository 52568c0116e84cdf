/**
 * The request heads the replica reads itself (http1-connection.ts): the common shape only, parsed
 * exactly as node:http's llhttp would hand it over. Whatever is not plainly that shape — another
 * version, a chunked body, `Expect`, an upgrade, obs-fold, a byte outside printable ASCII, a target
 * that is not a simple origin form, a head cut off mid-way — is left to node:http, which answers it as it
 * always did (nginx's answers to malformed heads come from its parser's codes). So nothing here
 * decides what is malformed: a head is either read here or handed on untouched.
 */

/** A head read here: an HTTP/1.1 request, its body (if any) framed by `Content-Length`. */
export interface OwnHead {
  readonly method: string;
  readonly url: string;
  /** `[name, value, …]` in the order received, values without surrounding spaces. */
  readonly rawHeaders: string[];
  /** No `Connection: close`. */
  readonly keepAlive: boolean;
  /** The body's length (0: none). */
  readonly contentLength: number;
  /** HTTP/0.9's simple request (simple-request.ts): no version, no header lines. */
  readonly simple?: true;
}

/** Methods read here; any other goes to node:http (whose parser knows the rest). */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH']);

/** `METHOD /origin-form HTTP/1.1`: RFC 3986 characters only (no fragment, no space). */
const REQUEST_LINE = /^([A-Z]{3,7}) (\/[A-Za-z0-9\-._~:/?[\]@!$&'()*+,;=%]*) HTTP\/1\.1$/;
/**
 * A header line: a token, a colon, spaces, then visible ASCII and spaces, no space at either end;
 * or no value (`User-Agent: `), which llhttp hands over as an empty one, as nginx reads it.
 */
const HEADER_LINE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+): *((?:[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?)?)$/;
/** A length node:http reads as the same number (no sign, no spaces, well within 2^53). */
const LENGTH = /^[0-9]{1,15}$/;
/** A CR or LF that is not part of a CRLF pair (a bare line end llhttp may read differently). */
const LONE_LINE_END = /\r(?!\n)|(?<!\r)\n/;

/**
 * `text`: a head's bytes (latin1) without its final blank line. Null when node:http should read it.
 */
export function readOwnHead(text: string): OwnHead | null {
  if (LONE_LINE_END.test(text)) return null;
  const lines = text.split('\r\n');
  const requestLine = REQUEST_LINE.exec(lines[0]!);
  if (requestLine === null || !METHODS.has(requestLine[1]!)) return null;
  const rawHeaders: string[] = [];
  let keepAlive = true;
  let sawConnection = false;
  let contentLength = -1;
  for (let i = 1; i < lines.length; i++) {
    const header = HEADER_LINE.exec(lines[i]!);
    if (header === null) return null;
    const name = header[1]!;
    const value = header[2]!;
    switch (headerKind(name)) {
      case HANDED_ON:
        return null;
      case CONNECTION: {
        const lower = value.toLowerCase();
        if (sawConnection || (lower !== 'keep-alive' && lower !== 'close')) return null;
        sawConnection = true;
        keepAlive = lower === 'keep-alive';
        break;
      }
      case CONTENT_LENGTH:
        // a second length is node:http's to refuse
        if (contentLength !== -1 || !LENGTH.test(value)) return null;
        contentLength = Number(value);
        break;
    }
    rawHeaders.push(name, value);
  }
  return {
    method: requestLine[1]!,
    url: requestLine[2]!,
    rawHeaders,
    keepAlive,
    contentLength: Math.max(contentLength, 0),
  };
}

const HANDED_ON = 1;
const CONNECTION = 2;
const CONTENT_LENGTH = 3;

/** What a header name means for reading the head here (0: nothing). */
function headerKind(name: string): number {
  switch (name.length) {
    case 6:
      return name.toLowerCase() === 'expect' ? HANDED_ON : 0;
    case 7:
      return name.toLowerCase() === 'upgrade' ? HANDED_ON : 0;
    case 10:
      return name.toLowerCase() === 'connection' ? CONNECTION : 0;
    case 14:
      return name.toLowerCase() === 'content-length' ? CONTENT_LENGTH : 0;
    case 17:
      return name.toLowerCase() === 'transfer-encoding' ? HANDED_ON : 0;
  }
  return 0;
}
