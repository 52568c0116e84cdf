import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { h2HeaderFault, huffmanLength } from '../../src/engine/http/h2-header-limits.ts';

const BUFFERS = { firstBytes: 1024, largeCount: 1, largeBytes: 512 };
const PSEUDO = [':method', 'GET', ':scheme', 'http', ':path', '/t2.html', ':authority', 'localhost'];

describe('HPACK Huffman-coded lengths', () => {
  test("RFC 7541 Appendix C.4's examples", () => {
    assert.equal(huffmanLength('www.example.com'), 12);
    assert.equal(huffmanLength('no-cache'), 6);
    assert.equal(huffmanLength('custom-key'), 8);
    assert.equal(huffmanLength('custom-value'), 9);
  });

  test('the longest codes and the padding to a whole byte', () => {
    assert.equal(huffmanLength(''), 0);
    // 0x0a: 30 bits; 0xff: 26 bits; '\\': 19 bits; 'x': 7 bits
    assert.equal(huffmanLength('\n'), 4);
    assert.equal(huffmanLength('\xff'), 4);
    assert.equal(huffmanLength('\\'), 3);
    assert.equal(huffmanLength('x'.repeat(585)), 512);
    assert.equal(huffmanLength('x'.repeat(586)), 513);
  });
});

describe('an HTTP/2 header block in large_client_header_buffers', () => {
  test("h2_headers.t's list limit: 512 bytes of names and values with the pseudo-headers pass, 513 do not", () => {
    assert.equal(h2HeaderFault([...PSEUDO, 'longname', 'x'.repeat(451)], BUFFERS), null);
    assert.equal(
      h2HeaderFault([...PSEUDO, 'longname', 'x'.repeat(452)], BUFFERS),
      'client sent too large header',
    );
  });

  test('the limit is on the whole list, each cookie crumb counted', () => {
    const crumbs = ['cookie', 'a'.repeat(250), 'cookie', 'b'.repeat(250)];
    assert.equal(h2HeaderFault([...PSEUDO, ...crumbs], BUFFERS), 'client sent too large header');
    assert.equal(h2HeaderFault([...PSEUDO, ...crumbs], { ...BUFFERS, largeCount: 2 }), null);
  });

  test('a field is measured encoded: raw or Huffman-coded, the shorter', () => {
    const big = { ...BUFFERS, largeCount: 4 };
    assert.equal(h2HeaderFault([...PSEUDO, 'x', '{'.repeat(512)], big), null);
    assert.equal(h2HeaderFault([...PSEUDO, 'x', '{'.repeat(513)], big), 'client sent too large header field');
    assert.equal(h2HeaderFault([...PSEUDO, 'x', 'x'.repeat(585)], big), null);
    assert.equal(h2HeaderFault([...PSEUDO, 'x', 'x'.repeat(586)], big), 'client sent too large header field');
    assert.equal(h2HeaderFault([...PSEUDO, '~'.repeat(513), 'v'], big), 'client sent too large header field');
  });

  test('a field too large is found before the list it ends', () => {
    assert.equal(
      h2HeaderFault([...PSEUDO, 'x', '{'.repeat(600)], BUFFERS),
      'client sent too large header field',
    );
  });
});
