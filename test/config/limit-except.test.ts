/** `limit_except` as the config reads it: nginx's checks, and loud errors for what is not honoured. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { httpLoadError, loadHttp } from '../helpers/http-config.ts';

const location = (body: string) => `server { listen 80; location / { ${body} } }`;

test('limit_except: methods (GET lists HEAD), the block’s allow, deny and proxy_pass, nginx’s errors with the line', () => {
  const conf = loadHttp(location('limit_except GET POST { allow 10.0.0.0/8; deny all; }'), 'test.conf');
  assert.deepEqual(conf.servers[0]!.locations[0]!.limitExcept, {
    methods: ['GET', 'POST', 'HEAD'],
    access: [
      { action: 'allow', from: '10.0.0.0/8' },
      { action: 'deny', from: 'all' },
    ],
    proxyPass: null,
  });
  assert.match(
    httpLoadError(location('limit_except FOO { }'), 'test.conf'),
    /invalid method "FOO" in test.conf:3/,
  );
  assert.match(
    httpLoadError(location('limit_except GET { limit_rate 1k; }'), 'test.conf'),
    /"limit_rate" directive is not supported inside "limit_except" by limitswitch in test.conf:3/,
  );
  assert.match(
    httpLoadError(location('limit_except GET { proxy_pass http://127.0.0.1/x; }'), 'test.conf'),
    /"proxy_pass" cannot have URI part .* inside "limit_except" block in test.conf:3/,
  );
  assert.match(
    httpLoadError(location('if ($arg_a) { proxy_pass http://127.0.0.1/x; }'), 'test.conf'),
    /"proxy_pass" cannot have URI part .* inside "if" statement/,
  );
  assert.match(
    httpLoadError(location('limit_except GET { } limit_except POST { }'), 'test.conf'),
    /"limit_except" directive is duplicate/,
  );
  assert.match(
    httpLoadError('server { listen 80; limit_except GET { } }', 'test.conf'),
    /"limit_except" directive is not allowed here/,
  );
});

test('internal: a location flag, once', () => {
  const conf = loadHttp(location('internal;'), 'test.conf');
  assert.equal(conf.servers[0]!.locations[0]!.internal, true);
  assert.match(
    httpLoadError(location('internal; internal;'), 'test.conf'),
    /"internal" directive is duplicate/,
  );
  assert.match(
    httpLoadError('server { listen 80; internal; }', 'test.conf'),
    /"internal" directive is not allowed here/,
  );
});
