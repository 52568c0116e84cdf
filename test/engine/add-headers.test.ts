/** add-headers.ts: which `add_header` lines an answer gets, and how they meet the answer's fields. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addedFields, addFields, compileAddHeader } from '../../src/engine/http/add-headers.ts';
import type { RequestContext } from '../../src/engine/variables/request-context.ts';

const ctx = {} as RequestContext;
const NO_CLOCK = {
  nowMs: 0,
  lastModifiedMs: Number.NaN,
  httpTime: () => 'never',
  nextLocalTime: () => 0,
};
const line = (name: string, value: string, always = false) =>
  compileAddHeader(name, value === '' ? null : () => value, always);

/** The head after the lines met it, for an answer with `status`. */
function head(status: number, fields: string[], lines: ReturnType<typeof line>[], own = false): string[] {
  const headers = [...fields];
  addFields(headers, addedFields({ addHeaders: lines, expires: null }, ctx, status), {
    filterLastModified: own,
    fieldValue: (v) => v,
  });
  return headers;
}

describe('add_header fields', () => {
  test('without always only the statuses nginx deems safe; with always every status', () => {
    const lines = [line('X-A', 'a'), line('X-B', 'b', true)];
    for (const status of [200, 201, 204, 206, 301, 302, 303, 304, 307, 308])
      assert.deepEqual(head(status, [], lines), ['X-A', 'a', 'X-B', 'b'], `${status}`);
    for (const status of [101, 202, 300, 305, 400, 404, 499, 500, 502, 503])
      assert.deepEqual(head(status, [], lines), ['X-B', 'b'], `${status}`);
  });

  test('an empty value adds nothing; a name present already is added again', () => {
    const lines = [line('X-A', ''), line('Cache-Control', 'no-store'), line('x-a', 'again')];
    assert.deepEqual(head(200, ['Cache-Control', 'max-age=1', 'X-A', 'one'], lines), [
      'Cache-Control',
      'max-age=1',
      'X-A',
      'one',
      'Cache-Control',
      'no-store',
      'x-a',
      'again',
    ]);
  });

  test('ETag and Last-Modified replace the answer’s field in its place; empty removes it', () => {
    const fields = ['Etag', '"theirs"', 'X-Up', 'u', 'last-modified', 'Mon, 02 Jan 2023 03:04:05 GMT'];
    assert.deepEqual(head(200, fields, [line('ETag', '"ours"'), line('Last-Modified', '')]), [
      'ETag',
      '"ours"',
      'X-Up',
      'u',
    ]);
    // a file's Last-Modified is the header filter's: the line's goes where added fields go
    const file = ['Last-Modified', 'Mon, 02 Jan 2023 03:04:05 GMT', 'ETag', '"f"'];
    const lm = [line('Last-Modified', 'Thu, 01 Jan 1970 00:00:01 GMT'), line('ETag', '"g"')];
    assert.deepEqual(head(200, file, lm, true), [
      'ETag',
      '"g"',
      'Last-Modified',
      'Thu, 01 Jan 1970 00:00:01 GMT',
    ]);
    // none to replace: added, and a second line replaces the first
    assert.deepEqual(head(200, [], [line('ETag', '"1"'), line('etag', '"2"'), line('Last-Modified', '')]), [
      'etag',
      '"2"',
    ]);
  });

  test("expires: the answer's first Cache-Control written over, the others dropped, its last Expires replaced; add_header after", () => {
    const filters = {
      addHeaders: [line('Cache-Control', 'private')],
      expires: { kind: 'epoch' as const, timeS: 0, value: null },
    };
    const fields = ['Cache-Control', 'a', 'Expires', 'x', 'X-Up', 'u', 'cache-control', 'b', 'Expires', 'y'];
    const added = addedFields(filters, ctx, 200, NO_CLOCK);
    addFields(fields, added, { filterLastModified: false, fieldValue: (v) => v });
    assert.deepEqual(fields, [
      'Cache-Control',
      'no-cache',
      'Expires',
      'x',
      'X-Up',
      'u',
      'Expires',
      'Thu, 01 Jan 1970 00:00:01 GMT',
      'Cache-Control',
      'private',
    ]);
    // not on an answer nginx deems unsafe
    assert.deepEqual(addedFields(filters, ctx, 404, NO_CLOCK), []);
  });
});
