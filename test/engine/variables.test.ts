import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfigText } from '../../src/config/index.ts';
import { compileRegex } from '../../src/config/regex.ts';
import { parseComplexValue as cv } from '../../src/engine/complex-value.ts';
import type { NginxRegex } from '../../src/engine/nginx-regex.ts';
import { compileGeo } from '../../src/engine/variables/geo-variable.ts';
import { compileMap, type MapEntryDefinition } from '../../src/engine/variables/map-variable.ts';
import { newRequestContext, type RequestFacts } from '../../src/engine/variables/request-context.ts';
import { VariableTable } from '../../src/engine/variables/variable-table.ts';

function context(table: VariableTable, facts: Partial<RequestFacts> = {}, uri = '/coffee/latte') {
  const full: RequestFacts = {
    method: 'GET',
    scheme: 'http',
    target: `${uri}?a=1&Page=2&flag`,
    headers: { 'x-switch': '1', cookie: 'sid=abc; theme=dark', host: 'cafe.example.com' },
    remoteAddr: '192.168.1.254',
    remotePort: 50000,
    serverAddr: '127.0.0.1',
    serverPort: 8080,
    ...facts,
  };
  return newRequestContext(
    full,
    { uri, args: 'a=1&Page=2&flag', hasArgs: true },
    'cafe.example.com',
    'cafe.example.com',
    0,
    table.slots + 16,
  );
}

const exact = (match: string, value: string): MapEntryDefinition => ({
  kind: 'exact',
  match,
  value: cv(value),
});
const regex = (pattern: string, value: string, caseless = false): MapEntryDefinition => ({
  kind: 'regex',
  pattern,
  caseless,
  regex: compileRegex(pattern, caseless, { file: 'test', line: 1 }),
  value: cv(value),
});

describe('variables', () => {
  it('evaluates built-ins, $arg_ (case-insensitive name), $http_ and $cookie_', () => {
    const table = new VariableTable();
    const get = (name: string) => table.compile(cv(`$${name}`));
    const ctx = context(table);
    assert.equal(get('binary_remote_addr')(ctx), '\xc0\xa8\x01\xfe');
    assert.equal(get('remote_addr')(ctx), '192.168.1.254');
    assert.equal(get('arg_page')(ctx), '2');
    assert.equal(get('arg_flag')(ctx), '');
    assert.equal(get('http_x_switch')(ctx), '1');
    assert.equal(get('cookie_theme')(ctx), 'dark');
    assert.equal(get('request_uri')(ctx), '/coffee/latte?a=1&Page=2&flag');
    assert.equal(table.compile(cv('$server_name:$uri'))(ctx), 'cafe.example.com:/coffee/latte');
  });

  it('is 16 bytes of $binary_remote_addr for IPv6', () => {
    const table = new VariableTable();
    const ctx = context(table, { remoteAddr: '2001:db8::1' });
    const value = table.compile(cv('$binary_remote_addr'))(ctx);
    assert.equal(value.length, 16);
    assert.equal(value.charCodeAt(0), 0x20);
    assert.equal(value.charCodeAt(15), 1);
  });

  it('keeps IPv4-mapped and IPv4-compatible $binary_remote_addr apart, and drops a zone id', () => {
    const table = new VariableTable();
    const binary = (remoteAddr: string) =>
      table.compile(cv('$binary_remote_addr'))(context(table, { remoteAddr }));
    const bytes = (...b: number[]) => String.fromCharCode(...b);
    assert.equal(binary('::ffff:1.2.3.4'), bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4));
    assert.equal(binary('::1.2.3.4'), bytes(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4));
    assert.equal(binary('fe80::1%eth0'), binary('fe80::1'));
    assert.equal(binary('unix:'), 'unix:');
  });

  it('rejects unknown variables with nginx’s message', () => {
    assert.throws(() => new VariableTable().compile(cv('$nope')), {
      code: 'RL_ERR_UNKNOWN_VARIABLE',
      message: 'unknown "nope" variable',
    });
    assert.throws(() => new VariableTable().compile(cv('$nope')), { message: 'unknown "nope" variable' });
  });
});

describe('map', () => {
  it('the seed pattern: "1" → $binary_remote_addr, anything else → "" (not accounted)', () => {
    const table = new VariableTable();
    table.declare('limit_key');
    table.define(
      'limit_key',
      compileMap(
        {
          source: cv('$http_x_switch'),
          variable: 'limit_key',
          hostnames: false,
          volatile: false,
          defaultValue: cv(''),
          entries: [exact('1', '$binary_remote_addr')],
        },
        table,
      ),
    );
    const key = table.compile(cv('$limit_key'));
    assert.equal(key(context(table)), '\xc0\xa8\x01\xfe');
    assert.equal(key(context(table, { headers: { 'x-switch': '0' } })), '');
    assert.equal(key(context(table, { headers: {} })), '');
    assert.equal(key(context(table, { headers: { 'x-switch': ' 1' } })), '');
  });

  it('matches exact keys case-insensitively, then regexes in order with captures, never regexes for ""', () => {
    const table = new VariableTable();
    const map = compileMap(
      {
        source: cv('$http_x_v'),
        variable: 'out',
        hostnames: false,
        volatile: false,
        defaultValue: cv('dflt'),
        entries: [
          exact('abc', 'exact'),
          regex('^(a)(.*)$', 'first:$2'),
          regex('^A', 'never'),
          regex('^$', 'empty'),
        ],
      },
      table,
    );
    const of = (v: string | undefined) => map(context(table, { headers: { 'x-v': v } }));
    assert.equal(of('ABC'), 'exact');
    assert.equal(of('axyz'), 'first:xyz');
    assert.equal(of('Axyz'), 'never');
    assert.equal(of(''), 'dflt');
    assert.equal(of('zzz'), 'dflt');
  });

  it("finds a regex's captures only when a value reads one, and once", () => {
    const compiled = compileRegex('^(\\w+)/(\\d+)', false, { file: 'test', line: 1 });
    let execs = 0;
    const counted: NginxRegex = {
      test: (subject) => compiled.test(subject),
      exec: (subject) => {
        execs++;
        return compiled.exec(subject);
      },
    };
    const entry = (value: string): MapEntryDefinition => ({
      kind: 'regex',
      pattern: '^(\\w+)/(\\d+)',
      caseless: false,
      regex: counted,
      value: cv(value),
    });
    const table = new VariableTable();
    const map = (value: string) =>
      compileMap(
        {
          source: cv('$http_x_v'),
          variable: 'out',
          hostnames: false,
          volatile: false,
          defaultValue: cv('none'),
          entries: [entry(value)],
        },
        table,
      );
    const plain = map('matched');
    const both = map('$2-$1-$2');
    assert.equal(plain(context(table, { headers: { 'x-v': 'tea/42' } })), 'matched');
    assert.equal(execs, 0);
    assert.equal(both(context(table, { headers: { 'x-v': 'tea/42' } })), '42-tea-42');
    assert.equal(execs, 1);
    assert.equal(both(context(table, { headers: { 'x-v': 'tea' } })), 'none');
    assert.equal(execs, 1);
  });

  it('hostnames: exact, then longest *.suffix, then prefix.*, trailing dot stripped', () => {
    const table = new VariableTable();
    const map = compileMap(
      {
        source: cv('$http_x_h'),
        variable: 'out',
        hostnames: true,
        volatile: false,
        defaultValue: null,
        entries: [
          exact('*.example.com', 'wild'),
          exact('*.a.example.com', 'longer'),
          exact('mail.*', 'tail'),
          exact('.example.org', 'dot'),
        ],
      },
      table,
    );
    const of = (v: string) => map(context(table, { headers: { 'x-h': v } }));
    assert.equal(of('www.example.com'), 'wild');
    assert.equal(of('x.a.example.com.'), 'longer');
    assert.equal(of('mail.example.net'), 'tail');
    assert.equal(of('example.org'), 'dot');
    assert.equal(of('www.example.org'), 'dot');
    assert.equal(of('example.com'), '');
  });
});

describe('geo', () => {
  it('gives the value of the most specific range, else the default', () => {
    const table = new VariableTable();
    const geo = compileGeo(
      {
        address: cv('$remote_addr'),
        variable: 'allow',
        defaultValue: '1',
        entries: [
          { cidr: '192.168.0.0/16', value: '0' },
          { cidr: '192.168.1.254/32', value: '2' },
        ],
      },
      table,
    );
    assert.equal(geo(context(table)), '2');
    assert.equal(geo(context(table, { remoteAddr: '192.168.9.9' })), '0');
    assert.equal(geo(context(table, { remoteAddr: '8.8.8.8' })), '1');
  });

  it('`delete` takes a network written above out again (nginx: 127.0.0.1 then gets the /8 value)', () => {
    const warnings: string[] = [];
    const http = loadConfigText(
      `events {}\nhttp {\n  geo $g {\n    default d;\n    127.0.0.0/8 a;\n    127.0.0.1/32 b;\n` +
        `    delete 127.0.0.1/32;\n    delete 10.0.0.0/8;\n    delete 127.0.0.1/24;\n    10.0.0.0/8 c;\n  }\n}\n`,
      'nginx.conf',
      { onWarning: (w) => warnings.push(`${w.text} in ${w.file}:${w.line}`) },
    ).http;
    assert.deepEqual(
      http.geos[0]!.entries.map((e) => `${e.cidr} ${e.value}`),
      ['127.0.0.0/8 a', '10.0.0.0/8 c'],
    );
    assert.deepEqual(warnings, [
      'no network "10.0.0.0/8" to delete in nginx.conf:8',
      'low address bits of 127.0.0.1/24 are meaningless in nginx.conf:9',
      'no network "127.0.0.1/24" to delete in nginx.conf:9',
    ]);
    const table = new VariableTable();
    const geo = compileGeo(http.geos[0]!, table);
    assert.equal(geo(context(table, { remoteAddr: '127.0.0.1' })), 'a');
    assert.equal(geo(context(table, { remoteAddr: '10.1.1.1' })), 'c');
  });
});
