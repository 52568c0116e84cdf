/**
 * Properties of the upstream response reader (src/replica/http/http1-response.ts), on arbitrary and on
 * structured bytes:
 *
 * - `parseResponseHead` and `ChunkedDecoder.push` throw nothing but their own `UpstreamFailure` (`invalid-response`);
 * - a parsed head holds no CR, LF or other control byte (HTAB, which a field value may hold, aside)
 *   in its reason phrase or any header value, only tokens as names, and nothing past the head's end;
 * - for well-formed heads, the framing (none, length, chunked, until close), the length and whether
 *   the connection is kept agree with a reference decoder written here from RFC 9112 §6.3 and §9.3;
 *   a head with two lengths or a length and chunked is refused as llhttp refuses it;
 * - a valid chunked body cut into reads at random points decodes to a reference decoder's data and
 *   ends where it ends; one with broken framing is refused.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  CHUNKED,
  ChunkedDecoder,
  type Framing,
  LENGTH,
  NO_BODY,
  parseResponseHead,
  type ResponseHead,
  UNTIL_CLOSE,
} from '../../src/replica/http/wire/http1-response.ts';
import { findResponseHead } from '../../src/replica/http/wire/response-head-lines.ts';
import { UpstreamFailure } from '../../src/replica/http/wire/upstream-failure.ts';

/** A property as the fuzz runs take it. */
export interface NamedProperty {
  readonly name: string;
  readonly property: fc.IProperty<unknown>;
}

const CRLF_CRLF = Buffer.from('\r\n\r\n');
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** Runs `fn`; anything thrown must be the reader's own error. */
function ownErrorsOnly<T>(fn: () => T): T | UpstreamFailure {
  try {
    return fn();
  } catch (err) {
    if (!(err instanceof UpstreamFailure)) throw err;
    assert.match(err.code, /^HPE_[A-Z_]+$/);
    return err;
  }
}

/** What every parsed head holds. */
function checkHead(head: ResponseHead): void {
  assert.ok(Number.isInteger(head.status) && head.status >= 0 && head.status <= 999);
  assert.doesNotMatch(head.statusText, /[\x00-\x08\x0a-\x1f\x7f]/, 'reason phrase');
  assert.equal(head.rawHeaders.length % 2, 0);
  for (let i = 0; i < head.rawHeaders.length; i += 2) {
    assert.match(head.rawHeaders[i]!, TOKEN, 'header name');
    const value = head.rawHeaders[i + 1]!;
    assert.doesNotMatch(value, /[\x00-\x08\x0a-\x1f\x7f]/, `value of ${head.rawHeaders[i]}`);
    assert.doesNotMatch(value, /^[ \t]|[ \t]$/, 'value not trimmed');
  }
  assert.ok([NO_BODY, LENGTH, CHUNKED, UNTIL_CLOSE].includes(head.framing));
  if (head.framing === LENGTH) assert.ok(Number.isSafeInteger(head.contentLength) && head.contentLength > 0);
  if (head.framing === UNTIL_CLOSE) assert.equal(head.keepAlive, false);
}

/** Parses `bytes` up to their first blank line (or all of them), and again with other bytes after it. */
function parseBounded(bytes: Buffer, expectBody: boolean): void {
  const found = bytes.indexOf(CRLF_CRLF);
  const end = found === -1 ? bytes.length : found;
  const head = ownErrorsOnly(() => parseResponseHead(bytes, end, expectBody));
  if (!(head instanceof UpstreamFailure)) checkHead(head);
  // nothing past the head is read: other bytes after it change nothing
  const other = Buffer.concat([bytes.subarray(0, end), Buffer.from('\r\n\r\nX: \x00\r\n\n\r')]);
  const again = ownErrorsOnly(() => parseResponseHead(other, end, expectBody));
  assert.deepEqual(again, head);
}

/** Bytes a head is made of, odd ones often. */
const oddByte = fc.constantFrom(
  '\r',
  '\n',
  '\x00',
  '\x01',
  '\x0b',
  '\x7f',
  '\t',
  ' ',
  '\x80',
  '\xff',
  ':',
  ',',
  '"',
);
const headText = (plain: readonly string[]) =>
  fc
    .array(
      fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom(...plain) },
        { weight: 2, arbitrary: oddByte },
        { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 4 }) },
      ),
      { maxLength: 5 },
    )
    .map((atoms) => atoms.join(''));

const statusLine = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        fc.constantFrom('HTTP/1.1 ', 'HTTP/1.0 '),
        fc.constantFrom('200', '204', '304', '101', '100', '404', '999'),
        fc.oneof(
          { weight: 9, arbitrary: headText(['OK', 'Not Found', ' ', 'x']).map((reason) => ` ${reason}`) },
          { weight: 1, arbitrary: headText(['x']) },
        ),
      )
      .map((p) => p.join('')),
  },
  { weight: 1, arbitrary: headText(['HTTP/1.1', ' ', '200', 'HTTP/2', '20', 'ICY']) },
);

const headerLine = fc
  .tuple(
    headText(['X-A', 'Content-Length', 'Transfer-Encoding', 'Connection', 'Keep-Alive', 'Set-Cookie', 'a']),
    fc.constantFrom(': ', ':', ' : ', ':\t', ''),
    headText(['5', '0', 'chunked', 'gzip, chunked', 'close', 'keep-alive', 'timeout=5', 'v', ', ']),
  )
  .map((p) => p.join(''));

const lineEnd = fc.oneof(
  { weight: 12, arbitrary: fc.constant('\r\n') },
  { weight: 1, arbitrary: fc.constantFrom('\n', '\r', '\r\n ', '\r\n\t', '\r\r\n') },
);

const structuredHead = fc
  .tuple(statusLine, fc.array(fc.tuple(lineEnd, headerLine), { maxLength: 6 }))
  .map(([line, headers]) => Buffer.from(line + headers.map(([end, text]) => end + text).join(''), 'latin1'));

/** A well-formed head: the text, whether a body is expected, and the reference's answer. */
interface WellFormed {
  readonly text: string;
  readonly expectBody: boolean;
}

const wellFormedHead: fc.Arbitrary<WellFormed> = fc
  .record({
    version: fc.constantFrom('1.1', '1.0'),
    status: fc.oneof(
      fc.constantFrom(100, 101, 103, 200, 201, 204, 206, 301, 304, 400, 404, 500, 502),
      fc.integer({ min: 100, max: 599 }),
    ),
    reason: fc.constantFrom('', 'OK', 'Not Found', 'x\ty', 'caf\xe9', 'A B  C'),
    length: fc.option(fc.oneof(fc.nat(1_000_000), fc.constant(0), fc.constantFrom(9_007_199_254_740_991)), {
      freq: 2,
    }),
    twice: fc.boolean(),
    codings: fc.option(fc.constantFrom('chunked', 'Chunked', 'gzip, chunked', 'gzip', 'chunked, gzip'), {
      freq: 2,
    }),
    connection: fc.option(
      fc.constantFrom(
        'close',
        'keep-alive',
        'Keep-Alive',
        'Upgrade',
        'keep-alive, Upgrade',
        'close, keep-alive',
        'x',
      ),
    ),
    keepAlive: fc.option(fc.constantFrom('timeout=5', 'timeout=5, max=100', 'max=3', 'timeout=')),
    others: fc.array(
      fc.tuple(
        fc.constantFrom('X-A', 'Content-Type', 'Set-Cookie', 'Date'),
        fc.constantFrom('a', 'b c', ' d\t', ''),
      ),
      { maxLength: 3 },
    ),
    order: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
    expectBody: fc.boolean(),
  })
  // a length and codings together are not well-formed (below, separately)
  .filter((r) => r.length === null || r.codings === null)
  .map((r) => {
    const lines: string[] = r.others.map(([name, value]) => `${name}: ${value}`);
    if (r.length !== null) {
      lines.push(`Content-Length: ${r.length}`);
      if (r.twice) lines.push(`content-length: ${r.length}`);
    }
    if (r.codings !== null) lines.push(`Transfer-Encoding: ${r.codings}`);
    if (r.connection !== null) lines.push(`Connection: ${r.connection}`);
    if (r.keepAlive !== null) lines.push(`Keep-Alive: ${r.keepAlive}`);
    const sorted = lines
      .map((line, i) => ({ line, key: r.order[i % r.order.length]! }))
      .sort((a, b) => a.key - b.key)
      .map((l) => l.line);
    const statusLine = `HTTP/${r.version} ${r.status}${r.reason === '' && r.status % 2 === 0 ? '' : ` ${r.reason}`}`;
    return { text: [statusLine, ...sorted].join('\r\n'), expectBody: r.expectBody };
  });

/** The reference: RFC 9112 §6.3 (framing) and §9.3 (persistence), read off the text. */
export function referenceHead(text: string, expectBody: boolean) {
  const [statusLine, ...lines] = text.split('\r\n');
  const status = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/.exec(statusLine!)!;
  const headers = lines.map((line) => {
    const colon = line.indexOf(':');
    return [line.slice(0, colon), line.slice(colon + 1).trim()] as const;
  });
  const all = (name: string) => headers.filter(([n]) => n.toLowerCase() === name).map(([, v]) => v);
  const tokens = (name: string) =>
    all(name)
      .flatMap((v) => v.split(','))
      .map((t) => t.trim().toLowerCase());
  const code = Number(status[2]);
  const lengths = all('content-length');
  const codings = tokens('transfer-encoding');
  let framing: Framing;
  if (!expectBody || code < 200 || code === 204 || code === 304) framing = NO_BODY;
  else if (codings.length > 0) framing = codings[codings.length - 1] === 'chunked' ? CHUNKED : UNTIL_CLOSE;
  else if (lengths.length > 0) framing = Number(lengths[0]) === 0 ? NO_BODY : LENGTH;
  else framing = UNTIL_CLOSE;
  const connection = tokens('connection');
  const persistent =
    status[1] === '1'
      ? !connection.includes('close')
      : connection.includes('keep-alive') && !connection.includes('close');
  const timeout = /timeout=(\d+)/.exec(all('keep-alive')[0] ?? '');
  return {
    status: code,
    statusText: status[3] ?? '',
    rawHeaders: headers.flat(),
    framing,
    contentLength: lengths.length > 0 ? Number(lengths[0]) : -1,
    keepAlive: framing !== UNTIL_CLOSE && persistent,
    keepAliveTimeoutMs: timeout === null ? -1 : Number(timeout[1]) * 1000,
  };
}

/** Heads llhttp refuses for their framing, and the code it refuses them with. */
const conflictingHead = fc
  .tuple(
    fc.constantFrom(
      ['Content-Length: 5\r\nContent-Length: 6', 'HPE_UNEXPECTED_CONTENT_LENGTH'],
      ['Content-Length: 5\r\nTransfer-Encoding: chunked', 'HPE_UNEXPECTED_CONTENT_LENGTH'],
      ['Transfer-Encoding: gzip, chunked\r\nContent-Length: 0', 'HPE_UNEXPECTED_CONTENT_LENGTH'],
      ['Content-Length: +5', 'HPE_INVALID_CONTENT_LENGTH'],
      ['Content-Length: 5 5', 'HPE_INVALID_CONTENT_LENGTH'],
      ['Content-Length: 5,5', 'HPE_INVALID_CONTENT_LENGTH'],
      ['Content-Length: 0x5', 'HPE_INVALID_CONTENT_LENGTH'],
      ['Content-Length:', 'HPE_INVALID_CONTENT_LENGTH'],
    ),
    fc.boolean(),
  )
  .map(([[lines, code], expectBody]) => ({ text: `HTTP/1.1 200 OK\r\n${lines}`, code, expectBody }));

/** A chunked body as its parts: the data of each chunk and how each piece of framing is written. */
const chunkedParts = fc.record({
  chunks: fc.array(
    fc.record({
      data: fc.uint8Array({ minLength: 1, maxLength: 40 }),
      upper: fc.boolean(),
      zeros: fc.nat(3),
      extension: fc.constantFrom('', ';a', ';a=b', ';a="q;\\"r"', '; a = b', ';\x01\xff', ' ', ' ;a'),
    }),
    { maxLength: 6 },
  ),
  lastExtension: fc.constantFrom('', ';end', '000'),
  trailers: fc.array(fc.constantFrom('X-T: 1', 'Expires: 0', 'Content-Length: 99', 'x:'), { maxLength: 2 }),
  after: fc.uint8Array({ maxLength: 20 }),
});

type ChunkedParts = typeof chunkedParts extends fc.Arbitrary<infer T> ? T : never;

/** The body's bytes, where it ends, and its data. */
function encode(parts: ChunkedParts): { bytes: Buffer; end: number; data: Buffer } {
  const out: Buffer[] = [];
  for (const c of parts.chunks) {
    const hex = c.data.length.toString(16);
    const size = '0'.repeat(c.zeros) + (c.upper ? hex.toUpperCase() : hex);
    out.push(Buffer.from(`${size}${c.extension}\r\n`, 'latin1'), Buffer.from(c.data), Buffer.from('\r\n'));
  }
  const last = parts.lastExtension === '000' ? '000' : `0${parts.lastExtension}`;
  out.push(Buffer.from(`${last}\r\n${parts.trailers.map((t) => `${t}\r\n`).join('')}\r\n`, 'latin1'));
  const body = Buffer.concat(out);
  return {
    bytes: Buffer.concat([body, Buffer.from(parts.after)]),
    end: body.length,
    data: Buffer.concat(parts.chunks.map((c) => Buffer.from(c.data))),
  };
}

/** The reference chunked decoder (RFC 9112 §7.1, with the reader's tolerance of spaces before `;`). */
export function referenceChunked(bytes: Buffer): { data: Buffer; end: number } | 'invalid' | 'incomplete' {
  const data: Buffer[] = [];
  let at = 0;
  const line = (): string | null | 'too long' => {
    const crlf = bytes.indexOf('\r\n', at, 'latin1');
    if (crlf === -1) return null;
    // the reader's own bound on a size or trailer line (with its CRLF)
    if (crlf + 2 - at > 16 * 1024) return 'too long';
    const text = bytes.toString('latin1', at, crlf);
    at = crlf + 2;
    return text;
  };
  for (;;) {
    const sizeLine = line();
    if (sizeLine === null) return 'incomplete';
    if (sizeLine === 'too long') return 'invalid';
    const size = /^([0-9A-Fa-f]{1,15}) *(?:;[^\n]*)?$/.exec(sizeLine);
    if (size === null) return 'invalid';
    const n = Number.parseInt(size[1]!, 16);
    if (n === 0) break;
    if (bytes.length < at + n + 2) return 'incomplete';
    data.push(bytes.subarray(at, at + n));
    at += n;
    if (bytes.toString('latin1', at, at + 2) !== '\r\n') return 'invalid';
    at += 2;
  }
  for (;;) {
    const trailer = line();
    if (trailer === null) return 'incomplete';
    if (trailer === 'too long') return 'invalid';
    if (trailer === '') return { data: Buffer.concat(data), end: at };
  }
}

/** Cuts `bytes` at `cuts` (positions, any order) into reads. */
function cutInto(bytes: Buffer, cuts: readonly number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    if (cut > from) pieces.push(bytes.subarray(from, cut));
    from = Math.max(from, cut);
  }
  return pieces;
}

/** Feeds the reads to a decoder: its data, and where it said the body ended (-1: it did not). */
function decode(pieces: readonly Buffer[]): { data: Buffer; end: number } | UpstreamFailure {
  const decoder = new ChunkedDecoder();
  const data: Buffer[] = [];
  let offset = 0;
  for (const piece of pieces) {
    const done = ownErrorsOnly(() => decoder.push(piece, (d) => data.push(Buffer.from(d))));
    if (done instanceof UpstreamFailure) return done;
    if (done) {
      assert.ok(decoder.consumed >= 0 && decoder.consumed <= piece.length, 'consumed within the read');
      return { data: Buffer.concat(data), end: offset + decoder.consumed };
    }
    offset += piece.length;
  }
  return { data: Buffer.concat(data), end: -1 };
}

/** A break in a valid body's framing that any reader must refuse. */
const breakage = fc.constantFrom(
  'size not hex',
  'size line with a bare LF',
  'no CRLF after the data',
  'size of 16 digits',
  'size line past 16 KiB',
  'size with a sign',
);

function broken(parts: ChunkedParts, how: string, which: number): Buffer {
  const chunks = parts.chunks;
  const index = chunks.length === 0 ? -1 : which % (chunks.length + 1);
  const out: string[] = [];
  const latin1 = (data: Uint8Array) => Buffer.from(data).toString('latin1');
  for (let i = 0; i <= chunks.length; i++) {
    const c = chunks[i];
    const sizeText = c === undefined ? '0' : c.data.length.toString(16);
    const data = c === undefined ? '' : latin1(c.data);
    let sizeLine = `${sizeText}${c?.extension ?? ''}\r\n`;
    let after = c === undefined ? '' : '\r\n';
    if (i === index || (index === -1 && c === undefined)) {
      if (how === 'size not hex') sizeLine = `${sizeText}g\r\n`;
      else if (how === 'size line with a bare LF') sizeLine = `${sizeText}\n`;
      else if (how === 'size of 16 digits') sizeLine = `${sizeText.padStart(16, '0')}\r\n`;
      else if (how === 'size line past 16 KiB') sizeLine = `${sizeText};${'e'.repeat(16 * 1024)}\r\n`;
      else if (how === 'size with a sign') sizeLine = `-${sizeText}\r\n`;
      else if (c !== undefined) after = 'XY';
      else sizeLine = `${sizeText}g\r\n`;
    }
    out.push(sizeLine, data, after);
  }
  out.push('\r\n');
  return Buffer.from(out.join(''), 'latin1');
}

const cuts = fc.array(fc.nat(20_000), { maxLength: 8 });

export const responseReaderProperties: readonly NamedProperty[] = [
  {
    name: 'response head: arbitrary bytes',
    property: fc.property(fc.uint8Array({ maxLength: 400 }), fc.boolean(), (bytes, expectBody) => {
      // most random bytes fail at the status line: half start with one
      parseBounded(Buffer.concat([Buffer.from('HTTP/1.1 200 '), Buffer.from(bytes)]), expectBody);
      parseBounded(Buffer.from(bytes), expectBody);
    }),
  },
  {
    name: 'response head: structured bytes',
    property: fc.property(structuredHead, fc.boolean(), (bytes, expectBody) =>
      parseBounded(bytes, expectBody),
    ),
  },
  {
    name: 'response head: framing as the reference decides it',
    property: fc.property(wellFormedHead, ({ text, expectBody }) => {
      const bytes = Buffer.from(`${text}\r\n\r\n`, 'latin1');
      const head = parseResponseHead(bytes, bytes.length - 4, expectBody);
      checkHead(head);
      const reference = referenceHead(text, expectBody);
      assert.deepEqual(
        { ...head, contentLength: head.framing === LENGTH ? head.contentLength : -1 },
        { ...reference, contentLength: reference.framing === LENGTH ? reference.contentLength : -1 },
      );
    }),
  },
  {
    name: 'response head lines: bare LF and CRs before it read as CRLF lines (nginx)',
    property: fc.property(
      wellFormedHead,
      fc.array(fc.constantFrom('\r\n', '\n', '\r\r\n'), { minLength: 1, maxLength: 12 }),
      fc.constantFrom('\r\n', '\n'),
      ({ text, expectBody }, ends, blank) => {
        const lines = text.split('\r\n');
        // the status line takes one CR at most
        const written = lines.map(
          (line, i) => line + (i === 0 ? ends[0]!.slice(-2) : ends[i % ends.length]!),
        );
        const bytes = Buffer.from(`${written.join('')}${blank}body\r\n\r\n`, 'latin1');
        const found = findResponseHead(bytes);
        assert.ok(found);
        assert.equal(bytes.subarray(found.bodyStart).toString('latin1'), 'body\r\n\r\n');
        const crlf = Buffer.from(`${text}\r\n\r\n`, 'latin1');
        const expected = ownErrorsOnly(() => parseResponseHead(crlf, crlf.length - 4, expectBody));
        assert.deepEqual(
          ownErrorsOnly(() => parseResponseHead(found.bytes, found.end, expectBody)),
          expected,
        );
      },
    ),
  },
  {
    name: 'response head lines: arbitrary bytes',
    property: fc.property(fc.uint8Array({ maxLength: 400 }), fc.boolean(), (bytes, expectBody) => {
      const buffer = Buffer.concat([Buffer.from('HTTP/1.1 200 OK\n'), Buffer.from(bytes)]);
      const found = findResponseHead(buffer);
      if (found === null) return;
      assert.ok(found.bodyStart <= buffer.length);
      assert.equal(found.bytes.subarray(found.end).toString('latin1'), '\r\n\r\n');
      const head = ownErrorsOnly(() => parseResponseHead(found.bytes, found.end, expectBody));
      if (!(head instanceof UpstreamFailure)) checkHead(head);
    }),
  },
  {
    name: 'response head: conflicting framing refused',
    property: fc.property(conflictingHead, ({ text, code, expectBody }) => {
      const bytes = Buffer.from(`${text}\r\n\r\n`, 'latin1');
      assert.throws(
        () => parseResponseHead(bytes, bytes.length - 4, expectBody),
        (err) => err instanceof UpstreamFailure && err.code === code,
      );
    }),
  },
  {
    name: 'chunked body: valid, cut anywhere',
    property: fc.property(chunkedParts, cuts, (parts, at) => {
      const { bytes, end, data } = encode(parts);
      const reference = referenceChunked(bytes);
      assert.deepEqual(reference, { data, end });
      const decoded = decode(cutInto(bytes, at));
      assert.deepEqual(decoded, { data, end });
    }),
  },
  {
    name: 'chunked body: broken framing refused',
    property: fc.property(chunkedParts, breakage, fc.nat(), cuts, (parts, how, which, at) => {
      const bytes = broken(parts, how, which);
      assert.equal(referenceChunked(bytes), 'invalid', `${how}: the reference refuses it`);
      const decoded = decode(cutInto(bytes, at));
      assert.ok(decoded instanceof UpstreamFailure, `${how}: refused`);
      assert.equal(decoded.code, 'HPE_INVALID_CHUNK_SIZE');
    }),
  },
  {
    name: 'chunked body: arbitrary bytes',
    property: fc.property(
      fc.array(
        fc.oneof(
          fc.uint8Array({ maxLength: 30 }),
          fc.constantFrom(
            ...['5\r\n', '\r\n', '0\r\n\r\n', ';x', '\n'].map((s) => new Uint8Array(Buffer.from(s))),
          ),
        ),
        { maxLength: 12 },
      ),
      (pieces) => {
        const decoded = decode(pieces.map((p) => Buffer.from(p)));
        if (decoded instanceof UpstreamFailure) return;
        const total = pieces.reduce((n, p) => n + p.length, 0);
        assert.ok(decoded.data.length <= total && decoded.end <= total);
      },
    ),
  },
];
