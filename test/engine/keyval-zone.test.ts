import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyvalZone } from '../../src/engine/keyval/keyval-zone.ts';

const forever = (value: string) => ({ value, expireAtMs: null });

describe('keyval zones', () => {
  it('type=string matches exactly and case-sensitively', () => {
    const zone = new KeyvalZone('z', 'string', null);
    zone.set('cafe.example.com', forever('1'));
    assert.equal(zone.lookup('cafe.example.com', 0), '1');
    assert.equal(zone.lookup('CAFE.example.com', 0), '');
    assert.equal(zone.lookup('cafe.example.co', 0), '');
  });

  it('type=prefix: the longest record key that is a prefix of the search key wins', () => {
    const zone = new KeyvalZone('limitreq_uri', 'prefix', null);
    zone.set('/coffee', forever('1'));
    zone.set('/tea', forever('0'));
    zone.set('/coffee/decaf', forever('0'));
    assert.equal(zone.lookup('/coffee/latte', 0), '1');
    assert.equal(zone.lookup('/coffee/decaf/x', 0), '0');
    assert.equal(zone.lookup('/coffee', 0), '1');
    assert.equal(zone.lookup('/coffe', 0), '');
    assert.equal(zone.lookup('/tea', 0), '0');
    zone.delete('/coffee/decaf');
    assert.equal(zone.lookup('/coffee/decaf/x', 0), '1');
  });

  it('type=ip: the most specific CIDR containing the address wins; IPv6 and mapped IPv4 too', () => {
    const zone = new KeyvalZone('deny', 'ip', null);
    zone.set('10.0.0.0/8', forever('wide'));
    zone.set('10.1.0.0/16', forever('narrow'));
    zone.set('192.168.1.7', forever('host'));
    zone.set('2001:db8::/32', forever('v6'));
    assert.equal(zone.lookup('10.1.2.3', 0), 'narrow');
    assert.equal(zone.lookup('10.2.2.3', 0), 'wide');
    assert.equal(zone.lookup('192.168.1.7', 0), 'host');
    assert.equal(zone.lookup('192.168.1.8', 0), '');
    assert.equal(zone.lookup('2001:db8:1::5', 0), 'v6');
    assert.equal(zone.lookup('::ffff:10.1.0.1', 0), 'narrow');
    assert.equal(zone.lookup('not-an-ip', 0), '');
    assert.equal(zone.validKey('10.0.0.0/33'), false);
    assert.equal(zone.validKey('cafe'), false);
    assert.equal(zone.validKey('::1'), true);
  });

  it('hides a record once its expiry time has come and removes it on expire()', () => {
    const zone = new KeyvalZone('z', 'string', 1000);
    zone.set('a', { value: '1', expireAtMs: 5000 });
    zone.set('b', forever('2'));
    assert.equal(zone.lookup('a', 4999), '1');
    assert.equal(zone.lookup('a', 5000), '');
    assert.deepEqual(zone.expire(5000), ['a']);
    assert.equal(zone.size, 1);
  });
});
