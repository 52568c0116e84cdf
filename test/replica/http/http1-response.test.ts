import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  CHUNKED,
  ChunkedDecoder,
  LENGTH,
  NO_BODY,
  parseResponseHead,
  UNTIL_CLOSE,
} from '../../../src/replica/http/wire/http1-response.ts';
import { UpstreamFailure } from '../../../src/replica/http/wire/upstream-failure.ts';

/** Parses a head written as text (without the blank line). */
function head(text: string, expectBody = true) {
  const buffer = Buffer.from(`${text}\r\n\r\n`, 'latin1');
  return parseResponseHead(buffer, buffer.length - 4, expectBody);
}

function parserError(code: string) {
  return (err: unknown) => {
    assert.ok(err instanceof UpstreamFailure && err.kind === 'invalid-response', String(err));
    assert.equal(err.code, code);
    return true;
  };
}

/** Decodes `body` fed in the given piece sizes; returns the data, whether it ended, and what was left. */
function decode(body: string, sizes: readonly number[]) {
  const decoder = new ChunkedDecoder();
  const bytes = Buffer.from(body, 'latin1');
  const data: Buffer[] = [];
  let at = 0;
  let done = false;
  let left = '';
  for (let i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    const piece = bytes.subarray(at, at + size);
    at += piece.length;
    done = decoder.push(piece, (chunk) => data.push(Buffer.from(chunk)));
    if (done) {
      left = Buffer.concat([piece.subarray(decoder.consumed), bytes.subarray(at)]).toString('latin1');
      break;
    }
  }
  return { data: Buffer.concat(data).toString('latin1'), done, left };
}

describe('upstream response heads (http1-response)', () => {
  it('reads the status, the reason and the headers as sent, names in their case', () => {
    const h = head(
      'HTTP/1.1 201 Created\r\nContent-Type: text/plain\r\nX-Odd:  spaced value \r\nContent-Length: 5',
    );
    assert.equal(h.status, 201);
    assert.equal(h.statusText, 'Created');
    assert.deepEqual(h.rawHeaders, [
      'Content-Type',
      'text/plain',
      'X-Odd',
      'spaced value',
      'Content-Length',
      '5',
    ]);
    assert.equal(h.framing, LENGTH);
    assert.equal(h.contentLength, 5);
    assert.equal(h.keepAlive, true);
    assert.equal(h.keepAliveTimeoutMs, -1);
    assert.equal(head('HTTP/1.1 200').statusText, '');
  });

  it('frames the body as RFC 9112 §6.3 says', () => {
    assert.equal(head('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked').framing, CHUNKED);
    assert.equal(head('HTTP/1.1 200 OK\r\nContent-Length: 0').framing, NO_BODY);
    assert.equal(head('HTTP/1.1 204 No Content\r\nContent-Length: 10').framing, NO_BODY);
    assert.equal(head('HTTP/1.1 304 Not Modified\r\nContent-Length: 10').framing, NO_BODY);
    assert.equal(head('HTTP/1.1 200 OK\r\nContent-Length: 10', false).framing, NO_BODY, 'answer to HEAD');
    const untilClose = head('HTTP/1.1 200 OK\r\nContent-Type: text/plain');
    assert.equal(untilClose.framing, UNTIL_CLOSE);
    assert.equal(untilClose.keepAlive, false, 'a body read until close ends the connection');
  });

  it("keeps the connection as HTTP/1.1 and 1.0 say, and reads the server's Keep-Alive timeout", () => {
    assert.equal(head('HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1').keepAlive, false);
    assert.equal(
      head('HTTP/1.1 200 OK\r\nConnection: Keep-Alive, Close\r\nContent-Length: 1').keepAlive,
      false,
    );
    assert.equal(head('HTTP/1.0 200 OK\r\nContent-Length: 1').keepAlive, false);
    assert.equal(head('HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1').keepAlive, true);
    assert.equal(
      head('HTTP/1.1 200 OK\r\nKeep-Alive: timeout=5, max=100\r\nContent-Length: 1').keepAliveTimeoutMs,
      5000,
    );
  });

  it("refuses what nginx calls an invalid header, with llhttp's codes", () => {
    assert.throws(() => head('HTTP/2 200 OK'), parserError('HPE_INVALID_CONSTANT'));
    assert.throws(() => head('HTTP/1.1 20 OK'), parserError('HPE_INVALID_CONSTANT'));
    assert.throws(() => head('HTTP/1.1 200OK'), parserError('HPE_INVALID_CONSTANT'));
    assert.throws(() => head('ICY 200 OK'), parserError('HPE_INVALID_CONSTANT'));
    assert.throws(() => head('HTTP/1.1 200 OK\r\nno colon here'), parserError('HPE_INVALID_HEADER_TOKEN'));
    assert.throws(() => head('HTTP/1.1 200 OK\r\nbad name: x'), parserError('HPE_INVALID_HEADER_TOKEN'));
    assert.throws(() => head('HTTP/1.1 200 OK\r\n: empty name'), parserError('HPE_INVALID_HEADER_TOKEN'));
    assert.throws(() => head('HTTP/1.1 200 OK\r\nX: a\x01b'), parserError('HPE_INVALID_HEADER_TOKEN'));
    assert.throws(
      () => head('HTTP/1.1 200 OK\r\nContent-Length: 1x'),
      parserError('HPE_INVALID_CONTENT_LENGTH'),
    );
    assert.throws(
      () => head('HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2'),
      parserError('HPE_UNEXPECTED_CONTENT_LENGTH'),
    );
    assert.throws(
      () => head('HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked'),
      parserError('HPE_UNEXPECTED_CONTENT_LENGTH'),
    );
    // the same length twice is one length
    assert.equal(head('HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3').contentLength, 3);
  });
});

describe('chunked bodies (ChunkedDecoder)', () => {
  const body = '5\r\nhello\r\n1;ext=1\r\n \r\nC\r\nworld, again\r\n0\r\nTrailer: x\r\n\r\n';

  it('decodes the data, reads past extensions and trailers, and stops at the end', () => {
    const out = decode(`${body}HTTP/1.1 next`, [body.length + 13]);
    assert.deepEqual(out, { data: 'hello world, again', done: true, left: 'HTTP/1.1 next' });
  });

  it('gives the same data however the body is cut into reads', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 }), (sizes) => {
        assert.deepEqual(decode(body, sizes), { data: 'hello world, again', done: true, left: '' });
      }),
    );
  });

  it('is not done before the last chunk and its blank line', () => {
    assert.equal(decode('5\r\nhello\r\n0\r\n', [100]).done, false);
    assert.equal(decode('5\r\nhel', [100]).done, false);
  });

  it('refuses a broken framing as an invalid chunked response', () => {
    for (const broken of ['x\r\n', '5\r\nhelloXY\r\n', '5\nhello\r\n', '-1\r\n', '1234567890abcdef0\r\n']) {
      assert.throws(() => decode(broken, [broken.length]), parserError('HPE_INVALID_CHUNK_SIZE'), broken);
    }
  });
});
