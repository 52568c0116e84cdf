import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../src/config/config-error.ts';
import { tokenize } from '../../src/config/tokenizer.ts';

const words = (text: string) => tokenize(text, 'test.conf').map((s) => [s.end, ...s.args]);

function throwsAt(text: string, message: string, line: number): void {
  assert.throws(
    () => tokenize(text, 'test.conf'),
    (err: unknown) => err instanceof ConfigError && err.text === message && err.line === line,
  );
}

test('words, semicolons and blocks', () => {
  assert.deepEqual(words('a b;\nc {\n d;\n}\n'), [[';', 'a', 'b'], ['{', 'c'], [';', 'd'], ['}'], ['eof']]);
});

test('a statement carries the line of its terminator, as nginx reports errors there', () => {
  const statements = tokenize('listen\n  8080\n  ;\nhttp\n{\n}', 'test.conf');
  assert.deepEqual(
    statements.map((s) => s.line),
    [3, 5, 6, 6],
  );
});

test('comments run to the end of the line; # inside a word is part of it', () => {
  assert.deepEqual(words('# all of this\na b#c; # trailing\n'), [[';', 'a', 'b#c'], ['eof']]);
});

test('double and single quotes keep spaces, ; { } and # literally', () => {
  assert.deepEqual(words(`a "b c;{}#" 'd "e"';`)[0], [';', 'a', 'b c;{}#', 'd "e"']);
  assert.deepEqual(words('a "";')[0], [';', 'a', '']);
});

test('escapes as ngx_conf_read_token: \\" \\\' \\\\ \\n \\t \\r; other backslashes stay', () => {
  assert.deepEqual(words(String.raw`a "x\"y" 'p\'q' "b\\s" "l\nm\tn\ro" \default "\d+";`)[0], [
    ';',
    'a',
    'x"y',
    "p'q",
    'b\\s',
    'l\nm\tn\ro',
    '\\default',
    '\\d+',
  ]);
  assert.deepEqual(words('a b\\ c;')[0], [';', 'a', 'b\\ c']);
});

// biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${var} syntax
test('$var and ${var} stay in words; ${ does not open a block', () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: nginx's ${var} syntax
  assert.deepEqual(words('map ${uri}x $y {')[0], ['{', 'map', '${uri}x', '$y']);
  assert.deepEqual(words('a $b{')[0], ['{', 'a', '$b']);
});

test('a } inside a word is part of it', () => {
  assert.deepEqual(words('a b} ;')[0], [';', 'a', 'b}']);
});

test('errors as nginx words them, at the line where they occur', () => {
  throwsAt('a {\n;\n', 'unexpected ";"', 2);
  throwsAt('\n{', 'unexpected "{"', 2);
  throwsAt('a\n b }', 'unexpected "}"', 2);
  throwsAt('a "b"c;', 'unexpected "c"', 1);
  throwsAt('a "b"}', 'unexpected "}"', 1);
  throwsAt('a b\n', 'unexpected end of file, expecting ";" or "}"', 2);
  throwsAt('a "b;\n', 'unexpected end of file, expecting ";" or "}"', 2);
  throwsAt('a', 'unexpected end of file, expecting ";" or "}"', 1);
});

test('a quoted word may be followed by ) (the if syntax) and then a new word', () => {
  assert.deepEqual(words('if ($a = "b") {')[0], ['{', 'if', '($a', '=', 'b', ')']);
});

test('the file name is the one given, for messages in included files', () => {
  assert.throws(
    () => tokenize('a "b', 'conf.d/tea.conf'),
    (err: unknown) => err instanceof ConfigError && err.file === 'conf.d/tea.conf',
  );
});

test('CRLF line ends and tabs are whitespace', () => {
  assert.deepEqual(words('a\tb;\r\nc;\r\n'), [[';', 'a', 'b'], [';', 'c'], ['eof']]);
});
