/**
 * The request head's header list as the forwarder makes it (forward-headers.ts over the engine's
 * compiled set, proxy-headers.ts): the set's lines with a value, `Host $proxy_host` unless the set
 * names Host, then the client's lines but those the set names, in any case; the client's
 * Content-Length kept once as the body's length; the lines the upstream client writes itself
 * (Connection, Transfer-Encoding, Upgrade) never taken from the set.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseComplexValue } from '../../../src/engine/complex-value.ts';
import {
  bindProxyHeaders,
  compileProxyHeaders,
  DEFAULT_PROXY_HEADERS,
} from '../../../src/engine/http/proxy-headers.ts';
import { newRequestContext, type RequestFacts } from '../../../src/engine/variables/request-context.ts';
import { VariableTable } from '../../../src/engine/variables/variable-table.ts';
import { proxyHostOf, upstreamRequestHeaders } from '../../../src/replica/http/upstream/forward-headers.ts';

const CLIENT = [
  'Host',
  'cafe.example.com',
  'User-Agent',
  'ua',
  'Connection',
  'keep-alive',
  'TE',
  'trailers',
  'x-real-ip',
  '192.0.2.1',
  'Content-Length',
  '3',
  'Accept',
  '*/*',
];

function boundSet(lines: readonly (readonly [string, string])[]) {
  const table = new VariableTable();
  const set = compileProxyHeaders(
    lines.map(([name, value]) => ({
      name,
      value: value === '' ? null : table.compile(parseComplexValue(value)),
    })),
  );
  const facts: RequestFacts = {
    method: 'GET',
    scheme: 'http',
    target: '/tea',
    headers: { host: 'cafe.example.com' },
    remoteAddr: '203.0.113.7',
    remotePort: 1,
    serverAddr: '127.0.0.1',
    serverPort: 80,
  };
  const ctx = newRequestContext(
    facts,
    { uri: '/tea', args: '', hasArgs: false },
    'cafe.example.com',
    'cafe.example.com',
    0,
    table.slots,
  );
  return bindProxyHeaders(set, ctx);
}

describe('the request head sent upstream', () => {
  test("nginx's defaults: Host is $proxy_host, the hop-by-hop lines the set names are left out", () => {
    assert.deepEqual(upstreamRequestHeaders(CLIENT, DEFAULT_PROXY_HEADERS.unbound, 'backend'), [
      'Host',
      'backend',
      'User-Agent',
      'ua',
      'x-real-ip',
      '192.0.2.1',
      'content-length',
      '3',
      'Accept',
      '*/*',
    ]);
  });

  test('a set with no lines to evaluate is not bound to the request', () => {
    const set = compileProxyHeaders([{ name: 'X-Gone', value: null }]);
    assert.equal(bindProxyHeaders(set, {} as never), set.unbound);
  });

  test("the set's lines first, evaluated; an empty value sends nothing and removes the client's line", () => {
    const bound = boundSet([
      ['X-Real-IP', '$remote_addr'],
      ['Host', '$host'],
      ['User-Agent', ''],
      ['X-Empty', '$http_x_missing'],
      ['Connection', 'upgrade'],
      ['Upgrade', '$http_upgrade'],
    ]);
    assert.deepEqual(upstreamRequestHeaders(CLIENT, bound, 'backend'), [
      'X-Real-IP',
      '203.0.113.7',
      'Host',
      'cafe.example.com',
      'content-length',
      '3',
      'Accept',
      '*/*',
    ]);
  });

  test('$proxy_host leaves out port 80 only, and writes an IPv6 address in brackets', () => {
    assert.equal(proxyHostOf('backend'), 'backend');
    assert.equal(proxyHostOf('127.0.0.1:80'), '127.0.0.1');
    assert.equal(proxyHostOf('127.0.0.1:8080'), '127.0.0.1:8080');
    // an implicit group of proxy_pass http://[::1]:8080/ is named "::1:8080"; nginx sends Host: [::1]:8080
    assert.equal(proxyHostOf('::1:8080'), '[::1]:8080');
    assert.equal(proxyHostOf('::1:80'), '[::1]');
  });
});
