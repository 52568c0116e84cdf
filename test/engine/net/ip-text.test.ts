import assert from 'node:assert/strict';
import { test } from 'node:test';
import { INADDR_NONE, inet6Ntop, mappedIpv4, parseIpv4, parseIpv6 } from '../../../src/engine/net/ip-text.ts';

test('parseIpv4 follows ngx_inet_addr', () => {
  assert.equal(parseIpv4('192.0.2.1'), 0xc0000201);
  assert.equal(parseIpv4('010.1.2.3'), 0x0a010203, 'leading zeros are decimal');
  assert.equal(parseIpv4('0010.001.2.3'), 0x0a010203, 'however many');
  assert.equal(parseIpv4('1..2.3'), 0x01000203, 'an empty octet is 0');
  assert.equal(parseIpv4('255.255.255.255'), INADDR_NONE, 'parsed; readers of one address refuse it');
  assert.equal(parseIpv4('10.0.0.1/8', 0, 8), 0x0a000001, 'a slice of the text');
  for (const bad of [
    '',
    '1.2.3',
    '1.2.3.4.',
    '1.2.3.256',
    ' 1.2.3.4',
    '1.2.3.4 ',
    '127.1',
    '0x7f.0.0.1',
    '::1',
  ])
    assert.equal(parseIpv4(bad), -1, bad);
});

test('parseIpv6 follows ngx_inet6_addr', () => {
  const bytes = (text: string) => Array.from(parseIpv6(text) ?? []);
  assert.deepEqual(bytes('2001:db8::1'), [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
  assert.deepEqual(bytes('::'), new Array(16).fill(0));
  assert.deepEqual(bytes('ABCD::'), [0xab, 0xcd, ...new Array(14).fill(0)]);
  assert.deepEqual(bytes('::ffff:1.2.3.4').slice(10), [0xff, 0xff, 1, 2, 3, 4]);
  assert.deepEqual(bytes('::1.2.3.4').slice(10), [0, 0, 1, 2, 3, 4], 'IPv4-compatible, not mapped');
  assert.deepEqual(bytes('::1..2.3').slice(12), [1, 0, 2, 3], 'the tail is read by ngx_inet_addr');
  assert.deepEqual(bytes(':1:2:3:4:5:6:7:8'), bytes('1:2:3:4:5:6:7:8'), 'one leading colon is skipped');
  assert.deepEqual(Array.from(parseIpv6('[::1]:80', 1, 4)!), bytes('::1'), 'a slice of the text');
  for (const bad of [
    '',
    ':',
    '1.2.3.4',
    'fe80::1%eth0',
    '::1.2.3',
    '::ffff:255.255.255.255',
    '1:2:3:4:5:6:7::',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7:1.2.3.4',
    '1::2::3',
    '::00000',
    '::g',
    ' ::1',
    '::1 ',
  ])
    assert.equal(parseIpv6(bad), null, bad);
});

test('inet6Ntop prints as ngx_inet6_ntop', () => {
  const ntop = (text: string) => inet6Ntop(parseIpv6(text)!);
  assert.equal(ntop('2001:0DB8:0000:0000:0000:0000:0000:000A'), '2001:db8::a');
  assert.equal(ntop('1:0:0:2:0:0:0:3'), '1:0:0:2::3', 'the longest zero run is compressed');
  assert.equal(ntop('1:0:0:2:0:0:3:4'), '1::2:0:0:3:4', 'the first of equal runs wins');
  assert.equal(ntop('1:0:2:3:4:5:6:7'), '1:0:2:3:4:5:6:7', 'a single zero group stays');
  assert.equal(ntop('::'), '::');
  assert.equal(ntop('::1'), '::1');
  assert.equal(ntop('1::'), '1::');
  assert.equal(ntop('::ffff:192.0.2.1'), '::ffff:192.0.2.1');
  assert.equal(ntop('::ffff:c000:201'), '::ffff:192.0.2.1', 'IPv4-mapped prints dotted however written');
  assert.equal(ntop('::192.0.2.1'), '::192.0.2.1');
  assert.equal(ntop('::0.0.1.1'), '::101');
  assert.equal(ntop('::0.0.0.1'), '::1');
});

test('mappedIpv4 finds the IPv4 address of ::ffff:a.b.c.d only', () => {
  assert.equal(mappedIpv4(parseIpv6('::ffff:10.0.0.1')!), 0x0a000001);
  assert.equal(mappedIpv4(parseIpv6('::10.0.0.1')!), -1);
  assert.equal(mappedIpv4(parseIpv6('1::ffff:10.0.0.1')!), -1);
});
