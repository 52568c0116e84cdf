import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfigText } from '../../src/config/index.ts';
import type { LocationConf, ServerConf } from '../../src/config/model.ts';

const ZONES = `
    limit_req_zone $binary_remote_addr zone=h:1m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=s:1m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=l:1m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=n:1m rate=1r/s;`;

function servers(http: string): readonly ServerConf[] {
  return loadConfigText(`http {\n${ZONES}\n${http}\n}\n`, 'merge.conf').http.servers;
}

const zones = (level: ServerConf | LocationConf | undefined) => level?.limitReq.limits.map((l) => l.zone);
const loc = (level: ServerConf | LocationConf | undefined, pattern: string) =>
  level?.locations.find((l) => l.pattern === pattern);

test('limit_req lists are inherited only by levels without any limit_req, never merged', () => {
  const [inheriting, own] = servers(`
    limit_req zone=h;
    server {
        location /inherit { }
        location /own {
            limit_req zone=l;
            location /own/nested { }
            location /own/nested-own { limit_req zone=n; }
        }
    }
    server {
        limit_req zone=s;
        location /inherit { }
    }`);
  assert.deepEqual(zones(inheriting), ['h']);
  assert.deepEqual(zones(loc(inheriting, '/inherit')), ['h']);
  assert.deepEqual(zones(loc(inheriting, '/own')), ['l']);
  assert.deepEqual(zones(loc(loc(inheriting, '/own'), '/own/nested')), ['l']);
  assert.deepEqual(zones(loc(loc(inheriting, '/own'), '/own/nested-own')), ['n']);
  assert.deepEqual(zones(own), ['s']);
  assert.deepEqual(zones(loc(own, '/inherit')), ['s']);
});

test('limit_req_status, _log_level, _dry_run, _retry_after: the innermost setting wins', () => {
  const [server] = servers(`
    limit_req_status 429;
    limit_req_log_level warn;
    server {
        limit_req_dry_run on;
        location /a { }
        location /b {
            limit_req_status 503;
            limit_req_dry_run off;
            limit_req_retry_after on;
            location /b/c { limit_req_log_level info; }
        }
    }`);
  const settings = (level: ServerConf | LocationConf | undefined) => {
    const { status, logLevel, dryRun, retryAfter } = level!.limitReq;
    return [status, logLevel, dryRun, retryAfter];
  };
  assert.deepEqual(settings(server), [429, 'warn', true, false]);
  assert.deepEqual(settings(loc(server, '/a')), [429, 'warn', true, false]);
  assert.deepEqual(settings(loc(server, '/b')), [503, 'warn', false, true]);
  assert.deepEqual(settings(loc(loc(server, '/b'), '/b/c')), [503, 'info', false, true]);
});

test('defaults: status 503, level error, dry run, Retry-After and RateLimit fields off, no limits', () => {
  const [server] = servers('server { location / { } }');
  assert.deepEqual(loc(server, '/')?.limitReq, {
    limits: [],
    status: 503,
    logLevel: 'error',
    dryRun: false,
    retryAfter: false,
    rateLimitHeaders: false,
  });
  assert.deepEqual(loc(server, '/')?.limitConn, {
    limits: [],
    status: 503,
    logLevel: 'error',
    dryRun: false,
    retryAfterMs: null,
  });
  assert.deepEqual(loc(server, '/')?.apiRateLimit, { zone: null, status: 429, source: null });
  assert.deepEqual(loc(server, '/')?.realIp, { trustedFrom: [], header: 'X-Real-IP', recursive: false });
  assert.deepEqual(loc(server, '/')?.access, []);
});

test('set_real_ip_from lists are inherited when a level has none; header and recursive merge singly', () => {
  const [server] = servers(`
    set_real_ip_from 10.0.0.0/8;
    set_real_ip_from 172.16.0.0/12;
    real_ip_header X-Forwarded-For;
    server {
        location /inherit { }
        location /own {
            set_real_ip_from 192.168.0.0/16;
            real_ip_recursive on;
        }
    }`);
  assert.deepEqual(loc(server, '/inherit')?.realIp, {
    trustedFrom: ['10.0.0.0/8', '172.16.0.0/12'],
    header: 'X-Forwarded-For',
    recursive: false,
  });
  assert.deepEqual(loc(server, '/own')?.realIp, {
    trustedFrom: ['192.168.0.0/16'],
    header: 'X-Forwarded-For',
    recursive: true,
  });
});

test('allow/deny rules are inherited when a level has none, replaced otherwise', () => {
  const [server] = servers(`
    allow 127.0.0.1;
    deny all;
    server {
        location /inherit { }
        location /own { deny 10.0.0.0/8; }
    }`);
  assert.deepEqual(server?.access, [
    { action: 'allow', from: '127.0.0.1' },
    { action: 'deny', from: 'all' },
  ]);
  assert.deepEqual(loc(server, '/inherit')?.access, server?.access);
  assert.deepEqual(loc(server, '/own')?.access, [{ action: 'deny', from: '10.0.0.0/8' }]);
});

test('return, proxy_pass and api belong to their own location, not to nested ones', () => {
  const [server] = servers(`
    server {
        location /a {
            return 403;
            location /a/b { }
        }
    }`);
  assert.deepEqual(
    loc(server, '/a')?.script.map((s) => (s.op === 'return' ? s.answer.code : s.op)),
    [403],
  );
  assert.deepEqual(loc(loc(server, '/a'), '/a/b')?.script, []);
});

test('client_max_body_size: 1m by default, the innermost level wins, 0 and 1g as nginx reads them', () => {
  const [server, other] = servers(`
    client_max_body_size 10k;
    server {
        client_max_body_size 2m;
        location /a { }
        location /b { client_max_body_size 0; location /b/c { } }
        location /d { client_max_body_size 1g; }
    }
    server { location / { } }`);
  assert.equal(server?.clientMaxBodyBytes, 2 * 1024 * 1024);
  assert.equal(loc(server, '/a')?.clientMaxBodyBytes, 2 * 1024 * 1024);
  assert.equal(loc(server, '/b')?.clientMaxBodyBytes, 0);
  assert.equal(loc(loc(server, '/b'), '/b/c')?.clientMaxBodyBytes, 0);
  assert.equal(loc(server, '/d')?.clientMaxBodyBytes, 1024 ** 3);
  assert.equal(loc(other, '/')?.clientMaxBodyBytes, 10 * 1024);
  const [bare] = servers('server { location / { } }');
  assert.equal(loc(bare, '/')?.clientMaxBodyBytes, 1024 * 1024);
});

test('client_header_buffer_size and large_client_header_buffers: 1k and 4 8k, http then server', () => {
  const [inherits, own] = servers(`
    client_header_buffer_size 2k;
    large_client_header_buffers 8 16k;
    server { listen 80; }
    server { listen 81; client_header_buffer_size 4k; large_client_header_buffers 2 1m; }`);
  const [bare] = servers('server { }');
  const limits = (s: ServerConf | undefined) => [s?.clientHeaderBufferBytes, s?.largeClientHeaderBuffers];
  assert.deepEqual(limits(inherits), [2048, { count: 8, bytes: 16 * 1024 }]);
  assert.deepEqual(limits(own), [4096, { count: 2, bytes: 1024 * 1024 }]);
  assert.deepEqual(limits(bare), [1024, { count: 4, bytes: 8192 }]);
});
