/**
 * Where an upstream's response head ends, with nginx's line ends (ngx_http_parse_status_line,
 * ngx_http_parse_header_line): a line ends in LF, with or without a CR before it — on the status line
 * one CR, on a header line any number of them — and the head ends at the first line that is empty or a
 * lone CR. A head written otherwise than in CRLF lines is rewritten in them for the parser
 * (http1-response.ts), which then sees what nginx sees: a CR left inside a header line is an invalid
 * header there as in nginx.
 */

const LF = 0x0a;
const CR = 0x0d;

/** A head found in a buffer, in CRLF lines. */
export interface FoundHead {
  /** The head's bytes: the buffer read, or its lines rewritten to end in CRLF. */
  readonly bytes: Buffer;
  /** Where the blank line starts in `bytes` (its `\r\n\r\n`). */
  readonly end: number;
  /** Where the body starts in the buffer read (after the blank line). */
  readonly bodyStart: number;
}

/** The head at the start of `buffer`, or null while its blank line has not come. */
export function findResponseHead(buffer: Buffer): FoundHead | null {
  const statusEnd = buffer.indexOf(LF);
  if (statusEnd === -1) return null;
  // the status line takes one CR before its LF; a header line any number
  let rewritten = statusEnd === 0 || buffer[statusEnd - 1] !== CR;
  let lineStart = statusEnd + 1;
  for (;;) {
    const lf = buffer.indexOf(LF, lineStart);
    if (lf === -1) return refusedNow(buffer, statusEnd);
    if (lf === lineStart || (lf === lineStart + 1 && buffer[lineStart] === CR)) {
      if (lf === lineStart) rewritten = true;
      if (!rewritten) return { bytes: buffer, end: lineStart - 2, bodyStart: lf + 1 };
      const bytes = crlfLines(buffer, statusEnd, lineStart, CRLF);
      return { bytes, end: bytes.length - 4, bodyStart: lf + 1 };
    }
    if (buffer[lf - 1] !== CR || buffer[lf - 2] === CR) rewritten = true;
    lineStart = lf + 1;
  }
}

/** The status line and header lines of `buffer[0, upTo)` again, each ended by CRLF, then `tail`. */
function crlfLines(buffer: Buffer, statusEnd: number, upTo: number, tail: Buffer): Buffer {
  const lines: Buffer[] = [buffer.subarray(0, withoutCr(buffer, 0, statusEnd, 1))];
  for (let start = statusEnd + 1; start < upTo; ) {
    const lf = buffer.indexOf(LF, start);
    lines.push(buffer.subarray(start, withoutCr(buffer, start, lf, Number.POSITIVE_INFINITY)));
    start = lf + 1;
  }
  const parts: Buffer[] = [];
  for (const line of lines) parts.push(line, CRLF);
  parts.push(tail);
  return Buffer.concat(parts);
}

const CRLF = Buffer.from('\r\n');
const CRLF_CRLF = Buffer.from('\r\n\r\n');

/**
 * A head whose blank line has not come, with a header line nginx refuses already, for its CR (one
 * that starts a line and is not followed by LF, or one followed by neither CR nor LF): the lines up
 * to that one and that one, as a head the parser refuses; else null (the head may still come).
 */
function refusedNow(buffer: Buffer, statusEnd: number): FoundHead | null {
  for (let start = statusEnd + 1; start < buffer.length; ) {
    const lf = buffer.indexOf(LF, start);
    const end = lf === -1 ? buffer.length : lf;
    if (crRefused(buffer, start, end)) {
      const line = Buffer.concat([buffer.subarray(start, end), CRLF_CRLF]);
      const bytes = crlfLines(buffer, statusEnd, start, line);
      return { bytes, end: bytes.length - 4, bodyStart: buffer.length };
    }
    if (lf === -1) return null;
    start = lf + 1;
  }
  return null;
}

/** `buffer[start, end)`, a header line (`end` its LF or the end of what came), holds a refused CR. */
function crRefused(buffer: Buffer, start: number, end: number): boolean {
  if (buffer[start] === CR && start + 1 < end) return true;
  for (let cr = buffer.indexOf(CR, start); cr !== -1 && cr + 1 < end; cr = buffer.indexOf(CR, cr + 1)) {
    if (buffer[cr + 1] !== CR) return true;
  }
  return false;
}

/** Where `buffer[start, lf)` ends without up to `most` CRs at its end. */
function withoutCr(buffer: Buffer, start: number, lf: number, most: number): number {
  let end = lf;
  while (end > start && lf - end < most && buffer[end - 1] === CR) end--;
  return end;
}
