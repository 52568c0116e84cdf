/**
 * Upstream response heads whose lines end in a bare LF, or in CRs before the LF, read as nginx reads
 * them (ngx_http_parse_status_line, ngx_http_parse_header_line; checked against nginx 1.22 proxying
 * the same bytes).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PASS } from '../../../src/replica/http/contract/decision.ts';
import { parseResponseHead } from '../../../src/replica/http/wire/http1-response.ts';
import { findResponseHead } from '../../../src/replica/http/wire/response-head-lines.ts';
import { ScriptedUpstream } from '../../helpers/raw-peers.ts';
import { rawRequest, responseOf, startProxy } from './harness.ts';

/** The head found at the start of `text`, parsed, and what follows it. */
function read(text: string) {
  const buffer = Buffer.from(text, 'latin1');
  const found = findResponseHead(buffer);
  assert.ok(found, 'a head');
  const head = parseResponseHead(found.bytes, found.end, true);
  return { head, rest: buffer.subarray(found.bodyStart).toString('latin1') };
}

describe('response head lines (response-head-lines)', () => {
  it('ends lines at a bare LF, in the status line, header lines and the blank line', () => {
    const { head, rest } = read('HTTP/1.1 201 Made\nX-A: 1\nContent-Length: 3\n\nabc');
    assert.equal(head.status, 201);
    assert.equal(head.statusText, 'Made');
    assert.deepEqual(head.rawHeaders, ['X-A', '1', 'Content-Length', '3']);
    assert.equal(rest, 'abc');
    assert.equal(read('HTTP/1.1 204\n\n').head.status, 204);
  });

  it('takes CRLF and LF mixed, a blank line of either kind', () => {
    assert.equal(read('HTTP/1.1 200 OK\r\nX-A: 1\nX-B: 2\r\n\nbody').rest, 'body');
    const { head, rest } = read('HTTP/1.1 200 OK\nX-A: 1\r\n\r\nbody\n\n');
    assert.deepEqual(head.rawHeaders, ['X-A', '1']);
    assert.equal(rest, 'body\n\n');
  });

  it('finds the first blank line, not a later CRLF CRLF', () => {
    assert.equal(read('HTTP/1.1 200 OK\n\nX: 1\r\n\r\n').rest, 'X: 1\r\n\r\n');
  });

  it('takes any number of CRs before the LF of a header line, as nginx does', () => {
    assert.deepEqual(read('HTTP/1.1 200 OK\r\nX-A: a\r\r\r\n\r\n').head.rawHeaders, ['X-A', 'a']);
  });

  it('leaves a CR not followed by LF in the line: an invalid header, as in nginx', () => {
    for (const text of [
      'HTTP/1.1 200 OK\r\nX-A: a\rb\r\n\r\n',
      'HTTP/1.1 200 OK\r\nX-A\rB: 1\r\n\r\n',
      'HTTP/1.1 200 OK\r\n\rX\r\n\r\n',
      'HTTP/1.1 200 OK\r\n\r\r\n',
      // refused at once, not when an LF comes
      'HTTP/1.1 200 OK\r\n\r\r',
      'HTTP/1.1 200 OK\r\nX-A: 1\r\n\rX',
      'HTTP/1.1 200 OK\r\nX-A: a\rb',
    ]) {
      const buffer = Buffer.from(text, 'latin1');
      const found = findResponseHead(buffer);
      assert.ok(found, JSON.stringify(text));
      assert.throws(() => parseResponseHead(found.bytes, found.end, true), JSON.stringify(text));
    }
  });

  it('waits while no blank line has come', () => {
    assert.equal(findResponseHead(Buffer.from('HTTP/1.1 200 OK\nX-A: 1\n')), null);
    assert.equal(findResponseHead(Buffer.from('HTTP/1.1 200 OK\r\n\r')), null);
    assert.equal(findResponseHead(Buffer.from('HTTP/1.1 200 OK')), null);
    assert.equal(findResponseHead(Buffer.from('HTTP/1.1 200 OK\r\nX-A: a\r\r')), null);
  });

  it('hands a head in CRLF lines over as it is', () => {
    const buffer = Buffer.from('HTTP/1.1 200 OK\r\nX-A: 1\r\n\r\nbody');
    const found = findResponseHead(buffer)!;
    assert.equal(found.bytes, buffer);
    assert.equal(found.end, buffer.indexOf('\r\n\r\n'));
  });
});

describe('an upstream answering in bare-LF lines', () => {
  it('is relayed, not a 502, its connection kept for the next request', async () => {
    const upstream = await ScriptedUpstream.start(
      () => 'HTTP/1.1 200 OK\nX-Up: lf\nContent-Length: 7\n\nbody-lf',
    );
    const proxy = await startProxy([{ port: upstream.port }], { decide: () => PASS });
    try {
      for (let i = 0; i < 2; i++) {
        const out = responseOf(
          await rawRequest(proxy.port, ['GET / HTTP/1.1', 'Host: cafe.example.com', 'Connection: close']),
        );
        assert.equal(out.status, 200);
        assert.equal(out.header('x-up'), 'lf');
        assert.equal(out.body, 'body-lf');
      }
      assert.equal(upstream.received.length, 2);
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });
});
