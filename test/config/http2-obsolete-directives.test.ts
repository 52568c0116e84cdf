/**
 * The `http2_*` directives nginx 1.19.7 made obsolete (1.22 reads them, warns, and does nothing):
 * the HTTP/2 header limits are `large_client_header_buffers`', the timers and request count the
 * connection's.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfigText } from '../../src/config/index.ts';
import { httpLoadError } from '../helpers/http-config.ts';

test('each is read with nginx warning naming the directive that took its place, at its line', () => {
  const warnings: string[] = [];
  const config = loadConfigText(
    'events {}\nhttp {\n  http2_max_field_size 4k;\n  http2_max_header_size 16k;\n' +
      '  server {\n    listen 80 http2;\n    http2_recv_timeout 5s;\n    http2_idle_timeout 1m;\n' +
      '    http2_max_requests 10;\n  }\n}\n',
    'nginx.conf',
    { onWarning: (w) => warnings.push(`${w.text} in ${w.file}:${w.line}`) },
  );
  assert.deepEqual(warnings, [
    'the "http2_max_field_size" directive is obsolete, use the "large_client_header_buffers" directive instead in nginx.conf:3',
    'the "http2_max_header_size" directive is obsolete, use the "large_client_header_buffers" directive instead in nginx.conf:4',
    'the "http2_recv_timeout" directive is obsolete, use the "client_header_timeout" directive instead in nginx.conf:7',
    'the "http2_idle_timeout" directive is obsolete, use the "keepalive_timeout" directive instead in nginx.conf:8',
    'the "http2_max_requests" directive is obsolete, use the "keepalive_requests" directive instead in nginx.conf:9',
  ]);
  // nothing of them is kept: the server has nginx's defaults
  const client = config.http.servers[0]!.client;
  assert.deepEqual([client.keepaliveRequests, client.keepaliveTimeoutMs], [1000, 75_000]);
});

test('a location is not their place, and they take one argument', () => {
  assert.match(
    httpLoadError('server { listen 80; location / { http2_max_field_size 4k; } }', 'nginx.conf'),
    /"http2_max_field_size" directive is not allowed here in /,
  );
  assert.match(
    httpLoadError('http2_max_header_size;', 'nginx.conf'),
    /invalid number of arguments in "http2_max_header_size" directive in /,
  );
});
