import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccessLogParser } from '../../../src/cli/replay/access-log-parser.ts';
import { findLogFormat, loadConfigText } from '../../../src/config/index.ts';
import type { LogFormatSpec } from '../../../src/config/model.ts';

function formatOf(config: string, name: string): LogFormatSpec {
  const http = loadConfigText(`events {}\nhttp {\n${config}\n}\n`, 'test.conf').http;
  const format = findLogFormat(http.logFormats, name);
  assert.ok(format, `log_format ${name}`);
  return format;
}

const combined = new AccessLogParser(formatOf('', 'combined'));

describe('access log parser: combined', () => {
  it('reads the fields replay needs and the header fields; - is empty', () => {
    const values = combined.parse(
      '192.168.1.10 - alice [02/Dec/2026:13:21:05 +0100] "GET /coffee/latte?size=l HTTP/1.1" 503 197 "-" "curl/8.5.0"',
    );
    assert.deepEqual(values, {
      fields: {
        remote_addr: '192.168.1.10',
        time_local: '02/Dec/2026:13:21:05 +0100',
        request: 'GET /coffee/latte?size=l HTTP/1.1',
      },
      headers: { 'user-agent': 'curl/8.5.0' },
    });
    assert.deepEqual([...combined.has].sort(), ['remote_addr', 'request', 'time_local']);
  });

  it("undoes nginx's default escaping (\\xHH) and lets the last value hold the closing text", () => {
    const values = combined.parse(
      '10.0.0.1 - - [02/Dec/2026:13:21:05 +0000] "GET /say?q=\\x22hi\\x22 HTTP/1.1" 200 5 "http://a/" "ua \\x22x\\x22 "quoted""',
    );
    assert.equal(values?.fields.request, 'GET /say?q="hi" HTTP/1.1');
    assert.equal(values?.headers.referer, 'http://a/');
    assert.equal(values?.headers['user-agent'], 'ua "x" "quoted"');
  });

  it('refuses lines that do not have the shape of the format', () => {
    for (const line of [
      'garbage',
      '',
      '10.0.0.1 - - [02/Dec/2026:13:21:05 +0000] "GET / HTTP/1.1" 200 5 "-"',
      '10.0.0.1 - - [02/Dec/2026:13:21:05 +0000] "GET / HTTP/1.1" 200 5 "-" "ua" trailing',
      '10.0.0.1 [02/Dec/2026:13:21:05 +0000] "GET / HTTP/1.1" 200 5 "-" "ua"',
    ]) {
      assert.equal(combined.parse(line), null, line);
    }
  });
});

describe('access log parser: a log_format of the config', () => {
  it('reads $msec, $request_time, $host in brackets, $server_port and $http_*; skips unknown variables', () => {
    const parser = new AccessLogParser(
      formatOf(
        `log_format timed '$remote_addr $upstream_addr [$time_local] "$request" $status '
                          '\${host}:$server_port $msec $request_time "$http_x_api_key"';`,
        'timed',
      ),
    );
    assert.equal(parser.format, 'timed');
    const values = parser.parse(
      '10.1.2.3 127.0.0.1:8092, 127.0.0.1:8093 [02/Dec/2026:13:21:05 +0000] "POST /api/orders HTTP/2.0" 429 ' +
        'cafe.example.com:8081 1796217665.123 0.250 "key-1"',
    );
    assert.deepEqual(values, {
      fields: {
        remote_addr: '10.1.2.3',
        time_local: '02/Dec/2026:13:21:05 +0000',
        request: 'POST /api/orders HTTP/2.0',
        host: 'cafe.example.com',
        server_port: '8081',
        msec: '1796217665.123',
        request_time: '0.250',
      },
      headers: { 'x-api-key': 'key-1' },
    });
  });

  it('escape=json: a \\" inside a value does not end it, and JSON escapes are undone', () => {
    const parser = new AccessLogParser(
      formatOf(
        `log_format json escape=json '{"addr":"$remote_addr","t":"$msec","req":"$request","ua":"$http_user_agent"}';`,
        'json',
      ),
    );
    const values = parser.parse(
      '{"addr":"10.0.0.9","t":"1796217665.001","req":"GET /a\\"b HTTP/1.1","ua":"say \\"hi\\"\\\\ \\u0007"}',
    );
    assert.deepEqual(values, {
      fields: { remote_addr: '10.0.0.9', msec: '1796217665.001', request: 'GET /a"b HTTP/1.1' },
      headers: { 'user-agent': 'say "hi"\\ \u0007' },
    });
  });

  it('refuses a format whose needed values have no text between them, naming them', () => {
    assert.throws(
      () => new AccessLogParser(formatOf(`log_format glued '$remote_addr$msec "$request"';`, 'glued')),
      {
        code: 'RL_ERR_CLI_USAGE',
        message:
          'limitswitch replay: log_format "glued": $remote_addr and $msec have no text between them, so their values cannot be told apart',
      },
    );
    // unknown ones may be glued: they are skipped together
    const parser = new AccessLogParser(
      formatOf(`log_format ok '$remote_addr $bytes_sent$connection [$time_local] "$request"';`, 'ok'),
    );
    assert.deepEqual(parser.parse('10.0.0.1 51242 [02/Dec/2026:13:21:05 +0000] "GET / HTTP/1.1"')?.fields, {
      remote_addr: '10.0.0.1',
      time_local: '02/Dec/2026:13:21:05 +0000',
      request: 'GET / HTTP/1.1',
    });
  });
});
