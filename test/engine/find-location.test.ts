import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileRegex } from '../../src/config/regex.ts';
import {
  findLocation,
  type LocationMatch,
  type RoutableLocation,
} from '../../src/engine/http/find-location.ts';

interface Loc extends RoutableLocation<Loc> {
  readonly name: string;
}

function loc(match: LocationMatch, pattern: string, locations: Loc[] = []): Loc {
  const regex =
    match === '~' || match === '~*' ? compileRegex(pattern, match === '~*', { file: 'test', line: 1 }) : null;
  return { name: `${match} ${pattern}`, match, pattern, regex, locations };
}

const tree: Loc[] = [
  loc('=', '/'),
  loc('prefix', '/'),
  loc('prefix', '/documents/'),
  loc('^~', '/images/'),
  loc('~*', '\\.(gif|jpg|jpeg)$'),
  loc('prefix', '/api/', [loc('prefix', '/api/v2/'), loc('~', '^/api/.*\\.json$')]),
  loc('prefix', '/coffe'),
];

const at = (uri: string): string | undefined => findLocation(tree, uri)?.name;

describe('location selection (ngx_http_core_find_location, the docs example)', () => {
  it('prefers an exact match', () => assert.equal(at('/'), '= /'));
  it('takes the longest prefix when no regex matches', () => {
    assert.equal(at('/index.html'), 'prefix /');
    assert.equal(at('/documents/document.html'), 'prefix /documents/');
    assert.equal(at('/coffee/latte'), 'prefix /coffe');
  });
  it('stops at ^~ without trying regexes', () => assert.equal(at('/images/1.gif'), '^~ /images/'));
  it('lets the first matching regex beat a plain prefix', () =>
    assert.equal(at('/documents/1.jpg'), '~* \\.(gif|jpg|jpeg)$'));
  it('searches nested locations, their regexes first', () => {
    assert.equal(at('/api/v2/x'), 'prefix /api/v2/');
    assert.equal(at('/api/v2/x.json'), '~ ^/api/.*\\.json$');
    assert.equal(at('/api/x.JPG'), '~* \\.(gif|jpg|jpeg)$');
  });
  it('returns null when nothing matches', () =>
    assert.equal(findLocation([loc('prefix', '/tea')], '/coffee'), null));
});
