import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSite } from '../../src/config/build-site.ts';
import type { HttpConf, ProxySetHeader } from '../../src/config/model.ts';
import { proxiesUpgrades } from '../../src/config/proxy-upgrade.ts';
import { httpLoadError, loadHttp } from '../helpers/http-config.ts';

const load = (http: string): HttpConf => loadHttp(http, '/etc/limitswitch/nginx.conf');

const errorText = (http: string): string => httpLoadError(http, '/etc/limitswitch/nginx.conf');

const WEBSOCKET = `
    proxy_http_version 1.1;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header Connection "upgrade";`;

test('proxy_http_version and proxy_set_header errors are nginx 1.22 messages', () => {
  assert.equal(
    errorText('server { location / { proxy_http_version 2; } }'),
    '[emerg] invalid value "2" in /etc/limitswitch/nginx.conf:3',
  );
  assert.equal(
    errorText('server { location / { proxy_http_version 1.1; proxy_http_version 1.0; } }'),
    '[emerg] "proxy_http_version" directive is duplicate in /etc/limitswitch/nginx.conf:3',
  );
  assert.equal(
    errorText('server { location / { proxy_set_header Upgrade; } }'),
    '[emerg] invalid number of arguments in "proxy_set_header" directive in /etc/limitswitch/nginx.conf:3',
  );
  // the values are evaluated per request: an unknown variable is refused where it is written
  assert.equal(
    errorText('server { location / { proxy_set_header X-Real-IP $remote_adr; } }'),
    '[emerg] unknown "remote_adr" variable in /etc/limitswitch/nginx.conf:3',
  );
  // the upstream client frames the body it sends; a length or coding written here would not be sent
  assert.equal(
    errorText('server { proxy_set_header Content-Length 5; }'),
    '[emerg] a "Content-Length" value in "proxy_set_header" is not supported by limitswitch in /etc/limitswitch/nginx.conf:3',
  );
  load('server { location / { proxy_pass_request_body off; proxy_set_header Content-Length ""; } }');
  assert.equal(
    errorText('upstream u { server 127.0.0.1; proxy_http_version 1.1; }'),
    '[emerg] "proxy_http_version" directive is not allowed here in /etc/limitswitch/nginx.conf:3',
  );
});

test('proxy_http_version: innermost wins (1.0); proxy_set_header: a level with a list uses only its own', () => {
  const http = load(`
    proxy_http_version 1.1;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header Connection "upgrade";
    server {
        location /inherits { proxy_pass http://127.0.0.1:8081; }
        location /own-list {
            proxy_set_header X-Real-IP $remote_addr;
            proxy_pass http://127.0.0.1:8081;
        }
        location /old { proxy_http_version 1.0; proxy_pass http://127.0.0.1:8081; }
    }
    server { listen 8080; proxy_set_header Host $host; }`);
  const [first, second] = http.servers;
  const loc = (pattern: string) => first!.locations.find((l) => l.pattern === pattern)!;
  const written = (lines: readonly ProxySetHeader[]) => lines.map(({ field, value }) => ({ field, value }));
  assert.equal(first!.proxyHttpVersion, '1.1');
  assert.deepEqual(written(loc('/inherits').proxySetHeaders), [
    { field: 'Upgrade', value: '$http_upgrade' },
    { field: 'Connection', value: 'upgrade' },
  ]);
  assert.deepEqual(written(loc('/own-list').proxySetHeaders), [
    { field: 'X-Real-IP', value: '$remote_addr' },
  ]);
  assert.equal(loc('/old').proxyHttpVersion, '1.0');
  assert.deepEqual(written(second!.proxySetHeaders), [{ field: 'Host', value: '$host' }]);
  assert.equal(load('server { }').servers[0]!.proxyHttpVersion, '1.0');
});

test('a location tunnels upgrades only with HTTP/1.1 and Upgrade and Connection set', () => {
  const upgrades = (version: '1.0' | '1.1', headers: [string, string][]) =>
    proxiesUpgrades({
      proxyHttpVersion: version,
      proxySetHeaders: headers.map(([field, value]) => ({ field, value })),
    });
  const usual: [string, string][] = [
    ['Upgrade', '$http_upgrade'],
    ['Connection', 'upgrade'],
  ];
  assert.equal(upgrades('1.1', usual), true);
  assert.equal(upgrades('1.0', usual), false);
  assert.equal(
    upgrades('1.1', [
      ['upgrade', '$http_upgrade'],
      ['CONNECTION', '$connection_upgrade'],
    ]),
    true,
  );
  assert.equal(
    upgrades('1.1', [
      ['Upgrade', 'websocket'],
      ['Connection', 'keep-alive, Upgrade'],
    ]),
    true,
  );
  assert.equal(upgrades('1.1', [['Upgrade', '$http_upgrade']]), false);
  assert.equal(upgrades('1.1', [['Connection', 'upgrade']]), false);
  assert.equal(
    upgrades('1.1', [
      ['Upgrade', ''],
      ['Connection', 'upgrade'],
    ]),
    false,
  );
  assert.equal(
    upgrades('1.1', [
      ['Upgrade', '$http_upgrade'],
      ['Connection', ''],
    ]),
    false,
  );
  assert.equal(
    upgrades('1.1', [
      ['Upgrade', '$http_upgrade'],
      ['Connection', 'close'],
    ]),
    false,
  );
});

test('the site marks tunnelling locations, after inheritance', () => {
  const site = buildSite(
    load(`
    server {
        ${WEBSOCKET}
        location /ws { proxy_pass http://127.0.0.1:8081; }
        location /plain { proxy_set_header Host $host; proxy_pass http://127.0.0.1:8081; }
    }
    server { listen 8080; location / { proxy_pass http://127.0.0.1:8081; } }`),
  );
  const [first, second] = site.servers;
  const handler = (server: typeof first, pattern: string) =>
    server!.locations.find((l) => l.pattern === pattern)!.handler;
  assert.equal(handler(first, '/ws').proxyUpgrade, true);
  assert.equal(handler(first, '/plain').proxyUpgrade, false);
  assert.equal(first!.handler.proxyUpgrade, true);
  assert.equal(handler(second, '/').proxyUpgrade, false);
});
