/**
 * `proxy_next_upstream`, `proxy_next_upstream_tries`, `proxy_next_upstream_timeout`,
 * `proxy_pass_request_headers` and `proxy_pass_request_body`: read with nginx's slots and words,
 * inherited http → server → location, each directive on its own.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { httpLoadError, loadHttp } from '../helpers/http-config.ts';

const FILE = '/etc/limitswitch/nginx.conf';

test('proxy rules: lines add up, inherited directive by directive, nginx defaults elsewhere', () => {
  const http = loadHttp(
    `
    proxy_next_upstream error;
    proxy_next_upstream http_404 updating;
    proxy_pass_request_headers off;
    server {
        listen 80;
        proxy_next_upstream_tries 3;
        location /a {
            proxy_pass http://127.0.0.1:8081;
            proxy_next_upstream_timeout 2s;
            proxy_pass_request_body off;
        }
        location /b {
            proxy_pass http://127.0.0.1:8081;
            proxy_next_upstream off;
            proxy_pass_request_headers on;
        }
    }`,
    FILE,
  );
  const [a, b] = http.servers[0]!.locations;
  const rules = (location: typeof a) => {
    const { nextUpstream, nextUpstreamTries, nextUpstreamTimeoutMs, passRequestHeaders, passRequestBody } =
      location!.proxyRules;
    return { nextUpstream, nextUpstreamTries, nextUpstreamTimeoutMs, passRequestHeaders, passRequestBody };
  };
  assert.deepEqual(rules(a), {
    nextUpstream: new Set(['error', 'http_404']),
    nextUpstreamTries: 3,
    nextUpstreamTimeoutMs: 2000,
    passRequestHeaders: false,
    passRequestBody: false,
  });
  assert.deepEqual(rules(b), {
    nextUpstream: new Set(['off']),
    nextUpstreamTries: 3,
    nextUpstreamTimeoutMs: 0,
    passRequestHeaders: true,
    passRequestBody: true,
  });
});

test('proxy rules: nginx words for bad values and duplicates', () => {
  const error = (line: string) => httpLoadError(`server { listen 80; location / { ${line} } }`, FILE);
  assert.match(error('proxy_next_upstream error bogus;'), /invalid value "bogus" in .*nginx.conf:3/);
  assert.match(error('proxy_next_upstream_tries x;'), /"proxy_next_upstream_tries" directive invalid number/);
  assert.match(
    error('proxy_next_upstream_timeout 1q;'),
    /"proxy_next_upstream_timeout" directive invalid value/,
  );
  assert.match(
    error('proxy_pass_request_body maybe;'),
    /invalid value "maybe" in "proxy_pass_request_body" directive, it must be "on" or "off"/,
  );
  assert.match(
    error('proxy_next_upstream_tries 1; proxy_next_upstream_tries 2;'),
    /"proxy_next_upstream_tries" directive is duplicate/,
  );
});

test('proxy_ignore_headers: nginx names in any case, lines add up, a level written over the one above', () => {
  const http = loadHttp(
    `
    proxy_ignore_headers Vary;
    server {
        listen 80;
        location /a { proxy_pass http://127.0.0.1:8081; }
        location /b {
            proxy_pass http://127.0.0.1:8081;
            proxy_ignore_headers x-accel-limit-rate;
            proxy_ignore_headers SET-COOKIE X-Accel-Expires;
        }
    }`,
    FILE,
  );
  const [a, b] = http.servers[0]!.locations;
  assert.deepEqual(a!.proxyRules.ignoreHeaders, new Set(['Vary']));
  assert.deepEqual(
    b!.proxyRules.ignoreHeaders,
    new Set(['X-Accel-Limit-Rate', 'Set-Cookie', 'X-Accel-Expires']),
  );
  const bare = loadHttp('server { listen 80; location / { proxy_pass http://127.0.0.1:8081; } }', FILE);
  assert.equal(bare.servers[0]!.locations[0]!.proxyRules.ignoreHeaders.size, 0);
});

test('proxy_hide_header and proxy_pass_header: lines add up, lower-cased; each list inherited whole unless a level writes its own', () => {
  const http = loadHttp(
    `
    proxy_hide_header X-Powered-By;
    proxy_pass_header Server;
    server {
        listen 80;
        location /a { proxy_pass http://127.0.0.1:8081; }
        location /b {
            proxy_pass http://127.0.0.1:8081;
            proxy_hide_header X-Debug;
            proxy_hide_header X-Trace;
        }
    }`,
    FILE,
  );
  const [a, b] = http.servers[0]!.locations;
  assert.deepEqual(a!.proxyRules.hideHeaders, new Set(['x-powered-by']));
  assert.deepEqual(b!.proxyRules.hideHeaders, new Set(['x-debug', 'x-trace']));
  assert.deepEqual(b!.proxyRules.passHeaders, new Set(['server']));
});
