/**
 * The pure rules of a file answer, as nginx 1.22's filters apply them: its date reading
 * (ngx_parse_http_time), the not_modified filter's preconditions, the range filter's parsing, the
 * path a URI maps to and the extension that types it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_INDEX, NGINX_DEFAULT_TYPES } from '../../../src/engine/http/static-files.ts';
import { parseRanges } from '../../../src/replica/http/static/byte-ranges.ts';
import { contentTypeOf, documentPath, extensionOf } from '../../../src/replica/http/static/document-path.ts';
import { etagOf, fileAnswer } from '../../../src/replica/http/static/file-answer.ts';
import { NO_TIME, parseHttpTime } from '../../../src/replica/http/static/http-time.ts';
import { etagListHas, preconditions } from '../../../src/replica/http/static/preconditions.ts';

const T = 1_700_000_000;

test('dates: the three formats nginx reads, and what it refuses', () => {
  assert.equal(parseHttpTime('Tue, 14 Nov 2023 22:13:20 GMT'), T);
  assert.equal(parseHttpTime('Tuesday, 14-Nov-23 22:13:20 GMT'), T);
  assert.equal(parseHttpTime('Tue Nov 14 22:13:20 2023'), T);
  // nothing after the time is read
  assert.equal(parseHttpTime('Tue, 14 Nov 2023 22:13:20 whatever'), T);
  assert.equal(parseHttpTime('Tue, 29 Feb 2023 00:00:00 GMT'), NO_TIME);
  assert.equal(parseHttpTime('Tue, 14 Nov 2023 24:00:00 GMT'), NO_TIME);
  assert.equal(parseHttpTime('yesterday'), NO_TIME);
});

test('preconditions: 412 before 304, exact dates, weak ETag lists', () => {
  const v = { mtimeS: T, etag: etagOf(T, 12) };
  const h = (headers: Record<string, string>) => (name: string) => headers[name];
  const date = new Date(T * 1000).toUTCString();
  assert.equal(preconditions(h({}), v), 200);
  assert.equal(preconditions(h({ 'if-modified-since': date }), v), 304);
  // a later date is not the file's: nginx's `if_modified_since exact`
  assert.equal(preconditions(h({ 'if-modified-since': new Date((T + 1) * 1000).toUTCString() }), v), 200);
  assert.equal(preconditions(h({ 'if-modified-since': date, 'if-none-match': '"other"' }), v), 200);
  assert.equal(preconditions(h({ 'if-none-match': `"a" , W/${v.etag}` }), v), 304);
  assert.equal(preconditions(h({ 'if-none-match': '*' }), v), 304);
  assert.equal(preconditions(h({ 'if-match': '"a"', 'if-none-match': '*' }), v), 412);
  assert.equal(preconditions(h({ 'if-unmodified-since': 'garbage' }), v), 412);
  assert.equal(preconditions(h({ 'if-unmodified-since': date }), v), 200);
  // If-Match compares strongly: a weak tag is not the file's
  assert.equal(etagListHas(`W/${v.etag}`, v.etag, false), false);
  assert.equal(etagListHas(`${v.etag}x`, v.etag, true), false);
});

test('ranges: nginx parsing of single, suffix, open, several, unsatisfiable and too large', () => {
  assert.deepEqual(parseRanges('bytes=2-5', 20), { kind: 'partial', ranges: [{ start: 2, end: 6 }] });
  assert.deepEqual(parseRanges('bytes=-3', 20), { kind: 'partial', ranges: [{ start: 17, end: 20 }] });
  assert.deepEqual(parseRanges('bytes=15-', 20), { kind: 'partial', ranges: [{ start: 15, end: 20 }] });
  assert.deepEqual(parseRanges('bytes= 0 - 1 , 4-', 6), {
    kind: 'partial',
    ranges: [
      { start: 0, end: 2 },
      { start: 4, end: 6 },
    ],
  });
  assert.deepEqual(parseRanges('bytes=5-100', 20), { kind: 'partial', ranges: [{ start: 5, end: 20 }] });
  assert.deepEqual(parseRanges('bytes=30-', 20), { kind: 'unsatisfiable' });
  assert.deepEqual(parseRanges('bytes=5-2', 20), { kind: 'unsatisfiable' });
  assert.deepEqual(parseRanges('bytes=0-0,-0', 20), { kind: 'partial', ranges: [{ start: 0, end: 1 }] });
  assert.deepEqual(parseRanges('bytes=1-a', 20), { kind: 'unsatisfiable' });
  assert.deepEqual(parseRanges('bytes=0-15,5-19', 20), { kind: 'whole' });
  assert.deepEqual(parseRanges('bytes=99999999999999999999-', 20), { kind: 'unsatisfiable' });
});

test('a file answer: 304 keeps the validators only, 416 names the size, HEAD-free rules', () => {
  const file = { size: 20, mtimeS: T, contentType: 'text/plain' };
  const etag = etagOf(T, 20);
  assert.equal(etag, `"6553f100-14"`);
  const none = (): undefined => undefined;
  assert.deepEqual(fileAnswer(none, file).body, [{ start: 0, end: 20 }]);
  const notModified = fileAnswer((n) => (n === 'if-none-match' ? etag : undefined), file);
  assert.deepEqual(notModified, {
    status: 304,
    headers: ['Last-Modified', new Date(T * 1000).toUTCString(), 'ETag', etag],
    body: [],
  });
  const unsatisfiable = fileAnswer((n) => (n === 'range' ? 'bytes=40-' : undefined), file);
  assert.deepEqual(unsatisfiable, { status: 416, headers: ['Content-Range', 'bytes */20'], body: null });
});

test('paths and types: root, alias, regex alias; the extension of the last segment only', () => {
  assert.equal(documentPath({ path: '/srv/www', alias: null }, '/a/b.html'), '/srv/www/a/b.html');
  assert.equal(documentPath({ path: '/srv/img/', alias: 5 }, '/img/x.png'), '/srv/img/x.png');
  assert.equal(documentPath({ path: '/srv/one.txt', alias: 'whole' }, '/anything'), '/srv/one.txt');
  assert.equal(extensionOf('/a.b/c'), '');
  assert.equal(extensionOf('/a/.hidden'), '');
  assert.equal(extensionOf('/a/x.tar.GZ'), 'GZ');
  const files = {
    documentRoot: { path: '/', alias: null },
    index: DEFAULT_INDEX,
    types: NGINX_DEFAULT_TYPES,
    defaultType: 'text/plain',
  };
  assert.equal(contentTypeOf(files, '/x.HTML'), 'text/html');
  assert.equal(contentTypeOf(files, '/x.css'), 'text/plain');
});
