import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRequestTarget } from '../../src/engine/http/uri.ts';

describe('$uri normalisation', () => {
  const uri = (target: string) => parseRequestTarget(target)?.uri ?? null;
  it('decodes percent escapes into bytes', () => {
    assert.equal(uri('/caf%C3%A9'), '/caf\xc3\xa9');
    assert.equal(uri('/a%2Fb'), '/a/b');
  });
  it('merges slashes and resolves dot segments', () => {
    assert.equal(uri('//coffee///latte'), '/coffee/latte');
    assert.equal(uri('/tea/./green/../black'), '/tea/black');
    assert.equal(uri('/tea/..'), '/');
    assert.equal(uri('/tea/.'), '/tea/');
  });
  it('answers 400 (null) for a bad escape, NUL or climbing above the root', () => {
    assert.equal(uri('/a%zz'), null);
    assert.equal(uri('/a%00'), null);
    assert.equal(uri('/..'), null);
    assert.equal(uri('coffee'), null);
  });
  it('keeps args raw and notes the question mark', () => {
    assert.deepEqual(parseRequestTarget('/a?x=%41&y'), { uri: '/a', args: 'x=%41&y', hasArgs: true });
    assert.deepEqual(parseRequestTarget('/a?'), { uri: '/a', args: '', hasArgs: true });
    assert.deepEqual(parseRequestTarget('http://h:8080/p?q'), { uri: '/p', args: 'q', hasArgs: true });
  });
  it('a fragment ends the path, and the args after "?" (a "?" inside it is no args)', () => {
    assert.deepEqual(parseRequestTarget('/a/b/..#f'), { uri: '/a/', args: '', hasArgs: false });
    assert.deepEqual(parseRequestTarget('/a?x=1#f'), { uri: '/a', args: 'x=1', hasArgs: true });
    assert.deepEqual(parseRequestTarget('/a#f?x=1'), { uri: '/a', args: '', hasArgs: false });
    assert.deepEqual(parseRequestTarget('/a%23b'), { uri: '/a#b', args: '', hasArgs: false });
  });
});
