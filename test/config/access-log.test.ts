/**
 * `access_log` as ngx_http_log_set_log reads it: a format by name (`combined` by default), `off`,
 * `buffer=`, `flush=`, `if=`; a level's lines replace the enclosing level's; nginx's words for what it
 * refuses, and limitswitch's for what it cannot write as nginx does.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { httpLoadError, loadHttp } from '../helpers/http-config.ts';

const FILE = '/etc/limitswitch/nginx.conf';

test('access_log: lines by level, the format by name, off', () => {
  const http = loadHttp(
    `
    log_format short '$uri $status';
    access_log /var/log/a.log;
    server {
        listen 80;
        location /own { access_log /var/log/b.log short buffer=32k flush=1s if=$arg_x; }
        location /off { access_log off; }
        location /inherit { }
    }`,
    FILE,
  );
  const [own, off, inherit] = http.servers[0]!.locations;
  assert.deepEqual(
    own!.accessLogs.map((log) => [log.path, log.format.name, log.condition !== null]),
    [['/var/log/b.log', 'short', true]],
  );
  assert.deepEqual(off!.accessLogs, []);
  assert.deepEqual(
    inherit!.accessLogs.map((log) => [log.path, log.format.name]),
    [['/var/log/a.log', 'combined']],
  );
});

test('access_log: what nginx refuses and what limitswitch cannot write', () => {
  const error = (lines: string) => httpLoadError(`${lines} server { listen 80; }`, FILE);
  assert.match(error('access_log /a.log nope;'), /unknown log format "nope" in .*nginx.conf:3/);
  assert.match(error('access_log /a.log combined bogus=1;'), /invalid parameter "bogus=1"/);
  assert.match(
    error('access_log /a.log combined flush=1s;'),
    /no buffer is defined for access_log "\/a.log"/,
  );
  assert.match(
    error('access_log /a.log combined gzip;'),
    /the "gzip" parameter of "access_log" is not supported by limitswitch/,
  );
  assert.match(
    error('access_log syslog:server=127.0.0.1;'),
    /syslog of "access_log" is not supported by limitswitch/,
  );
  assert.match(error('log_format bad $nosuch; access_log /a.log bad;'), /unknown "nosuch" variable/);
});
