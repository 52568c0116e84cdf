import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isIpOrCidr, isLoopback, parseIpRange } from '../../src/control-plane/ip-text.ts';

describe('IP text', () => {
  it('accepts addresses and CIDR ranges nginx reads', () => {
    for (const text of [
      '10.0.0.1',
      '0.0.0.0/0',
      '10.1.2.3/8',
      '::',
      '::1',
      '2001:db8::/32',
      '::ffff:1.2.3.4',
      '::/128',
    ]) {
      assert.equal(isIpOrCidr(text), true, text);
    }
  });

  it('refuses shorthand, zone ids, bad prefixes and names', () => {
    for (const text of [
      '',
      '127.1',
      '0x7f.0.0.1',
      '10.0.0.256',
      '1.2.3.4/33',
      '::/129',
      'fe80::1%eth0',
      '1.2.3.4/',
      '1.2.3.4/08a',
      'localhost',
    ]) {
      assert.equal(isIpOrCidr(text), false, text);
    }
  });

  it('ranges match IPv4, IPv6 and IPv4-mapped clients', () => {
    const v4 = parseIpRange('10.0.0.0/8');
    assert.equal(v4.contains('10.200.1.1'), true);
    assert.equal(v4.contains('::ffff:10.1.1.1'), true);
    assert.equal(v4.contains('11.0.0.1'), false);
    assert.equal(v4.contains('not an address'), false);
    assert.equal(parseIpRange('2001:db8::/32').contains('2001:db8::5'), true);
    assert.equal(parseIpRange('192.168.1.7').contains('192.168.1.8'), false);
    assert.throws(() => parseIpRange('10.0.0.0/40'), { message: 'invalid address or CIDR "10.0.0.0/40"' });
  });

  it('loopback', () => {
    assert.equal(isLoopback('127.0.0.1'), true);
    assert.equal(isLoopback('127.9.9.9'), true);
    assert.equal(isLoopback('::1'), true);
    assert.equal(isLoopback('::ffff:127.0.0.1'), true);
    assert.equal(isLoopback('10.0.0.1'), false);
  });
});
