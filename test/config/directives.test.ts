import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ConfigWarning, loadConfigText } from '../../src/config/index.ts';
import type { HttpConf } from '../../src/config/model.ts';

const load = (http: string, warnings?: ConfigWarning[]): HttpConf =>
  loadConfigText(`events {}\nhttp {\n${http}\n}\n`, '/etc/limitswitch/nginx.conf', {
    onWarning: (w) => warnings?.push(w),
  }).http;

const errorText = (http: string): string => {
  try {
    load(http);
  } catch (err) {
    return (err as Error).message;
  }
  return 'loaded';
};

test('limit_req_zone: rate in milli-requests with integer division, size, key, sync', () => {
  const http = load(`
    limit_req_zone $binary_remote_addr zone=a:32k rate=1r/s;
    limit_req_zone $binary_remote_addr zone=b:1m rate=30r/m;
    limit_req_zone "$server_name:$uri" zone=c:10M rate=1r/m sync;
    limit_req_zone $uri zone=d:1m rate=10;`);
  assert.deepEqual(
    http.limitReqZones.map((z) => [z.name, z.rateMilli, z.sizeBytes, z.sync, z.source.line]),
    [
      ['a', 1000, 32768, false, 4],
      ['b', 500, 1048576, false, 5],
      ['c', 16, 10485760, true, 6],
      ['d', 10000, 1048576, false, 7],
    ],
  );
  assert.deepEqual(http.limitReqZones[2]?.key.parts, [
    { variable: 'server_name' },
    { text: ':' },
    { variable: 'uri' },
  ]);
});

test('limit_req: burst and delay in milli-requests; the last of nodelay/delay= wins', () => {
  const http = load(`
    limit_req_zone $uri zone=a:1m rate=1r/s;
    limit_req_zone $uri zone=b:1m rate=1r/s;
    limit_req_zone $uri zone=c:1m rate=1r/s;
    server {
        location / {
            limit_req zone=a burst=5;
            limit_req zone=b nodelay delay=2;
            limit_req zone=c delay=3 nodelay;
        }
    }`);
  const limits = http.servers[0]?.locations[0]?.limitReq.limits;
  assert.deepEqual(
    limits?.map((l) => [l.zone, l.burstMilli, l.delayMilli]),
    [
      ['a', 5000, 0],
      ['b', 0, 2000],
      ['c', 0, Number.MAX_SAFE_INTEGER],
    ],
  );
});

test('limit_req may come before its limit_req_zone', () => {
  const http = load(`
    server { location / { limit_req zone=late; } }
    limit_req_zone $uri zone=late:1m rate=1r/s;`);
  assert.equal(http.servers[0]?.locations[0]?.limitReq.limits[0]?.zone, 'late');
});

test('limit_req_status, _log_level, _dry_run and the limit_req_retry_after extension', () => {
  const http = load(`
    server {
        limit_req_status 444;
        limit_req_log_level NOTICE;
        limit_req_dry_run on;
        limit_req_retry_after on;
    }`);
  const { status, logLevel, dryRun, retryAfter } = http.servers[0]!.limitReq;
  assert.deepEqual(
    { status, logLevel, dryRun, retryAfter },
    {
      status: 444,
      logLevel: 'notice',
      dryRun: true,
      retryAfter: true,
    },
  );
});

test('keyval_zone parameters and keyval', () => {
  const http = load(`
    keyval $uri $enablelimit zone=limitreq_uri;
    keyval_zone zone=limitreq_uri:64k type=prefix timeout=1h30m state=/var/lib/limitswitch/uri.json sync;
    keyval_zone zone=limitper_server:1m;`);
  assert.deepEqual(
    http.keyvalZones.map(({ source, ...zone }) => zone),
    [
      {
        name: 'limitreq_uri',
        sizeBytes: 65536,
        stateFile: '/var/lib/limitswitch/uri.json',
        timeoutMs: 5_400_000,
        type: 'prefix',
        sync: true,
      },
      {
        name: 'limitper_server',
        sizeBytes: 1048576,
        stateFile: null,
        timeoutMs: null,
        type: 'string',
        sync: false,
      },
    ],
  );
  assert.deepEqual(
    http.keyvals.map((k) => [k.key.raw, k.variable, k.zone, k.source.line]),
    [['$uri', 'enablelimit', 'limitreq_uri', 4]],
  );
});

test('map: exact keys lowercased, escapes, regexes in order, hostnames, volatile, default', () => {
  const http = load(`
    map $http_x_tier$arg_t $tier_key {
        hostnames;
        volatile;
        \\default      escaped;
        \\~literal     tilde;
        GOLD          "gold:$binary_remote_addr";
        *.example.com wildcard;
        ~^silver      silver;
        ~*^BRONZE-(?<n>[0-9]+)$ bronze-$n;
    }
    map $uri $no_default { /tea 1; }`);
  const [map, plain] = http.maps;
  assert.equal(map?.hostnames, true);
  assert.equal(map?.volatile, true);
  assert.equal(map?.defaultValue, null);
  assert.equal(map?.source.raw, '$http_x_tier$arg_t');
  assert.deepEqual(
    map?.entries.map((e) =>
      e.kind === 'exact' ? [e.match, e.value.raw] : [e.pattern, e.caseless, e.value.raw],
    ),
    [
      ['default', 'escaped'],
      ['~literal', 'tilde'],
      ['gold', 'gold:$binary_remote_addr'],
      ['*.example.com', 'wildcard'],
      ['^silver', false, 'silver'],
      ['^BRONZE-(?<n>[0-9]+)$', true, 'bronze-$n'],
    ],
  );
  assert.equal(plain?.defaultValue, null);
  assert.deepEqual(plain?.entries, [
    { kind: 'exact', match: '/tea', value: { raw: '1', parts: [{ text: '1' }] } },
  ]);
});

test('a variable may be used before the map, geo or keyval that defines it', () => {
  const http = load(`
    limit_req_zone $limit_key zone=z:1m rate=1r/s;
    map $enablelimit $limit_key { default ""; 1 $binary_remote_addr; }
    keyval $uri $enablelimit zone=kv;
    keyval_zone zone=kv:64k;`);
  assert.equal(http.limitReqZones[0]?.key.raw, '$limit_key');
});

test('a map defined twice for one variable: the last one counts, as in nginx', () => {
  const http = load(`
    map $uri $x { default first; }
    map $uri $x { default second; }`);
  assert.deepEqual(
    http.maps.map((m) => m.defaultValue?.raw),
    ['second'],
  );
});

test('geo: both forms, default, duplicate networks warn and the later value wins', () => {
  const warnings: ConfigWarning[] = [];
  const http = load(
    `
    geo $trusted {
        default 0;
        10.0.0.0/8 1;
        10.1.0.0/8 2;
        ::1 1;
    }
    geo $http_x_client $office {
        192.168.1.0/24 yes;
    }`,
    warnings,
  );
  const [trusted, office] = http.geos;
  assert.equal(trusted?.address.raw, '$remote_addr');
  assert.equal(trusted?.defaultValue, '0');
  assert.deepEqual(trusted?.entries, [
    { cidr: '10.0.0.0/8', value: '2' },
    { cidr: '::1', value: '1' },
  ]);
  assert.equal(office?.address.raw, '$http_x_client');
  assert.equal(office?.defaultValue, '');
  assert.deepEqual(
    warnings.map((w) => [w.text, w.line]),
    [
      ['low address bits of 10.1.0.0/8 are meaningless', 7],
      ['duplicate network "10.1.0.0/8", value: "2", old value: "1"', 7],
    ],
  );
});

test('upstream: servers with default port 80 and weights, keepalive; tuning parameters accepted', () => {
  const http = load(`
    upstream tea {
        zone tea 64k;
        server 127.0.0.1:8091 weight=3 max_fails=2 fail_timeout=10s;
        server tea-svc.default.svc.cluster.local;
        server [::1]:8093;
        keepalive 16;
    }`);
  assert.deepEqual(http.upstreams[0], {
    name: 'tea',
    servers: [
      { host: '127.0.0.1', port: 8091, weight: 3 },
      { host: 'tea-svc.default.svc.cluster.local', port: 80, weight: 1 },
      { host: '::1', port: 8093, weight: 1 },
    ],
    keepalive: 16,
    source: { file: '/etc/limitswitch/nginx.conf', line: 4 },
  });
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
    { host: null, port: 8081, defaultServer: true },
    { host: '127.0.0.1', port: 8082, defaultServer: false },
    { host: '::1', port: 8083, defaultServer: false },
  ]);
  assert.deepEqual(cafe?.serverNames, [
    'cafe.example.com',
    '*.example.com',
    '.example.org',
    'www.example.*',
    '',
    '~^(?<sub>.+)\\.example\\.net$',
  ]);
  assert.deepEqual(bare?.listen, [{ host: null, port: 80, defaultServer: false }]);
  assert.deepEqual(bare?.serverNames, ['']);
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
  assert.deepEqual(server.return, {
    code: 301,
    text: {
      raw: 'https://$host$request_uri',
      parts: [{ text: 'https://' }, { variable: 'host' }, { variable: 'request_uri' }],
    },
  });
  assert.deepEqual(
    server.locations.map((l) => [l.return?.code, l.return?.text?.raw ?? null]),
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

test('ignored directives are accepted in their nginx contexts and still checked', () => {
  const http = load(`
    log_format main '$remote_addr - $remote_user [$time_local] "$request"';
    access_log /var/log/nginx/access.log main;
    sendfile on;
    ssl_protocols TLSv1.2 TLSv1.3;
    gzip_types text/plain application/json;
    types { text/html html; application/json json; }
    server {
        ssl_certificate /etc/ssl/cafe.pem;
        location / { root /usr/share/nginx/html; index index.html; add_header X-Cafe tea always; }
    }`);
  assert.equal(http.servers.length, 1);
  assert.equal(
    errorText('server { location / { ssl_certificate x.pem; } }'),
    '[emerg] "ssl_certificate" directive is not allowed here in /etc/limitswitch/nginx.conf:3',
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
