import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ConfigWarning, loadConfigText } from '../../src/config/index.ts';
import type { HttpConf } from '../../src/config/model.ts';

const load = (http: string, warnings?: ConfigWarning[]): HttpConf =>
  loadConfigText(`events {}\nhttp {\n${http}\n}\n`, '/etc/limitswitch/nginx.conf', {
    onWarning: (w) => warnings?.push(w),
  }).http;

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
