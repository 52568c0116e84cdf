/**
 * nginx's reading of a request head (request-head.ts): Host validation, the header buffers, the
 * version, and the checks once the head is read; then the Site around it (the server the log names,
 * a Host line that switches buffers) and `client_max_body_size` in nginx's phase order. The texts and
 * the outcomes were measured against nginx 1.22 (test/replica/client-input.test.ts compares them live).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildSite } from '../../src/config/build-site.ts';
import { loadConfigText } from '../../src/config/index.ts';
import type { HeaderBuffers, HeadServers } from '../../src/engine/http/header-buffers.ts';
import {
  readOversizedHead,
  readRequestHead,
  rejectedVersion,
  validateHost,
} from '../../src/engine/http/request-head.ts';
import type { RequestFacts } from '../../src/engine/variables/request-context.ts';

const DEFAULTS: HeaderBuffers = { firstBytes: 1024, largeCount: 4, largeBytes: 8192 };
const servers = (buffers: HeaderBuffers = DEFAULTS): HeadServers => ({
  defaultBuffers: buffers,
  buffersForHost: () => buffers,
});

const head = (headers: readonly string[], line = { method: 'GET', url: '/', major: 1, minor: 1 }) => ({
  method: line.method,
  url: line.url,
  httpVersionMajor: line.major,
  httpVersionMinor: line.minor,
  rawHeaders: headers,
});

const WHILE_HEADERS = 'while reading client request headers';

describe('validateHost (ngx_http_validate_host)', () => {
  it('takes names, ports, IPv6 literals and one trailing dot', () => {
    for (const host of [
      'cafe.example.com',
      'CAFE.example.com:80',
      '.a',
      'a.',
      '[::1]:80',
      '[::1',
      'a:b:c',
      'a\\b',
      'a.:80',
    ]) {
      assert.equal(validateHost(host), true, host);
    }
  });
  it('refuses empty hosts, two dots in a row, a slash, spaces and control characters', () => {
    for (const host of ['', '.', ':80', 'a..b', 'a..', '..', 'a/b', 'a b', 'a\tb', 'a\x01b', 'a\x7fb']) {
      assert.equal(validateHost(host), false, JSON.stringify(host));
    }
  });
});

describe('readRequestHead', () => {
  it('reads a common head', () => {
    assert.equal(readRequestHead(head(['Host', 'cafe.example.com', 'Accept', '*/*']), servers()), null);
  });

  it('refuses a second Host line, whatever its case or value, naming both', () => {
    for (const [second, value] of [
      ['Host', 'cafe.example.com'],
      ['host', 'other.example.com'],
      ['Host', ''],
    ] as const) {
      assert.deepEqual(readRequestHead(head(['Host', 'cafe.example.com', second, value]), servers()), {
        code: 400,
        message: `client sent duplicate host header: "${second}: ${value}", previous value: "Host: cafe.example.com" ${WHILE_HEADERS}`,
        requestLine: 'GET / HTTP/1.1',
        host: 'cafe.example.com',
        hostSelected: true,
      });
    }
  });

  it('refuses an invalid Host, which then selects no server', () => {
    assert.deepEqual(readRequestHead(head(['Host', '', 'Host', 'cafe.example.com']), servers()), {
      code: 400,
      message: `client sent invalid host header ${WHILE_HEADERS}`,
      requestLine: 'GET / HTTP/1.1',
      host: '',
      hostSelected: false,
    });
  });

  it('wants a Host from HTTP/1.1 only; refuses TRACE, Transfer-Encoding with HTTP/1.0 or not chunked, a second line of a unique header, CONNECT', () => {
    const fault = (headers: string[], method: string, minor: number) =>
      readRequestHead(head(headers, { method, url: '/', major: 1, minor }), servers());
    assert.equal(fault([], 'GET', 0), null);
    assert.equal(
      fault([], 'GET', 1)?.message,
      `client sent HTTP/1.1 request without "Host" header ${WHILE_HEADERS}`,
    );
    assert.equal(fault(['Host', 'a'], 'TRACE', 1)?.code, 405);
    assert.equal(fault(['Host', 'a'], 'TRACE', 1)?.message, `client sent TRACE method ${WHILE_HEADERS}`);
    const te = fault(['Host', 'a', 'Transfer-Encoding', 'chunked'], 'POST', 0);
    assert.deepEqual(
      [te?.code, te?.message],
      [400, `client sent HTTP/1.0 request with "Transfer-Encoding" header ${WHILE_HEADERS}`],
    );
    assert.equal(fault(['Host', 'a', 'Transfer-Encoding', 'Chunked'], 'POST', 1), null);
    const gzip = fault(['Host', 'a', 'Transfer-Encoding', 'gzip, chunked'], 'POST', 1);
    assert.deepEqual(
      [gzip?.code, gzip?.message],
      [501, `client sent unknown "Transfer-Encoding": "gzip, chunked" ${WHILE_HEADERS}`],
    );
    const twice = fault(
      ['Host', 'a', 'Transfer-Encoding', 'gzip', 'transfer-encoding', 'chunked'],
      'POST',
      1,
    );
    assert.deepEqual(
      [twice?.code, twice?.message],
      [
        400,
        `client sent duplicate header line: "transfer-encoding: chunked", previous value: "Transfer-Encoding: gzip" ${WHILE_HEADERS}`,
      ],
    );
    const authorization = fault(
      ['Host', 'a', 'Authorization', 'Basic a', 'authorization', 'Basic b'],
      'GET',
      1,
    );
    assert.equal(
      authorization?.message,
      `client sent duplicate header line: "authorization: Basic b", previous value: "Authorization: Basic a" ${WHILE_HEADERS}`,
    );
    assert.equal(fault(['Host', 'a', 'Cookie', 'a=1', 'Cookie', 'b=2'], 'GET', 1), null);
    const connect = readRequestHead(
      head(['Host', 'a'], { method: 'CONNECT', url: 'a:80', major: 1, minor: 1 }),
      servers(),
    );
    assert.deepEqual(
      [connect?.code, connect?.message, connect?.requestLine],
      [400, 'client sent invalid request while reading client request line', 'CONNECT a:80 HTTP/1.1'],
    );
  });

  it('refuses HTTP/2.0 (505) and HTTP/0.9 (400) on the request line, before any header', () => {
    const version = (major: number, minor: number) =>
      readRequestHead(head(['Host', 'a'], { method: 'GET', url: '/', major, minor }), servers());
    assert.deepEqual(version(2, 0), {
      code: 505,
      message: 'client sent invalid version while reading client request line',
      requestLine: 'GET / HTTP/2.0',
      host: null,
      hostSelected: false,
    });
    assert.equal(version(0, 9)?.message, 'client sent invalid request while reading client request line');
  });

  it('takes a request line of one large buffer, refuses a byte more with 414 and the line so far', () => {
    // "GET " + target + " HTTP/1.1\r\n" = 8192 bytes
    const fits = '/'.padEnd(8192 - 15, 'a');
    assert.equal(
      readRequestHead(head(['Host', 'a'], { method: 'GET', url: fits, major: 1, minor: 1 }), servers()),
      null,
    );
    const long = `${fits}a`;
    const fault = readRequestHead(
      head(['Host', 'a'], { method: 'GET', url: long, major: 1, minor: 1 }),
      servers(),
    );
    assert.equal(fault?.code, 414);
    assert.equal(fault?.message, 'client sent too long URI while reading client request line');
    assert.equal(fault?.requestLine, `GET ${long} HTTP/1.1\r\n`.slice(0, 8192));
    assert.equal(fault?.host, null);
  });

  it('refuses a header line longer than a large buffer with 494, logging its first 1748 bytes', () => {
    const value = 'a'.repeat(64 * 1024);
    const fault = readRequestHead(head(['Host', 'cafe.example.com', 'X-Big', value]), servers());
    assert.deepEqual(fault, {
      code: 494,
      message: `client sent too long header line: "X-Big: ${'a'.repeat(1741)}..." ${WHILE_HEADERS}`,
      requestLine: 'GET / HTTP/1.1',
      host: 'cafe.example.com',
      hostSelected: true,
    });
    // a line of exactly 8192 bytes with its CRLF fits
    const exact = 'a'.repeat(8192 - 'X-Big: '.length - 2);
    assert.equal(readRequestHead(head(['Host', 'a', 'X-Big', exact]), servers()), null);
    assert.equal(readRequestHead(head(['Host', 'a', 'X-Big', `${exact}a`]), servers())?.code, 494);
  });

  it('runs out of large buffers: four 7k lines fit, a fifth does not', () => {
    const line = (i: number) => [`X-${i}`, 'a'.repeat(7000)];
    const four = ['Host', 'a', ...[1, 2, 3, 4].flatMap(line)];
    assert.equal(readRequestHead(head(four), servers()), null);
    const fault = readRequestHead(head([...four, ...line(5)]), servers());
    assert.equal(fault?.code, 494);
    assert.ok(fault?.message.startsWith('client sent too long header line: "X-5: aaa'), fault?.message);
  });

  it('counts with the server that a Host line selected from that line on', () => {
    const big: HeaderBuffers = { firstBytes: 1024, largeCount: 4, largeBytes: 128 * 1024 };
    const hosts: HeadServers = {
      defaultBuffers: DEFAULTS,
      buffersForHost: (host) => (host === 'big.example.com' ? big : DEFAULTS),
    };
    const value = 'a'.repeat(20_000);
    assert.equal(readRequestHead(head(['Host', 'big.example.com', 'X-Big', value]), hosts), null);
    assert.equal(readRequestHead(head(['Host', 'cafe.example.com', 'X-Big', value]), hosts)?.code, 494);
    // before the Host line the default server's buffers count
    assert.equal(readRequestHead(head(['X-Big', value, 'Host', 'big.example.com']), hosts)?.code, 494);
  });
});

describe('readOversizedHead and rejectedVersion (heads the parser gave up on)', () => {
  it('finds the long header line, or the long request line, in the bytes the parser had', () => {
    const header = readOversizedHead(`GET / HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(40_000)}`, servers());
    assert.equal(header?.code, 494);
    assert.equal(header?.host, 'a');
    assert.ok(header?.message.startsWith('client sent too long header line: "X-Big: aaaa'));
    const uri = readOversizedHead(`GET /${'a'.repeat(40_000)}`, servers());
    assert.equal(uri?.code, 414);
    assert.equal(uri?.requestLine, `GET /${'a'.repeat(40_000)}`.slice(0, 8192));
  });

  it('says nothing from bytes that do not start with a request line', () => {
    assert.equal(readOversizedHead('a'.repeat(40_000), servers()), null);
  });

  it('answers a rejected version with 505 above HTTP/1, else 400', () => {
    assert.deepEqual(rejectedVersion('GET / HTTP/3.0\r\nHost: a\r\n'), {
      code: 505,
      message: 'client sent invalid version while reading client request line',
      requestLine: 'GET / HTTP/3.0',
      host: null,
      hostSelected: false,
    });
    assert.equal(rejectedVersion('GET / HTTP/1.1000\r\n').code, 400);
    assert.equal(
      rejectedVersion('GET / HTTP/01.1\r\n').message,
      'client sent invalid request while reading client request line',
    );
  });
});

const site = (http: string) => buildSite(loadConfigText(`events {}\nhttp {\n${http}\n}\n`, 'test.conf').http);

describe('Site: heads and bodies', () => {
  it('names the server of the first Host line, or the default server when it was invalid', () => {
    const s = site(`
      server { listen 80; server_name first.example.com; }
      server { listen 80; server_name cafe.example.com; large_client_header_buffers 4 64k; }`);
    const dup = s.readHead(head(['Host', 'cafe.example.com', 'Host', 'x']), '127.0.0.1', 80);
    assert.equal(dup?.serverName, 'cafe.example.com');
    const invalid = s.readHead(head(['Host', 'a..b']), '127.0.0.1', 80);
    assert.equal(invalid?.serverName, 'first.example.com');
    // cafe's large buffers hold a 20k line, the default server's do not
    const value = 'a'.repeat(20_000);
    assert.equal(s.readHead(head(['Host', 'cafe.example.com', 'X-Big', value]), '127.0.0.1', 80), null);
    assert.equal(
      s.readHead(head(['Host', 'first.example.com', 'X-Big', value]), '127.0.0.1', 80)?.fault.code,
      494,
    );
    assert.equal(s.maxHeadBytes(80), 1024 + 4 * 64 * 1024);
  });

  const facts = (target: string, contentLength?: number): RequestFacts => ({
    method: 'POST',
    scheme: 'http',
    target,
    headers: { host: 'cafe.example.com' },
    remoteAddr: '10.0.0.1',
    remotePort: 1234,
    serverAddr: '127.0.0.1',
    serverPort: 80,
    ...(contentLength === undefined ? {} : { contentLength }),
  });

  it('refuses a Content-Length over client_max_body_size with 413 after routing, before return and limits', () => {
    const s = site(`
      limit_req_zone $binary_remote_addr zone=one:1m rate=1r/s;
      server {
        listen 80;
        server_name cafe.example.com;
        location / { limit_req zone=one burst=1 nodelay; proxy_pass http://127.0.0.1:8080; }
        location /small { client_max_body_size 2k; return 200 "ok"; }
        location /any { client_max_body_size 0; proxy_pass http://127.0.0.1:8080; }
      }
      server { listen 81; client_max_body_size 1; return 204; }`);
    const at = (target: string, length?: number, port = 80) => {
      const v = s.evaluate({ ...facts(target, length), serverPort: port }, 0);
      return [v.kind, v.code, v.logs.map((l) => `${l.level} ${l.message}`)];
    };
    assert.deepEqual(at('/', 1024 * 1024), ['proxy', 200, []]);
    assert.deepEqual(at('/', 1024 * 1024 + 1), [
      'refuse',
      413,
      ['error client intended to send too large body: 1048577 bytes'],
    ]);
    // the 413 never reached limit_req: one more request fits the burst, the next does not
    assert.deepEqual(at('/', 10), ['proxy', 200, []]);
    assert.equal(at('/', 10)[0], 'reject');
    assert.deepEqual(at('/small', 2049), [
      'refuse',
      413,
      ['error client intended to send too large body: 2049 bytes'],
    ]);
    assert.deepEqual(at('/small', 2048), ['return', 200, []]);
    assert.deepEqual(at('/small'), ['return', 200, []]);
    assert.deepEqual(at('/any', 10 * 1024 * 1024 * 1024), ['proxy', 200, []]);
    // the server-level return runs before the body size is checked
    assert.deepEqual(at('/', 1000, 81), ['return', 204, []]);
  });
});
