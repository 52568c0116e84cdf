/**
 * expires.ts: `expires` values as ngx_http_parse_expires reads them (with nginx's messages), and the
 * Expires and Cache-Control ngx_http_set_expires gives an answer for each form, on a fixed clock.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type CompiledExpires, expiresFields, parseExpires } from '../../src/engine/http/expires.ts';
import { parseTimeS } from '../../src/engine/scalar-values.ts';
import type { RequestContext } from '../../src/engine/variables/request-context.ts';

const ctx = {} as RequestContext;
const NOW_MS = Date.parse('2026-12-05T10:00:00.250Z');
/** A calendar on UTC days, so that the daily time does not depend on the machine's zone. */
const calendar = {
  httpTime: (epochS: number) => new Date(epochS * 1000).toUTCString(),
  nextLocalTime: (daySeconds: number, nowS: number) => {
    const today = nowS - (nowS % 86400) + daySeconds;
    return today > nowS ? today : today + 86400;
  },
};
const clock = { nowMs: NOW_MS, lastModifiedMs: Number.NaN, ...calendar };

function rule(text: string, kind: 'access' | 'modified' = 'access'): CompiledExpires {
  const read = parseExpires(text, kind);
  if ('error' in read) throw new Error(read.error);
  return { ...read, value: null };
}

describe('expires', () => {
  test('times in whole seconds, with years and months; no milliseconds', () => {
    assert.equal(parseTimeS('1y'), 365 * 86400);
    assert.equal(parseTimeS('1M'), 30 * 86400);
    assert.equal(parseTimeS('1h30m'), 5400);
    assert.equal(parseTimeS('90'), 90);
    for (const bad of ['', '1ms', '1x', '30m1h']) assert.equal(parseTimeS(bad), null, bad);
  });

  test("values and nginx's refusals", () => {
    assert.deepEqual(parseExpires('epoch', 'access'), { kind: 'epoch', timeS: 0 });
    assert.deepEqual(parseExpires('-1h', 'access'), { kind: 'access', timeS: -3600 });
    assert.deepEqual(parseExpires('+1h', 'modified'), { kind: 'modified', timeS: 3600 });
    assert.deepEqual(parseExpires('@15h30m', 'access'), { kind: 'daily', timeS: 55800 });
    assert.deepEqual(parseExpires('epoch', 'modified'), { error: 'invalid value' });
    assert.deepEqual(parseExpires('@1h', 'modified'), {
      error: 'daily time cannot be used with "modified" parameter',
    });
    assert.deepEqual(parseExpires('@25h', 'access'), {
      error: 'daily time value must be less than 24 hours',
    });
  });

  test('each form: Expires and Cache-Control', () => {
    const at = (text: string, kind: 'access' | 'modified' = 'access', lastModifiedMs = Number.NaN) =>
      expiresFields(rule(text, kind), ctx, { ...clock, lastModifiedMs });
    assert.deepEqual(at('epoch'), { expires: 'Thu, 01 Jan 1970 00:00:01 GMT', cacheControl: 'no-cache' });
    assert.deepEqual(at('max'), {
      expires: 'Thu, 31 Dec 2037 23:55:55 GMT',
      cacheControl: 'max-age=315360000',
    });
    assert.equal(at('off'), null);
    assert.deepEqual(at('0'), { expires: 'Sat, 05 Dec 2026 10:00:00 GMT', cacheControl: 'max-age=0' });
    assert.deepEqual(at('1h'), { expires: 'Sat, 05 Dec 2026 11:00:00 GMT', cacheControl: 'max-age=3600' });
    assert.deepEqual(at('-1h'), { expires: 'Sat, 05 Dec 2026 09:00:00 GMT', cacheControl: 'no-cache' });
    const modified = Date.parse('2026-12-05T09:30:00Z');
    assert.deepEqual(at('1h', 'modified', modified), {
      expires: 'Sat, 05 Dec 2026 10:30:00 GMT',
      cacheControl: 'max-age=1800',
    });
    // without a Last-Modified, `modified` counts from now
    assert.deepEqual(at('1h', 'modified'), at('1h'));
  });

  test('a daily time: the next one, max-age counted to it', () => {
    assert.deepEqual(expiresFields(rule('@15h30m'), ctx, clock), {
      expires: 'Sat, 05 Dec 2026 15:30:00 GMT',
      cacheControl: 'max-age=19800',
    });
    assert.deepEqual(expiresFields(rule('@9h'), ctx, clock), {
      expires: 'Sun, 06 Dec 2026 09:00:00 GMT',
      cacheControl: 'max-age=82800',
    });
  });

  test('a value with variables is read per request; a bad or `off` one gives nothing', () => {
    const perRequest = (value: string, kind: 'access' | 'modified' = 'access'): CompiledExpires => ({
      kind,
      timeS: 0,
      value: () => value,
    });
    assert.deepEqual(expiresFields(perRequest('2h'), ctx, clock)?.cacheControl, 'max-age=7200');
    assert.equal(expiresFields(perRequest('off'), ctx, clock), null);
    assert.equal(expiresFields(perRequest('soon'), ctx, clock), null);
    // after `modified`, epoch is not a word but a bad time
    assert.equal(expiresFields(perRequest('epoch', 'modified'), ctx, clock), null);
  });
});
