import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ConfigWarning, loadConfigText } from '../../src/config/index.ts';
import type { HttpConf, ReturnSpec, RewriteStep } from '../../src/config/model.ts';
import { httpLoadError, loadHttp } from '../helpers/http-config.ts';

const load = (http: string, warnings?: ConfigWarning[]): HttpConf =>
  loadHttp(http, '/etc/limitswitch/nginx.conf', warnings);

const errorText = (http: string): string => httpLoadError(http, '/etc/limitswitch/nginx.conf');

test('upstream: servers with default port 80, weights, max_conns and max_fails (fail_timeout 10s is the default), keepalive, queue, zone', () => {
  const http = load(`
    upstream tea {
        zone tea 64k;
        server 127.0.0.1:8091 weight=3 max_fails=2 fail_timeout=10s max_conns=8;
        server tea-svc.default.svc.cluster.local;
        server [::1]:8093 max_conns=0;
        keepalive 16;
        queue 100 timeout=70s;
    }`);
  assert.deepEqual(http.upstreams[0], {
    name: 'tea',
    servers: [
      { host: '127.0.0.1', port: 8091, weight: 3, maxConns: 8, maxFails: 2 },
      { host: 'tea-svc.default.svc.cluster.local', port: 80, weight: 1 },
      { host: '::1', port: 8093, weight: 1 },
    ],
    keepalive: 16,
    keepaliveRequests: 1000,
    keepaliveTimeMs: 3_600_000,
    keepaliveTimeoutMs: 60_000,
    queue: { size: 100, timeoutMs: 70_000 },
    zone: { name: 'tea', source: { file: '/etc/limitswitch/nginx.conf', line: 5 } },
    source: { file: '/etc/limitswitch/nginx.conf', line: 4 },
  });
  assert.match(
    errorText('upstream u { server 127.0.0.1; zone u 64k; zone u; }'),
    /"zone" directive is duplicate/,
  );
  assert.match(errorText('upstream u { server 127.0.0.1; zone u 64q; }'), /invalid zone size "64q"/);
});

test('upstream: keepalive_requests, keepalive_time and keepalive_timeout, in any order', () => {
  const http = load(`
    upstream tea {
        keepalive_timeout 5s;
        server 127.0.0.1:8091;
        keepalive_requests 3;
        keepalive 2;
        keepalive_time 1m30s;
    }
    server { keepalive_timeout 10s 10s; keepalive_requests 5; keepalive_time 1h; }`);
  const tea = http.upstreams[0]!;
  assert.deepEqual(
    [tea.keepalive, tea.keepaliveRequests, tea.keepaliveTimeMs, tea.keepaliveTimeoutMs],
    [2, 3, 90_000, 5_000],
  );
});

test('server: listen forms, default_server, server names; defaults *:80 and ""', () => {
  const http = load(`
    server {
        listen 8081 default_server;
        listen 127.0.0.1:8082;
        listen [::1]:8083 reuseport backlog=511;
        server_name Cafe.Example.com *.example.com .example.org www.example.* "" ~^(?<sub>.+)\\.example\\.net$;
    }
    server { }`);
  const [cafe, bare] = http.servers;
  assert.deepEqual(cafe?.listen, [
    { host: null, port: 8081, defaultServer: true, ssl: false, http2: false },
    { host: '127.0.0.1', port: 8082, defaultServer: false, ssl: false, http2: false },
    { host: '::1', port: 8083, defaultServer: false, ssl: false, http2: false },
  ]);
  assert.deepEqual(cafe?.serverNames, [
    'cafe.example.com',
    '*.example.com',
    '.example.org',
    'www.example.*',
    '',
    '~^(?<sub>.+)\\.example\\.net$',
  ]);
  assert.deepEqual(bare?.listen, [{ host: null, port: 80, defaultServer: false, ssl: false, http2: false }]);
  assert.deepEqual(bare?.serverNames, ['']);
});

test('server: a listen port range is an address per port (nginx 1.15.10+)', () => {
  const http = load(`
    server {
        listen 127.0.0.1:8182-8184 default_server;
        listen [::1]:8182-8183;
        listen 9000-9001;
    }`);
  const at = (host: string | null, port: number, defaultServer: boolean) => ({
    host,
    port,
    defaultServer,
    ssl: false,
    http2: false,
  });
  assert.deepEqual(http.servers[0]?.listen, [
    at('127.0.0.1', 8182, true),
    at('127.0.0.1', 8183, true),
    at('127.0.0.1', 8184, true),
    at('::1', 8182, false),
    at('::1', 8183, false),
    at(null, 9000, false),
    at(null, 9001, false),
  ]);
  // a dash in a name without a port is a host name, as nginx reads it
  assert.deepEqual(load('server { listen cafe-svc; }').servers[0]?.listen, [at('cafe-svc', 80, false)]);
});

test('location: modifiers in both spellings, nesting, named locations left out of the model', () => {
  const http = load(`
    server {
        location = /exact {}
        location =/exact2 {}
        location ^~ /images/ {}
        location ~ \\.php$ {}
        location ~* \\.JPG$ {}
        location ~*\\.png$ {}
        location /api/ {
            location /api/v9/ {}
            location ~ ^/api/(?<ver>[0-9]+)/ { return 200 $ver; }
        }
        location @fallback {}
    }`);
  const locations = http.servers[0]!.locations;
  assert.deepEqual(
    locations.map((l) => [l.match, l.pattern]),
    [
      ['=', '/exact'],
      ['=', '/exact2'],
      ['^~', '/images/'],
      ['~', '\\.php$'],
      ['~*', '\\.JPG$'],
      ['~*', '\\.png$'],
      ['prefix', '/api/'],
    ],
  );
  assert.deepEqual(
    locations[6]?.locations.map((l) => [l.match, l.pattern]),
    [
      ['prefix', '/api/v9/'],
      ['~', '^/api/(?<ver>[0-9]+)/'],
    ],
  );
});

/** A level's first `return`: the one that answers. */
function firstReturn(level: { readonly script: readonly RewriteStep[] }): ReturnSpec | null {
  for (const step of level.script) if (step.op === 'return') return step.answer;
  return null;
}

test('return: code, code with text, URL (302), $scheme URL; the first return of a level answers', () => {
  const http = load(`
    server {
        return 301 https://$host$request_uri;
        location /a { return 204; }
        location /b { return 429 "slow down\\n"; return 200; }
        location /c { return http://example.com/; }
        location /d { return $scheme://example.com$uri; }
    }`);
  const server = http.servers[0]!;
  assert.deepEqual(firstReturn(server), {
    code: 301,
    text: {
      raw: 'https://$host$request_uri',
      parts: [{ text: 'https://' }, { variable: 'host' }, { variable: 'request_uri' }],
    },
  });
  assert.deepEqual(
    server.locations.map((l) => [firstReturn(l)?.code, firstReturn(l)?.text?.raw ?? null]),
    [
      [204, null],
      [429, 'slow down\n'],
      [302, 'http://example.com/'],
      [302, '$scheme://example.com$uri'],
    ],
  );
});

test('proxy_pass and api: the content handler written last wins', () => {
  const http = load(`
    upstream tea { server 127.0.0.1:8091; }
    server {
        location /tea { proxy_pass http://tea; }
        location /v { proxy_pass http://127.0.0.1:8092$request_uri; }
        location /api { api write=on; }
        location /ro { api; }
        location /both { api; proxy_pass http://tea/; }
    }`);
  assert.deepEqual(
    http.servers[0]!.locations.map((l) => [l.proxyPass, l.api]),
    [
      ['http://tea', null],
      ['http://127.0.0.1:8092$request_uri', null],
      [null, { write: true }],
      [null, { write: false }],
      ['http://tea/', null],
    ],
  );
});

test('realip and access lists are read in order', () => {
  const http = load(`
    set_real_ip_from 10.0.0.0/8;
    set_real_ip_from 2001:db8::/32;
    real_ip_header X-Forwarded-For;
    real_ip_recursive on;
    server {
        allow 127.0.0.1;
        allow 192.168.1.0/24;
        deny all;
    }`);
  const server = http.servers[0]!;
  assert.deepEqual(server.realIp, {
    trustedFrom: ['10.0.0.0/8', '2001:db8::/32'],
    header: 'X-Forwarded-For',
    recursive: true,
  });
  assert.deepEqual(server.access, [
    { action: 'allow', from: '127.0.0.1' },
    { action: 'allow', from: '192.168.1.0/24' },
    { action: 'deny', from: 'all' },
  ]);
});

test('addresses in geo, set_real_ip_from and allow/deny are read as nginx reads them', () => {
  const warnings: ConfigWarning[] = [];
  const http = load(
    `
    geo $net { 0010.1.2.3 a; 10.1.2.3/32 b; 255.255.255.255 c; }
    set_real_ip_from 1..2.3;
    server { allow ::ffff:1.2.3.4/120; deny 10.0.0.0/0032; }`,
    warnings,
  );
  assert.deepEqual(
    warnings.map((w) => w.text),
    [
      'duplicate network "10.1.2.3/32", value: "b", old value: "a"',
      'low address bits of ::ffff:1.2.3.4/120 are meaningless',
    ],
  );
  assert.deepEqual(http.servers[0]!.realIp?.trustedFrom, ['1..2.3']);
  const at = 'in /etc/limitswitch/nginx.conf:3';
  assert.equal(errorText('geo $net { fe80::1%eth0 x; }'), `[emerg] invalid network "fe80::1%eth0" ${at}`);
  assert.equal(errorText('geo $net { 1.2.3 x; }'), `[emerg] invalid network "1.2.3" ${at}`);
  assert.equal(
    errorText('set_real_ip_from "10.0.0.1 ";'),
    `[emerg] host not found in set_real_ip_from "10.0.0.1 " ${at}`,
  );
  assert.equal(errorText('allow "";'), `[emerg] invalid parameter "" ${at}`);
  assert.equal(errorText('deny 10.0.0.0/33;'), `[emerg] invalid parameter "10.0.0.0/33" ${at}`);
});

test('ignored directives are accepted in their nginx contexts and still checked', () => {
  const http = load(`
    log_format main '$remote_addr - $remote_user [$time_local] "$request"';
    access_log /var/log/nginx/access.log main;
    sendfile on;
    gzip_types text/plain application/json;
    types { text/html html; application/json json; }
    server {
        location / { root /usr/share/nginx/html; index index.html; add_header X-Cafe tea always; }
    }`);
  assert.equal(http.servers.length, 1);
  assert.equal(
    errorText('server { location / { gzip_types text/css; sendfile; } }'),
    '[emerg] invalid number of arguments in "sendfile" directive in /etc/limitswitch/nginx.conf:3',
  );
  assert.equal(
    errorText('sendfile;'),
    '[emerg] invalid number of arguments in "sendfile" directive in /etc/limitswitch/nginx.conf:3',
  );
  assert.equal(
    errorText('types { text/html html { } }'),
    '[emerg] unexpected "{" in /etc/limitswitch/nginx.conf:3',
  );
});

test('the main context needs neither events nor http', () => {
  const config = loadConfigText('worker_processes 1;\npid /run/nginx.pid;\n', 'main.conf');
  assert.equal(config.file, 'main.conf');
  assert.deepEqual(config.http.servers, []);
  assert.deepEqual(config.http.limitReqZones, []);
});

test('conflicting server names on a shared address are a warning, like nginx', () => {
  const warnings: ConfigWarning[] = [];
  load(
    `
    server { listen 8080; server_name cafe.example.com; }
    server { listen 8080; server_name CAFE.example.com; }
    server { listen 8081; server_name cafe.example.com; }`,
    warnings,
  );
  assert.deepEqual(warnings, [
    { text: 'conflicting server name "cafe.example.com" on 0.0.0.0:8080, ignored', file: '', line: 0 },
  ]);
});

test('suspicious server names and low address bits are warnings', () => {
  const warnings: ConfigWarning[] = [];
  load('server { server_name cafe/tea; allow 10.0.0.1/8; }', warnings);
  assert.deepEqual(
    warnings.map((w) => w.text),
    ['server name "cafe/tea" has suspicious symbols', 'low address bits of 10.0.0.1/8 are meaningless'],
  );
});

test('the model is frozen', () => {
  const http = load('limit_req_zone $uri zone=a:1m rate=1r/s;');
  assert.ok(Object.isFrozen(http));
  assert.ok(Object.isFrozen(http.limitReqZones[0]?.key.parts));
});
