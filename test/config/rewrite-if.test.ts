/** `if` as the config reads it: nginx's condition syntax, and loud errors for what is not honoured. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfigText } from '../../src/config/index.ts';
import type { RewriteStep } from '../../src/config/model.ts';

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

/** A level's script as `[op, what]` pairs, an `if` with its condition and inner steps. */
function steps(script: readonly RewriteStep[]): unknown[] {
  return script.map((s) => {
    switch (s.op) {
      case 'if':
        return [
          'if',
          s.condition.variable,
          s.condition.op,
          s.condition.value?.raw ?? s.condition.pattern,
          steps(s.steps),
        ];
      case 'return':
        return ['return', s.answer.code];
      case 'rewrite':
        return ['rewrite', s.pattern, s.replacement.raw, s.flag];
      case 'set':
        return ['set', s.variable, s.value.raw];
      default:
        return ['break'];
    }
  });
}

describe('the rewrite module script', () => {
  test('conditions are read as nginx reads them, parentheses glued or apart', () => {
    const conf = load(
      'if ($http_a) { return 404; } if ( $arg_b = "x$arg_c" ) { return 403 text; } if ($uri ~* "^/A") {return 301 /b;} return 200;',
    );
    assert.deepEqual(steps(conf.http.servers[0]!.locations[0]!.script), [
      ['if', 'http_a', 'truthy', null, [['return', 404]]],
      ['if', 'arg_b', '=', 'x$arg_c', [['return', 403]]],
      ['if', 'uri', '~*', '^/A', [['return', 301]]],
      ['return', 200],
    ]);
  });

  test('rewrite, set, break and if keep the order they are written in, at server level too', () => {
    const conf = load(
      'set $a 1; rewrite ^/(.*)$ /b/$1 last; if ($a) { set $b x$a; rewrite ^ /c break; break; }',
      '    rewrite ^/old /new permanent;\n',
    );
    assert.deepEqual(steps(conf.http.servers[0]!.script), [['rewrite', '^/old', '/new', 'permanent']]);
    assert.deepEqual(steps(conf.http.servers[0]!.locations[0]!.script), [
      ['set', 'a', '1'],
      ['rewrite', '^/(.*)$', '/b/$1', 'last'],
      ['if', 'a', 'truthy', null, [['set', 'b', 'x$a'], ['rewrite', '^', '/c', 'break'], ['break']]],
    ]);
  });

  test('a set variable is known everywhere, as nginx declares it at config time', () => {
    const conf = load('return 200 $later;', '    location /x { set $later 1; }\n');
    assert.equal(conf.http.servers[0]!.locations.length, 2);
  });

  test('what nginx refuses, and what is not honoured, fails with the line', () => {
    fails(
      'if ($http_a) { limit_req zone=x; }',
      /"limit_req" directive is not supported inside "if" by limitswitch/,
    );
    fails(
      'if ($http_a) { if ($http_b) { return 404; } }',
      /"if" directive is not supported inside "if" by limitswitch/,
    );
    fails('if (-f) { return 404; }', /invalid condition "-f"/);
    fails('if ($http_a == b) { return 404; }', /unexpected "==" in condition/);
    fails('if $http_a { return 404; }', /invalid condition/);
    fails('if ($no_such_variable) { return 404; }', /unknown "no_such_variable" variable/);
    fails('if ($uri ~ "(") { return 404; }', /pcre|regex|missing/i);
    fails('rewrite ^ "";', /empty replacement/);
    fails('rewrite ^ /a final;', /invalid parameter "final"/);
    fails('set $uri 1;', /the duplicate "uri" variable/);
    fails('set x 1;', /invalid variable name "x"/);
    fails('set $args a=1;', /"set \$args" is not supported by limitswitch/);
    fails('break 1;', /invalid number of arguments in "break" directive/);
  });
});
