/**
 * The directives about answers and client connections nginx users write: `server_tokens`,
 * `keepalive_disable`, `connection_pool_size` — read as nginx reads them, refused with its words.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfigText } from '../../src/config/index.ts';
import type { HttpConf } from '../../src/config/model.ts';

const load = (http: string): HttpConf => loadConfigText(`events {}\nhttp {\n${http}\n}\n`, 'nginx.conf').http;

const errorText = (http: string): string => {
  try {
    load(http);
  } catch (err) {
    return (err as Error).message;
  }
  return 'loaded';
};

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
