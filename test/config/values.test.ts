import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCidr, parseHostPort } from '../../src/config/address.ts';
import { atoi, parseFlag, parseSize, parseTimeMs } from '../../src/config/values.ts';

test('atoi accepts digits only', () => {
  assert.equal(atoi('0'), 0);
  assert.equal(atoi('007'), 7);
  for (const bad of ['', '-1', '+1', '1.5', ' 1', '1e3', '99999999999999999999'])
    assert.equal(atoi(bad), null, bad);
});

test('sizes: bytes, k/K, m/M; no g', () => {
  assert.equal(parseSize('32768'), 32768);
  assert.equal(parseSize('64k'), 65536);
  assert.equal(parseSize('64K'), 65536);
  assert.equal(parseSize('10m'), 10 * 1024 * 1024);
  assert.equal(parseSize('1M'), 1024 * 1024);
  for (const bad of ['', 'k', '1g', '1.5m', '-1k', '1 k']) assert.equal(parseSize(bad), null, bad);
});

test('times in milliseconds, nginx syntax', () => {
  const cases: [string, number][] = [
    ['500ms', 500],
    ['30s', 30_000],
    ['90', 90_000],
    ['1h30m', 5_400_000],
    ['1h 30m', 5_400_000],
    ['1d12h', 129_600_000],
    ['2w', 1_209_600_000],
    ['1m500ms', 60_500],
    ['1s 500ms', 1_500],
    ['0', 0],
  ];
  for (const [text, ms] of cases) assert.equal(parseTimeMs(text), ms, text);
  // months and years are not accepted where nginx parses milliseconds; units go from large to small, once
  for (const bad of ['', 'ms', '1M', '1y', '1x', '30m1h', '1s1s', '1h-', '5 5m'])
    assert.equal(parseTimeMs(bad), null, bad);
});

test('flags are on/off, case-insensitive', () => {
  assert.equal(parseFlag('on'), true);
  assert.equal(parseFlag('OFF'), false);
  assert.equal(parseFlag('yes'), null);
});

test('CIDR blocks and addresses, with the low-bits warning condition', () => {
  assert.deepEqual(parseCidr('10.0.0.0/8'), { family: 4, network: '10.0.0.0/8', lowBits: false });
  assert.deepEqual(parseCidr('10.1.2.3/8'), { family: 4, network: '10.0.0.0/8', lowBits: true });
  assert.deepEqual(parseCidr('192.168.1.1'), { family: 4, network: '192.168.1.1/32', lowBits: false });
  assert.deepEqual(parseCidr('2001:db8::1/32'), { family: 6, network: '2001:db8::/32', lowBits: true });
  assert.deepEqual(parseCidr('::1'), { family: 6, network: '::1/128', lowBits: false });
  for (const bad of [
    '10.0.0.0/33',
    '10.0.0',
    '256.0.0.1',
    'example.com',
    '::1/129',
    '10.0.0.0/',
    '1.2.3.4/x',
  ])
    assert.equal(parseCidr(bad), null, bad);
});

test('host:port as listen and upstream servers read it', () => {
  assert.deepEqual(parseHostPort('8080', true), { host: null, port: 8080 });
  assert.deepEqual(parseHostPort('*:8080', true), { host: null, port: 8080 });
  assert.deepEqual(parseHostPort('127.0.0.1', true), { host: '127.0.0.1', port: null });
  assert.deepEqual(parseHostPort('[::1]:8081', true), { host: '::1', port: 8081 });
  assert.deepEqual(parseHostPort('tea-svc:80', false), { host: 'tea-svc', port: 80 });
  assert.deepEqual(parseHostPort('8080', false), { host: '8080', port: null });
  assert.deepEqual(parseHostPort('0', true), { error: 'invalid port' });
  assert.deepEqual(parseHostPort('a:65536', true), { error: 'invalid port' });
  assert.deepEqual(parseHostPort(':80', true), { error: 'no host' });
  assert.deepEqual(parseHostPort('[::1', true), { error: 'invalid host' });
});
