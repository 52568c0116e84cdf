import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decimalMs, iso8601Ms, RecordReader, timeLocalMs } from '../../../src/cli/replay/log-record.ts';

describe('log record: times', () => {
  it('reads $time_local with its offset, $time_iso8601, and $msec / $request_time to the ms', () => {
    assert.equal(timeLocalMs('02/Dec/2026:13:21:05 +0100'), Date.UTC(2026, 11, 2, 12, 21, 5));
    assert.equal(timeLocalMs('02/Dec/2026:13:21:05 -0230'), Date.UTC(2026, 11, 2, 15, 51, 5));
    assert.equal(iso8601Ms('2026-12-02T13:21:05+01:00'), Date.UTC(2026, 11, 2, 12, 21, 5));
    assert.equal(decimalMs('1796217665.123'), 1_796_217_665_123);
    assert.equal(decimalMs('0.005'), 5);
    assert.equal(decimalMs('12'), 12_000);
    for (const bad of ['', '-', '1.', '.5', '1.2345', '1e3', '0x10'])
      assert.ok(Number.isNaN(decimalMs(bad)), bad);
    for (const bad of ['02/Foo/2026:13:21:05 +0100', '2/Dec/2026:13:21:05 +0100', '02/Dec/2026:13:21:05']) {
      assert.ok(Number.isNaN(timeLocalMs(bad)), bad);
    }
  });
});

describe('log record: the request', () => {
  const reader = new RecordReader('msec', { host: 'fallback.example.com', port: 8081 });

  it('takes the request line apart; Host from $http_host, else $host, else the default', () => {
    const withHeader = reader.read({
      fields: {
        remote_addr: '10.0.0.1',
        msec: '1.500',
        request_time: '0.250',
        request: 'GET /a b HTTP/1.1',
      },
      headers: { host: 'Cafe.Example.com:8081', 'user-agent': 'curl' },
    });
    assert.deepEqual(withHeader, {
      loggedMs: 1500,
      requestTimeMs: 250,
      request: {
        t: 1500,
        addr: '10.0.0.1',
        method: 'GET',
        uri: '/a b',
        host: 'Cafe.Example.com:8081',
        port: 8081,
        headers: { host: 'Cafe.Example.com:8081', 'user-agent': 'curl' },
      },
    });
    const fromHost = reader.read({
      fields: {
        remote_addr: '10.0.0.1',
        msec: '2',
        request: 'GET /',
        host: 'tea.example.com',
        server_port: '8082',
      },
      headers: {},
    });
    assert.equal(typeof fromHost === 'object' && fromHost.request.host, 'tea.example.com');
    assert.equal(typeof fromHost === 'object' && fromHost.request.port, 8082);
    const fallback = reader.read({
      fields: { remote_addr: '10.0.0.1', msec: '2', request: 'GET /' },
      headers: {},
    });
    assert.equal(typeof fallback === 'object' && fallback.request.host, 'fallback.example.com');
  });

  it('names what a line lacks; a line without a request line is told apart (nginx logs those too)', () => {
    const base = { remote_addr: '10.0.0.1', msec: '1.000', request: 'GET / HTTP/1.1' };
    assert.equal(reader.read({ fields: { ...base, remote_addr: '' }, headers: {} }), 'no client address');
    assert.equal(reader.read({ fields: { ...base, msec: 'soon' }, headers: {} }), 'bad time');
    assert.equal(reader.read({ fields: { ...base, request_time: '-1' }, headers: {} }), 'bad request time');
    assert.equal(reader.read({ fields: { ...base, request: '' }, headers: {} }), 'no request line');
    assert.equal(reader.read({ fields: { ...base, request: 'GARBAGE' }, headers: {} }), 'no request line');
  });
});
