/**
 * HTTP/1.1 request bytes in the shapes that matter for request smuggling and desync, as fast-check
 * arbitraries: methods (common, rare, lower-case, unknown), targets (origin and absolute form, `*`,
 * `%`-escapes, `..`, controls, spaces), versions, header lines with odd spacing and bytes, conflicting
 * `Content-Length` and `Transfer-Encoding`, `Connection`/`Expect`/`Upgrade`/`Host`, chunked bodies
 * with odd sizes, extensions and trailers, and a second request pipelined in the same write (often a
 * clean "smuggled" one). Every odd part carries a tag (a short phrase) so that a disagreement between
 * two proxies can be put down to the shape that caused it.
 */
import fc from 'fast-check';

/** Some bytes (latin1) and the odd shapes they hold. */
export interface Piece {
  readonly text: string;
  readonly tags: readonly string[];
}

/** One request as generated: its bytes and the odd shapes in it. */
export interface GeneratedRequest {
  readonly text: string;
  readonly tags: readonly string[];
}

/** What a client writes on one connection: in one write, or cut into a few reads. */
export interface GeneratedCase {
  readonly requests: readonly GeneratedRequest[];
  readonly bytes: Buffer;
  /** Where the bytes are cut into separate writes (empty: one write). */
  readonly cuts: readonly number[];
}

const piece = (text: string, ...tags: string[]): Piece => ({ text, tags });
const join = (...pieces: readonly Piece[]): Piece => ({
  text: pieces.map((p) => p.text).join(''),
  tags: [...new Set(pieces.flatMap((p) => p.tags))],
});
/** Each text as a piece with the given tags. */
const from = (texts: readonly string[], ...tags: string[]) =>
  fc.noBias(fc.constantFrom(...texts)).map((text) => piece(text, ...tags));
/** One of the arbitraries as weighted (unbiased: fast-check's bias would favour the first and last). */
const weighted = <T>(...arbitraries: [number, fc.Arbitrary<T>][]) =>
  fc.noBias(fc.oneof(...arbitraries.map(([weight, arbitrary]) => ({ weight, arbitrary }))));

/** The clean request a desync would let through unseen, pipelined or hidden in a body. */
export const SMUGGLED = 'GET /smuggled HTTP/1.1\r\nHost: smuggled.example\r\n\r\n';

const method = weighted(
  [40, from(['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'])],
  [
    2,
    from(
      ['PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE', 'LOCK', 'UNLOCK', 'SEARCH', 'QUERY', 'PURGE'],
      'rare method',
    ),
  ],
  [1, from(['TRACE', 'CONNECT'], 'TRACE or CONNECT')],
  [1, from(['get', 'Post', 'pUT'], 'lower-case method')],
  [1, from(['FOO', 'BREW', 'GETS', 'X-METHOD', 'G3T', 'ACL2'], 'unknown method')],
  [1, from(['', 'GET\x00', 'G\tET', '\x16\x03\x01', 'GET/', '1GET'], 'garbage method')],
);

/** A part of an origin-form target. */
const targetAtom = weighted(
  [80, from(['a', 'b', 'coffee', '/', '?x=1', '&y=2', '-', '.', '~', '=', ':', '@', ';p', ','])],
  [2, from(['%41', '%2e%2e', '%2F', '%00', '%0d%0a', '%zz', '%', '%2', '%E9'], '%-escape')],
  [2, from(['..', '../', './', '/..', '//'], 'dot segment')],
  [1, from(['#frag'], 'fragment')],
  [1, from(['\\', '"', '<', '>', '{', '|', '^', '`'], 'unsafe byte in target')],
  [1, from(['\x00', '\x01', '\x1b', '\x7f', '\x0b', '\x0c'], 'control byte in target')],
  [1, from([' ', '\t'], 'space in target')],
  [1, from(['\xe9', '\xff', '\x80'], 'obs-text in target')],
);

const originForm = fc.array(targetAtom, { maxLength: 4 }).map((atoms) => join(piece('/'), ...atoms));

const target = weighted(
  [30, originForm],
  [
    1,
    fc
      .tuple(
        from(['http://example.com', 'HTTP://example.com:80', 'https://a.example', 'http://u@b']),
        originForm,
      )
      .map(([authority, path]) => join(authority, path, piece('', 'absolute-form target'))),
  ],
  [1, from(['*'], 'asterisk target')],
  [1, from(['', 'a/b', '?x', 'example.com:443'], 'target without a slash')],
);

const version = weighted(
  [40, from(['HTTP/1.1'])],
  [4, from(['HTTP/1.0'], 'HTTP/1.0')],
  [1, from(['HTTP/1.2', 'HTTP/1.9', 'HTTP/1.10'], 'HTTP/1.2 or later')],
  [1, from(['HTTP/2.0', 'HTTP/3.0', 'HTTP/9.9'], 'HTTP/2.0 or later')],
  [1, from(['HTTP/0.9', ''], 'HTTP/0.9')],
  [
    1,
    from(
      ['http/1.1', 'HTTP/11', 'HTTP/1.01', 'HTTP/1', 'HTTP/1.1x', 'HTTP/ 1.1', 'HTTPS/1.1'],
      'bad version',
    ),
  ],
);

const space = weighted(
  [60, from([' '])],
  [1, from(['  '], 'double space')],
  [1, from(['\t'], 'tab separator')],
);

const lineEnd = weighted(
  [80, from(['\r\n'])],
  [1, from(['\n'], 'bare LF')],
  [1, from(['\r'], 'bare CR')],
  [1, from(['\r\r\n'], 'CR CR LF')],
);

/** A header value's odd bytes. */
const valueAtom = weighted(
  [60, from(['a', 'text/plain', '1', 'x y', '=', ',', ';', '"q"', '*/*'])],
  [1, from(['\x00'], 'NUL in a value')],
  [1, from(['\x01', '\x1b', '\x7f', '\x0b', '\x0c'], 'control byte in a value')],
  [1, from(['\t'], 'tab in a value')],
  [1, from(['\xe9', '\xff', '\x80'], 'obs-text in a value')],
  [1, from(['\r'], 'bare CR in a value')],
);

const otherName = weighted(
  [
    40,
    from(['X-A', 'User-Agent', 'Accept', 'Cookie', 'X-Forwarded-For', 'Authorization', 'Te', 'Keep-Alive']),
  ],
  [1, from(['Content-Length ', 'Transfer-Encoding ', 'Host '], 'space before the colon')],
  [1, from([' X-A', '\tX-A'], 'leading whitespace (obs-fold)')],
  [1, from([''], 'empty name')],
  [1, from(['X A', 'X\x01A', 'X\xe9', 'X"A', 'Transfer_Encoding', 'Content_Length'], 'bad name')],
);

/** One header line without its line end (an obs-fold tail continues it on a second line). */
const otherHeader = fc
  .tuple(
    otherName,
    weighted([30, from([': '])], [6, from([':'])], [1, from([':\t', ':  '], 'odd spacing')]),
    weighted([20, fc.array(valueAtom, { minLength: 1, maxLength: 4 })], [1, fc.constant<Piece[]>([])]).map(
      (atoms) => join(...atoms),
    ),
    weighted(
      [30, from([''])],
      [1, from([' ', '\t', '  '], 'trailing whitespace')],
      [1, from(['\r\n continued', '\r\n\tcontinued', '\n continued'], 'obs-fold')],
      [1, fc.integer({ min: 1000, max: 1100 }).map((n) => piece('v'.repeat(n), 'line past 1k'))],
      [1, fc.integer({ min: 8200, max: 8300 }).map((n) => piece('v'.repeat(n), 'line past 8k'))],
    ),
  )
  .map(([name, colon, value, tail]) =>
    join(
      name,
      colon,
      value,
      tail,
      piece('', ...(value.text === '' && tail.text === '' ? ['empty value'] : [])),
    ),
  );

/** A header line with no colon at all. */
const colonless = from(['X-A', 'Host', 'chunked'], 'no colon');

const connection = from([
  'close',
  'keep-alive',
  'Keep-Alive',
  'Upgrade',
  'close, Upgrade',
  'keep-alive, close',
  'TE',
  'X-A',
  'Content-Length',
  'Transfer-Encoding',
  'Host',
  '',
]).map((p) => join(piece('Connection: '), p, piece('', `Connection: ${p.text}`)));

const expect = from(['100-continue', '100-Continue', 'foo', ''], 'Expect').map((p) =>
  join(piece('Expect: '), p),
);
const upgrade = from(['websocket', 'h2c', 'foo', 'HTTP/2.0'], 'Upgrade').map((p) =>
  join(piece('Upgrade: '), p),
);

const hostValue = weighted(
  [30, from(['example.com', 'a.example:8080', 'EXAMPLE.com.', '127.0.0.1', '[::1]:80'])],
  [
    1,
    from(['', 'a..b', 'a/b', 'a b', 'a\x01b', '.', ':80', 'a:b:c', 'a\\b', '\xe9.example'], 'invalid Host'),
  ],
);

/** The Host lines: one mostly; sometimes none, two, or an invalid one. */
const hosts: fc.Arbitrary<Piece[]> = fc.oneof(
  { weight: 30, arbitrary: hostValue.map((v) => [join(piece('Host: '), v)]) },
  { weight: 1, arbitrary: fc.constant<Piece[]>([piece('', 'no Host')]) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(hostValue, fc.constantFrom('Host', 'host', 'HOST'), hostValue)
      .map(([a, name, b]) => [join(piece('Host: ', 'two Host lines'), a), join(piece(`${name}: `), b)]),
  },
);

/** Body bytes: short, sometimes with a whole request in them. */
const bodyData = weighted(
  [12, fc.string({ unit: 'binary-ascii', maxLength: 12 }).map((s) => piece(s))],
  [1, fc.constant(piece(SMUGGLED, 'request in the body'))],
  [1, fc.integer({ min: 9000, max: 20000 }).map((n) => piece('b'.repeat(n), 'body past 8k'))],
);

/** A Content-Length value for a body of `n` bytes: its length, or a spelling of it, or a lie. */
function lengthValue(n: number): fc.Arbitrary<Piece> {
  return weighted(
    [24, fc.constant(piece(String(n)))],
    [1, fc.constant(piece(`+${n}`, 'Content-Length +n'))],
    [1, fc.constant(piece(`0${n}`, 'Content-Length 0n'))],
    [1, fc.constant(piece(`${n},${n}`, 'Content-Length n,n'))],
    [1, fc.constant(piece(`${n}, ${n + 1}`, 'Content-Length n, m'))],
    [1, fc.constant(piece(`${n} ${n}`, 'Content-Length "n n"'))],
    [1, fc.constant(piece(`0x${n.toString(16)}`, 'Content-Length 0x'))],
    [1, fc.constant(piece(`${n + 1}`, 'Content-Length above the body'))],
    [1, fc.constant(piece(`${Math.max(n - 1, 0)}`, 'Content-Length below the body'))],
    [1, from(['99999999999999999999', '18446744073709551616', '-1', '', '1e3'], 'Content-Length garbage')],
  );
}

const codings = weighted(
  [24, from(['chunked'])],
  [1, from(['Chunked', 'CHUNKED'], 'Transfer-Encoding in capitals')],
  [1, from(['chunked, identity', 'chunked, gzip', 'chunked, chunked'], 'chunked not last')],
  [1, from(['identity, chunked', 'gzip, chunked', 'gzip,chunked'], 'chunked after another coding')],
  [1, from(['identity', 'gzip', 'xchunked', 'chunked;q=1', 'chunk', '', 'chunked\x00'], 'not chunked')],
);

/** How a chunk's size is written. */
const sizeSpelling = weighted(
  [30, from(['hex'])],
  [1, from(['HEX'], 'chunk size in capitals')],
  [1, from(['0hex'], 'chunk size with leading zeros')],
  [1, from(['0x', '+', '-', ' '], 'chunk size with a prefix')],
  [1, from(['hex ', 'hex\t'], 'chunk size with trailing whitespace')],
  [1, from(['overflow'], 'chunk size overflow')],
  [1, from(['off by one'], 'chunk size off by one')],
);

function sizeText(spelling: string, n: number): string {
  const hex = n.toString(16);
  switch (spelling) {
    case 'hex':
      return hex;
    case 'HEX':
      return hex.toUpperCase();
    case '0hex':
      return `000${hex}`;
    case 'hex ':
    case 'hex\t':
      return `${hex}${spelling.slice(3)}`;
    case 'overflow':
      return `1000000000000000${hex}`;
    case 'off by one':
      return (n + 1).toString(16);
    default:
      return `${spelling}${hex}`;
  }
}

/** One chunk: its size line, data and the CRLF after it (any of which may be odd). */
const chunk = fc
  .tuple(
    fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 10 }),
    sizeSpelling,
    weighted(
      [20, from([''])],
      [1, from([';a=b', ';a', '; a=b', ';a="q"', ';a=b;c'], 'chunk extension')],
      [1, from([';\x01', ';a=\xe9', ';a=b\rc'], 'odd chunk extension')],
    ),
    weighted(
      [30, from(['\r\n'])],
      [1, from(['\n'], 'bare LF in a chunked body')],
      [1, from(['\r', ''], 'chunk without CRLF')],
    ),
  )
  .map(([data, size, extension, end]) => ({
    text: `${sizeText(size.text, data.length)}${extension.text}${end.text}${data}${end.text}`,
    tags: [...size.tags, ...extension.tags, ...end.tags],
  }));

const lastChunk = weighted(
  [20, from(['0\r\n\r\n'])],
  [1, from(['000\r\n\r\n', '0;a=b\r\n\r\n'], 'odd last chunk')],
  [
    1,
    from(
      ['0\r\nX-Trailer: t\r\n\r\n', '0\r\nContent-Length: 5\r\n\r\n', '0\r\nHost: t.example\r\n\r\n'],
      'trailer',
    ),
  ],
  [1, from(['0\n\n', '0\r\n\n', '0\n\r\n'], 'bare LF in the last chunk')],
  [1, from(['', '0\r\n', '0\r\nX: t\r\n'], 'chunked body cut short')],
);

const chunkedBody = fc
  .tuple(fc.array(chunk, { maxLength: 3 }), lastChunk, bodyData)
  .map(([chunks, last, inner]) =>
    // a request in the body goes into a chunk of its own
    join(
      ...chunks,
      inner.tags.length > 0
        ? piece(`${inner.text.length.toString(16)}\r\n${inner.text}\r\n`, ...inner.tags)
        : piece(''),
      last,
    ),
  );

/** The framing lines (without line ends) and the body that follows the head. */
interface Framing {
  readonly lines: readonly Piece[];
  readonly body: Piece;
}

const framing: fc.Arbitrary<Framing> = fc
  .oneof(
    { weight: 4, arbitrary: fc.constant('none') },
    { weight: 4, arbitrary: fc.constant('length') },
    { weight: 1, arbitrary: fc.constant('two lengths') },
    { weight: 4, arbitrary: fc.constant('chunked') },
    { weight: 1, arbitrary: fc.constant('chunked and length') },
    { weight: 1, arbitrary: fc.constant('two codings') },
  )
  .chain((kind): fc.Arbitrary<Framing> => {
    switch (kind) {
      case 'length':
        return bodyData.chain((body) =>
          lengthValue(body.text.length).map((value) => ({
            lines: [join(piece('Content-Length: '), value)],
            body,
          })),
        );
      case 'two lengths':
        return fc.tuple(bodyData, fc.boolean()).map(([body, same]) => {
          const n = body.text.length;
          return {
            lines: [
              piece(
                `Content-Length: ${n}`,
                same ? 'two Content-Length lines, equal' : 'two Content-Length lines, different',
              ),
              piece(`content-length: ${same ? n : n + 1}`),
            ],
            body,
          };
        });
      case 'chunked':
        return fc.tuple(codings, chunkedBody).map(([value, body]) => ({
          lines: [join(piece('Transfer-Encoding: '), value)],
          body,
        }));
      case 'chunked and length':
        return fc.tuple(codings, chunkedBody, fc.boolean()).map(([value, body, lengthFirst]) => {
          const te = join(piece('Transfer-Encoding: '), value);
          const cl = piece(`Content-Length: ${body.text.length}`, 'Transfer-Encoding and Content-Length');
          return { lines: lengthFirst ? [cl, te] : [te, cl], body };
        });
      case 'two codings':
        return fc.tuple(codings, codings, chunkedBody).map(([a, b, body]) => ({
          lines: [
            join(piece('Transfer-Encoding: '), a, piece('', 'two Transfer-Encoding lines')),
            join(piece('Transfer-Encoding: '), b),
          ],
          body,
        }));
      default:
        return fc.constant({ lines: [], body: piece('') });
    }
  });

/** A request: request line, header lines in some order, the blank line, the body. */
export const request: fc.Arbitrary<GeneratedRequest> = fc
  .record({
    method,
    target,
    version,
    sp1: space,
    sp2: space,
    end: lineEnd,
    host: hosts,
    framing,
    others: fc.array(
      weighted([20, otherHeader], [4, connection], [1, expect], [1, upgrade], [1, colonless]),
      {
        maxLength: 3,
      },
    ),
    order: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
    oddEnd: fc.option(fc.tuple(fc.nat(7), lineEnd), { freq: 12 }),
  })
  .map((r) => {
    // a version-less line is HTTP/0.9's (no space before the missing version)
    const requestLine =
      r.version.text === ''
        ? join(r.method, r.sp1, r.target, r.version)
        : join(r.method, r.sp1, r.target, r.sp2, r.version);
    const hostLines = r.host.filter((line) => line.text !== '');
    const lines = [...hostLines, ...r.framing.lines, ...r.others];
    const keyed = lines.map((line, i) => ({ line, key: r.order[i % r.order.length]! }));
    const sorted = keyed.sort((a, b) => a.key - b.key).map((k) => k.line);
    const ends = sorted.map((_, i) => (r.oddEnd !== null && r.oddEnd[0] === i ? r.oddEnd[1] : r.end));
    const head = join(requestLine, r.end, ...sorted.flatMap((line, i) => [line, ends[i]!]), r.end);
    const all = join(head, r.framing.body, piece('', ...r.host.flatMap((line) => line.tags)));
    return { text: all.text, tags: all.tags };
  });

/** A connection's bytes: one request, or two pipelined (the second often a clean smuggled one). */
export const requestCase: fc.Arbitrary<GeneratedCase> = fc
  .tuple(
    request,
    fc.oneof(
      { weight: 3, arbitrary: fc.constant<GeneratedRequest[]>([]) },
      { weight: 2, arbitrary: fc.constant([{ text: SMUGGLED, tags: [] }]) },
      { weight: 1, arbitrary: request.map((r) => [r]) },
    ),
    // mostly one write; sometimes a few, so that a head or body arrives in pieces
    fc.oneof(
      { weight: 4, arbitrary: fc.constant([]) },
      { weight: 1, arbitrary: fc.array(fc.nat(), { minLength: 1, maxLength: 3 }) },
    ),
  )
  .map(([first, rest, at]) => {
    const requests = [first, ...rest];
    const bytes = Buffer.from(requests.map((r) => r.text).join(''), 'latin1');
    const cuts = [...new Set(at.map((n) => 1 + (n % Math.max(bytes.length - 1, 1))))].sort((a, b) => a - b);
    return { requests, bytes, cuts };
  });

/** A case's bytes as its writes. */
export function writesOf(c: GeneratedCase): Buffer[] {
  const writes: Buffer[] = [];
  let from = 0;
  for (const cut of [...c.cuts, c.bytes.length]) {
    if (cut > from) writes.push(c.bytes.subarray(from, cut));
    from = Math.max(from, cut);
  }
  return writes;
}

/** Bytes for a message: a double-quoted string, printable ASCII as it is, any other byte escaped. */
export function showBytes(bytes: Buffer): string {
  let out = '';
  for (const byte of bytes) {
    if (byte === 0x0d) out += '\\r';
    else if (byte === 0x0a) out += '\\n';
    else if (byte === 0x09) out += '\\t';
    else if (byte === 0x22 || byte === 0x5c) out += `\\${String.fromCharCode(byte)}`;
    else if (byte >= 0x20 && byte < 0x7f) out += String.fromCharCode(byte);
    else out += `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  // long runs (a header line past 8k) shortened
  return `"${out.replace(/(.)\1{40,}/g, (run, c: string) => `${c}{×${run.length}}`)}"`;
}
