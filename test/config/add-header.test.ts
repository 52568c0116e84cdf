/** `add_header` as the config reads it: nginx's contexts, arguments and array inheritance. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, loadConfigText } from '../../src/config/index.ts';

const load = (http: string, server: string, location: string) =>
  loadConfigText(
    `http {\n${http}\n  server {\n    listen 80;\n${server}\n    location / {\n      ${location}\n    }\n    location /n/ { location /n/m/ { } }\n  }\n}\n`,
    'test.conf',
  );

function fails(http: string, server: string, location: string, message: RegExp, line: number) {
  assert.throws(
    () => load(http, server, location),
    (err: unknown) => err instanceof ConfigError && message.test(err.text) && err.line === line,
    `${http} ${server} ${location}`,
  );
}

const names = (lines: readonly { readonly name: string }[]) => lines.map((l) => l.name);

describe('add_header', () => {
  test('a level with none inherits all of the enclosing one; a level with any replaces them all', () => {
    const conf = load('add_header A a;', 'add_header B b; add_header C c always;', 'add_header D d;');
    const server = conf.http.servers[0]!;
    assert.deepEqual(names(server.addHeaders), ['B', 'C']);
    assert.deepEqual(names(server.locations[0]!.addHeaders), ['D']);
    assert.deepEqual(names(server.locations[1]!.locations[0]!.addHeaders), ['B', 'C']);
    assert.deepEqual(
      server.addHeaders.map((l) => [l.value?.raw, l.always]),
      [
        ['b', false],
        ['c', true],
      ],
    );
    const fromHttp = load('add_header A "$host x";', '', '').http.servers[0]!;
    assert.deepEqual(names(fromHttp.locations[0]!.addHeaders), ['A']);
    assert.deepEqual(fromHttp.addHeaders[0]!.value?.parts, [{ variable: 'host' }, { text: ' x' }]);
  });

  test('an empty value is kept as none', () => {
    const line = load('', '', 'add_header A "";').http.servers[0]!.locations[0]!.addHeaders[0]!;
    assert.equal(line.value, null);
  });

  test("a location's if keeps its own lines, with or without a return", () => {
    const location = load('', '', 'if ($arg_a) { add_header A a; } if ($arg_b) { return 404; }').http
      .servers[0]!.locations[0]!;
    assert.deepEqual(
      location.script.map((i) =>
        i.op !== 'if'
          ? i.op
          : [
              i.steps[0]?.op === 'return' ? i.steps[0].answer.code : null,
              i.addHeaders === null ? null : names(i.addHeaders),
            ],
      ),
      [
        [null, ['A']],
        [404, null],
      ],
    );
  });

  test('what nginx refuses fails with the line', () => {
    fails('', '', 'add_header A a sometimes;', /invalid parameter "sometimes"/, 7);
    fails('', '', 'add_header A;', /invalid number of arguments in "add_header" directive/, 7);
    fails('', '', 'add_header A $no_such_variable;', /unknown "no_such_variable" variable/, 7);
    fails('', 'if ($arg_a) { add_header A a; }', '', /"add_header" directive is not allowed here/, 5);
    fails('', '', 'if ($arg_a) { add_header A a b c; }', /invalid number of arguments in "add_header"/, 7);
    fails('', '', 'if ($arg_a) { add_header A a bad; }', /invalid parameter "bad"/, 7);
    fails(
      '',
      '',
      'if ($uri ~ ^/(a)) { add_header A $1; }',
      /captures in "add_header" inside "if" are not supported/,
      7,
    );
  });
});
