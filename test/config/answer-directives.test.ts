/**
 * The directives about answers and client connections nginx users write: `server_tokens`,
 * `keepalive_disable`, `connection_pool_size` — read as nginx reads them, refused with its words.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfigText } from '../../src/config/index.ts';
import type { HttpConf } from '../../src/config/model.ts';
import {
  KEEPALIVE_DISABLE_MSIE6,
  KEEPALIVE_DISABLE_NONE,
  KEEPALIVE_DISABLE_SAFARI,
} from '../../src/engine/http/keepalive-disable.ts';
import { httpLoadError, loadHttp } from '../helpers/http-config.ts';

const load = (http: string): HttpConf => loadHttp(http, 'nginx.conf');

const errorText = (http: string): string => httpLoadError(http, 'nginx.conf');

test('server_tokens: on by default, off per level, build as on; bad values and duplicates refused', () => {
  const http = load(`
    server_tokens off;
    server { listen 80; location /a { server_tokens build; } location /b { } }
    server { listen 81; server_tokens on; }`);
  const [first, second] = http.servers;
  assert.deepEqual(
    [
      first!.client.serverTokens,
      ...first!.locations.map((l) => l.client.serverTokens),
      second!.client.serverTokens,
    ],
    [false, true, false, true],
  );
  assert.equal(load('server { listen 80; }').servers[0]!.client.serverTokens, true);
  assert.match(errorText('server_tokens bogus;'), /invalid value "bogus" in nginx\.conf:3$/);
  assert.match(errorText('server_tokens on; server_tokens off;'), /"server_tokens" directive is duplicate/);
});

test('connection_pool_size: http and server, checked as nginx checks it; the large header buffers must hold it', () => {
  assert.equal(
    errorText('connection_pool_size 1k; server { listen 80; connection_pool_size 256; }'),
    'loaded',
  );
  assert.match(
    errorText('connection_pool_size 100;'),
    /the pool size must be no less than 112 in nginx\.conf:3$/,
  );
  assert.match(
    errorText('connection_pool_size 120;'),
    /the pool size must be a multiple of 16 in nginx\.conf:3$/,
  );
  assert.match(errorText('connection_pool_size abc;'), /"connection_pool_size" directive invalid value/);
  assert.match(errorText('connection_pool_size 128; connection_pool_size 256;'), /directive is duplicate/);
  assert.match(
    errorText('server { listen 80; location / { connection_pool_size 1k; } }'),
    /"connection_pool_size" directive is not allowed here/,
  );
  const tooSmall =
    /the "large_client_header_buffers" size must be equal to or greater than "connection_pool_size"/;
  assert.match(
    errorText('connection_pool_size 1k; server { listen 80; large_client_header_buffers 4 512; }'),
    tooSmall,
  );
  assert.match(errorText('server { listen 80; connection_pool_size 16k; }'), tooSmall);
  assert.equal(
    errorText(
      'connection_pool_size 2k; large_client_header_buffers 4 1k; server { listen 80; connection_pool_size 512; }',
    ),
    'loaded',
  );
});

test('keepalive_disable: msie6 by default; values add up on a level, one given again warns; an inner level replaces', () => {
  const warnings: string[] = [];
  const http = loadConfigText(
    'events {}\nhttp {\n  keepalive_disable none;\n  server {\n    listen 80;\n' +
      '    location /a { keepalive_disable msie6; keepalive_disable safari msie6; }\n    location /b { }\n  }\n}\n',
    'nginx.conf',
    { onWarning: (w) => warnings.push(`${w.text} in ${w.file}:${w.line}`) },
  ).http;
  const [a, b] = http.servers[0]!.locations;
  assert.deepEqual(
    [
      a!.client.keepaliveDisable,
      b!.client.keepaliveDisable,
      load('server { listen 80; }').servers[0]!.client.keepaliveDisable,
    ],
    [KEEPALIVE_DISABLE_MSIE6 | KEEPALIVE_DISABLE_SAFARI, KEEPALIVE_DISABLE_NONE, KEEPALIVE_DISABLE_MSIE6],
  );
  assert.deepEqual(warnings, ['duplicate value "msie6" in nginx.conf:6']);
  assert.match(errorText('keepalive_disable msie7;'), /invalid value "msie7" in nginx\.conf:3$/);
  assert.match(
    errorText('keepalive_disable;'),
    /invalid number of arguments in "keepalive_disable" directive/,
  );
});
