/** nginx's log times (`$time_local`, `$time_iso8601`): the same instant in both shapes, local zone. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { timeIso8601, timeLocal } from '../../../src/replica/http/contract/log-time.ts';

test('$time_local and $time_iso8601 print one instant as nginx does', () => {
  const at = new Date(2026, 0, 5, 7, 8, 9);
  const local = timeLocal(at);
  const iso = timeIso8601(at);
  assert.match(local, /^05\/Jan\/2026:07:08:09 [+-]\d{4}$/);
  assert.match(iso, /^2026-01-05T07:08:09[+-]\d{2}:\d{2}$/);
  assert.equal(local.slice(-5), iso.slice(-6).replace(':', ''), 'the same zone offset');
});
