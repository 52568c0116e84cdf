/**
 * The configuration's regexes on RE2 (src/config/regex.ts): the same matches and captures as the
 * RegExps limitswitch ran before on what nginx users write, PCRE's answer where the two engines
 * differ, non-ASCII bytes, and the refusal of what only a backtracking engine can run.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../src/config/index.ts';
import { compileRegex } from '../../src/config/regex.ts';
import type { RegexCaptures } from '../../src/engine/nginx-regex.ts';

const AT = { file: '/etc/nginx/nginx.conf', line: 12 };

/** What limitswitch compiled every pattern into before: a RegExp, PCRE's spellings translated. */
function before(pattern: string, caseless: boolean): RegExp {
  let source = pattern.replaceAll('(?P<', '(?<');
  let flags = caseless ? 'i' : '';
  if (source.startsWith('(?i)')) {
    source = source.slice(4);
    flags = 'i';
  }
  return new RegExp(source, flags);
}

/** Captures and named captures as plain data (`null`: no match). */
function shape(captures: RegexCaptures | null): unknown {
  if (captures === null) return null;
  return {
    captures: Array.from({ length: captures.length }, (_, i) => captures[i] ?? null),
    groups: captures.groups === undefined ? null : { ...captures.groups },
  };
}

const run = (pattern: string, caseless: boolean, subject: string): unknown =>
  shape(compileRegex(pattern, caseless, AT).exec(subject));

describe('regexes on RE2', () => {
  // pattern, caseless (`~*`), subject: RE2 answers as the RegExp did
  const unchanged: readonly [string, boolean, string][] = [
    ['^/api/(v[0-9]+)/(.*)$', false, '/api/v2/orders/17'],
    ['^/api/(?<ver>v[0-9]+)/', false, '/api/v3/x'],
    ['^/api/(?P<ver>v[0-9]+)/', false, '/api/v3/x'],
    ['^(?<host>[a-z0-9-]+)\\.(?P<zone>example\\.(com|net))$', true, 'API.example.NET'],
    ['(?i)^/TEA', false, '/tea/green'],
    ['^/TEA', true, '/Tea'],
    ['^/TEA', false, '/tea'],
    ['\\.(gif|jpg|jpeg)$', true, '/images/x.JPG'],
    ['^(a)|(b)$', false, 'b'],
    ['^(a+?)(a*)$', false, 'aaa'],
    ['(a|ab)(c|bcd)(d*)', false, 'abcd'],
    ['^(\\w+\\s?)+$', false, 'curl 8'],
    ['\\bbot\\b', true, 'Googlebot bot'],
    ['^\\d{2,3}$', false, '1234'],
    ['^$', false, ''],
    ['^a$', false, 'a\n'],
    // bytes 0x80–0xFF: one character each, folded by `~*`, never \w
    ['^caf\u00e9$', true, 'CAF\u00c9'],
    ['^/(.)(.)$', false, '/\u00e9\u00ff'],
    ['^[^/]+$', false, '\u00e9\u00a0\u0080'],
    ['^\\w+$', false, 'caf\u00e9'],
    ['^[\\x80-\\xff]+$', false, '\u0080\u00c3\u00a9\u00ff'],
    ['caf\u00c3\u00a9', false, '/caf\u00c3\u00a9'],
  ];
  for (const [pattern, caseless, subject] of unchanged) {
    test(`${caseless ? '~*' : '~'} ${pattern} on ${JSON.stringify(subject)}: as before`, () => {
      assert.deepEqual(run(pattern, caseless, subject), shape(before(pattern, caseless).exec(subject)));
    });
  }

  test('test() agrees with exec()', () => {
    for (const [pattern, caseless, subject] of unchanged) {
      const re = compileRegex(pattern, caseless, AT);
      assert.equal(re.test(subject), re.exec(subject) !== null, pattern);
    }
  });

  test('captures of a repeated group keep their last iteration, as in PCRE (the RegExp reset them)', () => {
    assert.deepEqual(run('^(?:(a)|(b)|(c))+$', false, 'abc'), {
      captures: ['abc', 'a', 'b', 'c'],
      groups: null,
    });
  });

  test('`.` matches a carriage return, as in PCRE (the RegExp did not)', () => {
    assert.deepEqual(run('^/a.b$', false, '/a\rb'), { captures: ['/a\rb'], groups: null });
  });

  test('\\s is ASCII: not 0xA0 (as in PCRE), not the vertical tab (PCRE: yes)', () => {
    assert.equal(run('\\s', false, '\u00a0'), null);
    assert.equal(run('\\s', false, '\u000b'), null);
  });

  test("PCRE's spellings the RegExp did not read: \\x{hh}, \\Q…\\E, POSIX classes, inner (?i)", () => {
    assert.equal(compileRegex('^\\x{41}B$', false, AT).test('AB'), true);
    assert.equal(compileRegex('^\\Qa.b\\E$', false, AT).test('a.b'), true);
    assert.equal(compileRegex('^\\Qa.b\\E$', false, AT).test('axb'), false);
    assert.equal(compileRegex('^[[:alpha:]]+$', false, AT).test('Tea'), true);
    assert.equal(compileRegex('^/tea/(?i)green$', false, AT).test('/tea/GREEN'), true);
    assert.equal(compileRegex('^/tea/(?i)green$', false, AT).test('/TEA/green'), false);
  });

  test('inputs that take a backtracking engine seconds are matched', () => {
    assert.equal(compileRegex('^(\\w+\\s?)+$', false, AT).test(`${'a'.repeat(30)}!`), false);
    assert.equal(compileRegex('\\d+\\d+x', false, AT).test('1'.repeat(8000)), false);
    assert.equal(compileRegex('a+b', false, AT).test('a'.repeat(8000)), false);
  });
});

describe('patterns RE2 cannot run are refused with their position', () => {
  const bounded = (construct: string, reason: string) =>
    `${construct} cannot be run in bounded time (RE2: ${reason})`;
  const refusals: readonly [string, string][] = [
    ['^(\\w+)-\\1$', bounded('a backreference', 'invalid escape sequence: \\1')],
    ['^(?<w>\\w+)-\\k<w>$', bounded('a backreference', 'invalid escape sequence: \\k')],
    ['^(?P<w>\\w+)-(?P=w)$', bounded('a backreference', 'invalid perl operator: (?P')],
    ['^/tea(?=/)', bounded('a lookahead assertion', 'invalid perl operator: (?=')],
    ['^/tea(?!/green)', bounded('a lookahead assertion', 'invalid perl operator: (?!')],
    ['(?<=/)tea', bounded('a lookbehind assertion', 'invalid perl operator: (?<=')],
    ['(?<!www\\.)example', bounded('a lookbehind assertion', 'invalid perl operator: (?<!')],
    ['^(?>a+)b', bounded('an atomic group', 'invalid perl operator: (?>')],
    ['^a*+b', bounded('a possessive quantifier', 'bad repetition operator: *+')],
    ['^a{2,}+b', bounded('a possessive quantifier', 'bad repetition operator: {2,}+')],
    ['^(a)?(?(1)b|c)', bounded('a conditional group', 'invalid perl operator: (?(')],
    ['^\\((?:[^()]|(?R))*\\)', bounded('a recursion or subroutine call', 'invalid perl operator: (?R')],
    ['^(?P<p>a)(?P>p)', bounded('a recursion or subroutine call', 'invalid perl operator: (?P')],
    // not a matter of time: RE2's reason alone, its fragment as the pattern writes it
    ['^/(tea', 'missing ): ^/(tea'],
    ['^/tea\\Z', 'invalid escape sequence: \\Z'],
    ['^/[a-z]{1001}$', 'invalid repetition size: {1001}'],
    ['a**', 'bad repetition operator: **'],
  ];
  for (const [pattern, reason] of refusals) {
    test(pattern, () => {
      assert.throws(
        () => compileRegex(pattern, false, AT),
        (err: unknown) => {
          assert.ok(err instanceof ConfigError);
          assert.equal(err.code, 'RL_ERR_CONFIG_INVALID');
          assert.equal(
            err.message,
            `[emerg] invalid regex "${pattern}": ${reason} in /etc/nginx/nginx.conf:12`,
          );
          return true;
        },
      );
    });
  }
});

test('the engine compiles no regex from text: only the config layer does, on RE2', () => {
  const engine = fileURLToPath(new URL('../../src/engine', import.meta.url));
  const files = readdirSync(engine, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 20);
  const compiling = files.filter((f) => /\bRegExp\s*\(/.test(readFileSync(join(engine, f), 'utf8')));
  assert.deepEqual(compiling, []);
});
