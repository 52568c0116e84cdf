/**
 * HTTP/0.9's simple request, as nginx 1.22's ngx_http_parse_request_line reads one: a method, spaces,
 * a target and a line end with no version between them (`GET /\r\n`).
 * It has no header lines and no body; nginx answers it with the body alone and closes.
 */

/** A simple request at the start of a connection's bytes: its method, target, and where it ends. */
export interface SimpleRequest {
  readonly method: string;
  readonly url: string;
  readonly end: number;
}

/**
 * nginx's method characters (upper-case letters, `_`, `-`), a target without spaces or control
 * characters starting with `/`, spaces, then CRLF or LF.
 */
const SIMPLE_LINE = /^([A-Z_-]+) +(\/[\x21-\x7e\x80-\xff]*) *\r?\n/;

/**
 * The simple request the bytes start with; null when they start with anything else, not all of it
 * came, or its line is longer than `maxBytes` (the largest head: a longer line is the head reader's).
 */
export function findSimpleRequest(bytes: Buffer, maxBytes: number): SimpleRequest | null {
  const lf = bytes.indexOf(0x0a);
  if (lf === -1 || lf >= maxBytes) return null;
  // the first line only: one with a version is a request of HTTP/1.x, read as such
  const line = SIMPLE_LINE.exec(bytes.toString('latin1', 0, lf + 1));
  return line === null ? null : { method: line[1]!, url: line[2]!, end: line[0].length };
}
