/**
 * `root`, `alias`, `index`, `types` and `default_type` read as nginx merges them, refused with its
 * words; variables in paths refused loudly.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import type { HttpConf } from '../../src/config/model.ts';
import { httpLoadError, loadHttp } from '../helpers/http-config.ts';

const FILE = '/etc/nginx/nginx.conf';
const load = (http: string): HttpConf => loadHttp(http, FILE);

const errorText = (http: string): string => httpLoadError(http, FILE);

test('root: html under the conf folder by default, relative paths read there, a trailing slash dropped', () => {
  const http = load(`
    server { location / { } location /r/ { root www/; } location /a/ { alias /srv/a/; location /a/b/ { } } location ~ \\.png$ { alias /srv/one.png; } }`);
  const [plain, relative, aliased, regex] = http.servers[0]!.locations;
  assert.deepEqual(plain!.files.documentRoot, { path: join('/etc/nginx', 'html'), alias: null });
  assert.deepEqual(relative!.files.documentRoot, { path: '/etc/nginx/www', alias: null });
  assert.deepEqual(aliased!.files.documentRoot, { path: '/srv/a/', alias: 3 });
  // a nested location inherits the alias and the prefix it replaces
  assert.deepEqual(aliased!.locations[0]!.files.documentRoot, { path: '/srv/a/', alias: 3 });
  assert.deepEqual(regex!.files.documentRoot, { path: '/srv/one.png', alias: 'whole' });
});

test('index, types and default_type: the innermost level that sets them; a types block replaces', () => {
  const http = load(`
    index a.html b.html;
    types { text/html html htm; }
    default_type application/octet-stream;
    server { location / { types { text/css CSS; } index c.html; } location /x { } }`);
  const [inner, outer] = http.servers[0]!.locations;
  assert.deepEqual(inner!.files.index, ['c.html']);
  assert.deepEqual([...inner!.files.types], [['css', 'text/css']]);
  assert.equal(inner!.files.defaultType, 'application/octet-stream');
  assert.deepEqual(outer!.files.index, ['a.html', 'b.html']);
  assert.deepEqual(
    [...outer!.files.types],
    [
      ['html', 'text/html'],
      ['htm', 'text/html'],
    ],
  );
  const defaults = load('server { }').servers[0]!.files;
  assert.deepEqual(defaults.index, ['index.html']);
  assert.equal(defaults.defaultType, 'text/plain');
  assert.equal(defaults.types.get('jpg'), 'image/jpeg');
  assert.equal(defaults.types.get('css'), undefined);
});

test('nginx errors, and variables refused', () => {
  assert.match(
    errorText('server { location / { root /a; alias /b; } }'),
    /"alias" directive is duplicate, "root" directive was specified earlier in .*:3/,
  );
  assert.match(errorText('server { root /a; root /b; }'), /"root" directive is duplicate/);
  assert.match(errorText('root /a; alias /b;'), /"alias" directive is not allowed here/);
  assert.match(
    errorText('server { location / { root $document_root/x; } }'),
    /the \$document_root variable cannot be used in the "root" directive/,
  );
  assert.match(
    errorText('server { location / { root /srv/$host; } }'),
    /variables in "root" are not supported/,
  );
  assert.match(
    errorText('index /a.html b.html;'),
    /only the last index in "index" directive should be absolute/,
  );
  assert.match(errorText('default_type a; default_type b;'), /"default_type" directive is duplicate/);
  assert.match(errorText('types { text/html html { } }'), /unexpected "\{"/);
  // nginx would list the directory: refused rather than answered 403
  assert.match(
    errorText('server { location / { autoindex on; } }'),
    /"autoindex on" is not supported by limitswitch in .*:3/,
  );
  assert.equal(errorText('autoindex off;'), 'loaded');
  assert.match(
    errorText('autoindex maybe;'),
    /invalid value "maybe" in "autoindex" directive, it must be "on" or "off"/,
  );
  // what the replica writes is nginx's default; the rest would change answers, so it is refused
  assert.equal(errorText('etag on;'), 'loaded');
  assert.match(errorText('server { etag off; }'), /"etag off" is not supported by limitswitch .* in .*:3/);
});
