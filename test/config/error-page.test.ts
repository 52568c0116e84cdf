/** `error_page` and `recursive_error_pages` as the config reads them: nginx's checks and inheritance. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildSite } from '../../src/config/build-site.ts';
import { httpLoadError, loadHttp } from '../helpers/http-config.ts';

const server = (body: string) => `server { listen 80; ${body} }`;

describe('error_page', () => {
  test('codes, =response and the URI; a level with its own lines does not inherit', () => {
    const http = loadHttp(
      server(
        'error_page 404 500 /err; recursive_error_pages on; location /a { error_page 403 =200 @x; } location /b { } location @x { return 200; }',
      ),
      'test.conf',
    );
    const conf = http.servers[0]!;
    const lines = (pages: typeof conf.errorPages) => pages.map((p) => [p.code, p.overwrite, p.uri.raw]);
    assert.deepEqual(lines(conf.errorPages), [
      [404, -1, '/err'],
      [500, -1, '/err'],
    ]);
    assert.deepEqual(lines(conf.locations[0]!.errorPages), [[403, 200, '@x']]);
    assert.deepEqual(lines(conf.locations[1]!.errorPages), lines(conf.errorPages));
    assert.equal(conf.locations[1]!.recursiveErrorPages, true);
    assert.deepEqual(
      conf.namedLocations.map((l) => l.pattern),
      ['@x'],
    );
  });

  test('= alone is the page’s own status; 494–497 are answered as 400 unless said otherwise', () => {
    const conf = loadHttp(server('error_page 404 = /a; error_page 497 /https;'), 'test.conf').servers[0]!;
    assert.deepEqual(
      conf.errorPages.map((p) => [p.code, p.overwrite]),
      [
        [404, 0],
        [497, 400],
      ],
    );
  });

  test('nginx’s errors, with the line', () => {
    assert.match(
      httpLoadError(server('error_page 200 /x;'), 'test.conf'),
      /value "200" must be between 300 and 599/,
    );
    assert.match(httpLoadError(server('error_page 499 /x;'), 'test.conf'), /invalid value "499"/);
    assert.match(httpLoadError(server('error_page 404 =x /x;'), 'test.conf'), /invalid value "=x"/);
    assert.match(httpLoadError(server('error_page = /x;'), 'test.conf'), /invalid value "="/);
    assert.match(
      httpLoadError(server('error_page 404;'), 'test.conf'),
      /invalid number of arguments in "error_page"/,
    );
  });

  test('pages for upstream failures and proxy_intercept_errors are read where requests are proxied', () => {
    const site = (body: string) => () => buildSite(loadHttp(server(body), 'test.conf'));
    assert.doesNotThrow(
      site('error_page 500 502 503 504 /50x.html; location / { proxy_pass http://127.0.0.1:1; }'),
    );
    assert.doesNotThrow(
      site('location / { proxy_pass http://127.0.0.1:1; error_page 504 =200 @x; } location @x { }'),
    );
    assert.equal(httpLoadError(server('proxy_intercept_errors on;'), 'test.conf'), 'loaded');
    assert.equal(httpLoadError(server('proxy_intercept_errors off;'), 'test.conf'), 'loaded');
    assert.match(
      httpLoadError(server('proxy_intercept_errors on; proxy_intercept_errors off;'), 'test.conf'),
      /"proxy_intercept_errors" directive is duplicate/,
    );
    assert.match(
      httpLoadError(server('proxy_intercept_errors maybe;'), 'test.conf'),
      /invalid value "maybe" in "proxy_intercept_errors" directive, it must be "on" or "off"/,
    );
  });
});
