/**
 * Where a request head ends in a connection's bytes, and its lines as node:http's parser reads them.
 * nginx ends a line at LF, a CR before it optional (ngx_http_parse_request_line,
 * ngx_http_parse_header_line; RFC 9112 §2.2 lets a recipient), where the parser wants CRLF: a head
 * with a bare LF is rewritten to CRLF line ends before either reader sees it, its body untouched.
 * Rewritten as nginx reads it: CRs before a header line's LF are dropped (one only after the request
 * line), a header line without a colon is a header with an empty value, blank lines before the
 * request line are skipped. A CR anywhere else is left as sent, for the parser to refuse (nginx's
 * 400). A head with CRLF line ends only is found as it always was.
 */

const LF = 0x0a;
const CR = 0x0d;
const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
/** An LF without a CR before it. */
const BARE_LF = /(?<!\r)\n/;
/** A CR that is neither in a run of CRs nor at the end: nginx refuses the line as soon as it reads it. */
const STRAY_CR = /\r[^\r]/;
/** A byte nginx refuses in a header name (a line of a name alone may hold no other). */
const NOT_IN_NAME = /[\0- \x7f]/;

/** A head found, or as much of one as is rewritten. */
export interface FoundHead {
  /** The head is whole (else: cut short at a line nginx refuses, or too large so far). */
  readonly whole: boolean;
  /** Where the head ends in the bytes (after its empty line); cut short: where its unread line starts. */
  readonly end: number;
  /** Its lines, CRLF between them, without the last line end and the empty line (latin1). */
  readonly text: string;
  /** The lines were rewritten: the bytes up to `end` are not `text` and its CRLFs. */
  readonly rewritten: boolean;
}

/** Not all of a head with a bare LF came yet: reading waits for the rest. */
export const MORE = 0;

/**
 * The head at the start of `bytes` (`maxBytes`: as large as one may be). `MORE`: a head with a bare
 * LF is still arriving; null: a head with CRLF ends only that is not whole yet.
 */
export function findHead(bytes: Buffer, maxBytes: number): FoundHead | typeof MORE | null {
  const end = bytes.indexOf(HEAD_END);
  const text = bytes.toString('latin1', 0, end === -1 ? bytes.length : end);
  if (BARE_LF.test(text)) return rewriteHead(bytes, maxBytes);
  return end === -1 ? null : { whole: true, end: end + HEAD_END.length, text, rewritten: false };
}

/**
 * Reads the head line by line as nginx does. A line nginx refuses (a stray CR, a line of CRs only)
 * cuts the rewriting short: the parser meets that line as sent, and refuses it too.
 */
function rewriteHead(bytes: Buffer, maxBytes: number): FoundHead | typeof MORE {
  const lines: string[] = [];
  let start = 0;
  for (let lf = bytes.indexOf(LF); lf !== -1; lf = bytes.indexOf(LF, start)) {
    let lineEnd = lf;
    if (lines.length === 0) {
      if (lineEnd > start && bytes[lineEnd - 1] === CR) lineEnd--;
      if (lineEnd === start) {
        start = lf + 1;
        continue;
      }
    } else {
      while (lineEnd > start && bytes[lineEnd - 1] === CR) lineEnd--;
      if (lineEnd === start) {
        if (lf - start > 1) break;
        return { whole: true, end: lf + 1, text: lines.join('\r\n'), rewritten: true };
      }
    }
    let line = bytes.toString('latin1', start, lineEnd);
    if (line.includes('\r')) break;
    if (lines.length > 0 && !line.includes(':') && !NOT_IN_NAME.test(line)) line += ':';
    lines.push(line);
    start = lf + 1;
  }
  const cutShort =
    bytes.indexOf(LF, start) !== -1 ||
    bytes.length >= maxBytes ||
    STRAY_CR.test(bytes.toString('latin1', start));
  return cutShort ? { whole: false, end: start, text: lines.join('\r\n'), rewritten: true } : MORE;
}

/**
 * What node:http's parser is given of a head not read here: its lines with CRLF ends, then the bytes
 * after it as they came (a head cut short: from its unread line on). Heads pipelined behind a request
 * without a body are rewritten too: the parser reads on to them from the same bytes (a body's bytes
 * are never taken for a head: the rewriting stops at the first request that may have one).
 */
export function parserBytes(bytes: Buffer, head: FoundHead): Buffer {
  if (!head.rewritten) return bytes;
  const pieces: Buffer[] = [];
  let found = head;
  let rest = bytes;
  for (;;) {
    const lines = found.text.length === 0 ? '' : `${found.text}\r\n${found.whole ? '\r\n' : ''}`;
    pieces.push(Buffer.from(lines, 'latin1'));
    rest = rest.subarray(found.end);
    if (!found.whole || !bodiless(found.text)) break;
    const next = findHead(rest, Number.POSITIVE_INFINITY);
    if (next === null || next === MORE) break;
    found = next;
  }
  pieces.push(rest);
  return Buffer.concat(pieces);
}

/** A head the parser reads no body after, and whose connection goes on in HTTP/1. */
const MAY_HAVE_BODY = /^(?:content-length|transfer-encoding|upgrade)[ \t]*:/im;

function bodiless(text: string): boolean {
  return !MAY_HAVE_BODY.test(text) && !text.startsWith('CONNECT ');
}
