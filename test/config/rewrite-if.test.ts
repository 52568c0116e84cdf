/** `if` as the config reads it: nginx's condition syntax, and loud errors for what is not honoured. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfigText } from '../../src/config/index.ts';

const load = (location: string, server = '') =>
  loadConfigText(
    `http {\n  server {\n    listen 80;\n${server}    location / {\n      ${location}\n    }\n  }\n}\n`,
    'test.conf',
  );

function fails(location: string, message: RegExp, line = 5) {
  assert.throws(
    () => load(location),
    (err: unknown) => err instanceof ConfigError && message.test(err.text) && err.line === line,
    location,
  );
}

describe('if (condition) { return …; }', () => {
  test('conditions are read as nginx reads them, parentheses glued or apart', () => {
    const conf = load(
      'if ($http_a) { return 404; } if ( $arg_b = "x$arg_c" ) { return 403 text; } if ($uri ~* "^/A") {return 301 /b;} return 200;',
    );
    const loc = conf.http.servers[0]!.locations[0]!;
    assert.deepEqual(
      loc.ifReturns.map((i) => [
        i.condition.variable,
        i.condition.op,
        i.condition.value?.raw ?? i.condition.pattern,
        i.answer?.code,
      ]),
      [
        ['http_a', 'truthy', null, 404],
        ['arg_b', '=', 'x$arg_c', 403],
        ['uri', '~*', '^/A', 301],
      ],
    );
    assert.equal(loc.return?.code, 200);
  });

  test('an if after a plain return is never reached, and is not kept', () => {
    const loc = load('return 200; if ($http_a) { return 404; }').http.servers[0]!.locations[0]!;
    assert.equal(loc.ifReturns.length, 0);
  });

  test('a server-level if is kept on the server', () => {
    const conf = load('return 200;', '    if ($http_stop) { return 503; }\n');
    assert.equal(conf.http.servers[0]!.ifReturns[0]!.answer?.code, 503);
  });

  test('what is not honoured fails with the line', () => {
    fails(
      'if ($http_a) { limit_req zone=x; }',
      /"limit_req" directive is not supported inside "if" by limitswitch/,
    );
    fails(
      'if ($http_a) { if ($http_b) { return 404; } }',
      /"if" directive is not supported inside "if" by limitswitch/,
    );
    fails('if (-f $request_filename) { return 404; }', /file tests are not supported/);
    fails('if ($http_a == b) { return 404; }', /unexpected "==" in condition/);
    fails('if $http_a { return 404; }', /invalid condition/);
    fails('if ($no_such_variable) { return 404; }', /unknown "no_such_variable" variable/);
    fails('if ($uri ~ "(") { return 404; }', /pcre|regex|missing/i);
    fails('if ($uri ~ ^/(a)) { return 301 /$1; }', /captures in "return" inside "if" are not supported/);
  });
});
