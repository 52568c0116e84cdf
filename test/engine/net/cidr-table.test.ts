import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AccessList } from '../../../src/engine/net/access-list.ts';
import { cidrText } from '../../../src/engine/net/address-text.ts';
import { CidrTable, parseRange } from '../../../src/engine/net/cidr-table.ts';

test('parseRange: IPv4-mapped ranges of /96 or longer are the IPv4 range inside', () => {
  const range = (text: string) => {
    const parsed = parseRange(text);
    return parsed && cidrText(parsed);
  };
  assert.equal(range('::ffff:10.0.0.0/104'), '10.0.0.0/8');
  assert.equal(range('::ffff:1.2.3.4/120'), '1.2.3.0/24');
  assert.equal(range('::ffff:1.2.3.4'), '1.2.3.4/32');
  assert.equal(range('::ffff:1.2.3.4/95'), '::fffe:0:0/95', 'shorter: an IPv6 range');
  assert.equal(range('::1.2.3.4'), '::1.2.3.4/128', 'IPv4-compatible is not mapped');
  assert.equal(range('1.2.3'), null);
});

test('CidrTable: longest prefix wins; lookups take client addresses as sockets give them', () => {
  const table = new CidrTable<string>();
  assert.equal(table.set('10.0.0.0/8', 'wide'), true);
  assert.equal(table.set('::ffff:10.1.0.0/112', 'mapped'), true);
  assert.equal(table.set('fe80::/10', 'link-local'), true);
  assert.equal(table.set('255.255.255.255', 'broadcast'), true);
  for (const bad of ['', '1.2.3', '10.0.0.0/33', 'fe80::1%eth0', ' 10.0.0.1'])
    assert.equal(table.set(bad, 'x'), false);
  assert.equal(table.size, 4);
  assert.equal(table.lookup('10.1.2.3'), 'mapped', 'an IPv4 client in a mapped range');
  assert.equal(table.lookup('::ffff:10.2.0.1'), 'wide', 'a mapped client in an IPv4 range');
  assert.equal(table.lookup('010.2.0.1'), 'wide', 'leading zeros read as nginx reads them');
  assert.equal(table.lookup('fe80::1%eth0'), 'link-local', 'the zone id node appends is ignored');
  assert.equal(table.lookup('255.255.255.255'), 'broadcast');
  assert.equal(table.lookup('::10.2.0.1'), undefined, 'IPv4-compatible is IPv6');
  assert.equal(table.lookup('garbage'), undefined);
  assert.equal(table.delete('::ffff:10.1.0.0/112'), true);
  assert.equal(table.lookup('10.1.2.3'), 'wide');
  assert.equal(table.size, 3);
});

test('AccessList: first match decides; mapped clients meet IPv4 rules', () => {
  const list = new AccessList([
    { action: 'allow', from: '::ffff:10.0.0.0/104' },
    { action: 'allow', from: 'fe80::/10' },
    { action: 'deny', from: 'all' },
  ]);
  assert.equal(list.allows('10.9.9.9'), true);
  assert.equal(list.allows('::ffff:10.9.9.9'), true);
  assert.equal(list.allows('fe80::1%eth0'), true);
  assert.equal(list.allows('11.0.0.1'), false);
  assert.equal(list.allows('not an address'), false, 'only `all` matches it');
  assert.throws(() => new AccessList([{ action: 'deny', from: '1.2.3' }]), {
    name: 'RangeError',
    message: 'invalid parameter "1.2.3"',
  });
});
