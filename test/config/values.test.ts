import assert from 'node:assert/strict';
import { test } from 'node:test';
import { atoi, parseFlag, parseSize, parseTimeMs } from '../../src/engine/scalar-values.ts';

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
