import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  inet6Ntop,
  normalizePeerAddress,
  parseAddr,
  parseAddrPort,
  parseIpv4,
  parseIpv6,
} from '../../../src/replica/http/ip-text.ts';

test('parseIpv4 follows ngx_inet_addr', () => {
  assert.equal(parseIpv4('192.0.2.1'), 0xc0000201);
  assert.equal(parseIpv4('010.1.2.3'), 0x0a010203, 'leading zeros are decimal');
  assert.equal(parseIpv4('1..2.3'), 0x01000203, 'an empty octet is 0');
  assert.equal(parseIpv4('1.2.3'), -1);
  assert.equal(parseIpv4('1.2.3.256'), -1);
  assert.equal(parseIpv4('255.255.255.255'), -1, 'INADDR_NONE');
  assert.equal(parseIpv4(' 1.2.3.4'), -1);
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
  assert.equal(ntop('::192.0.2.1'), '::192.0.2.1');
  assert.equal(ntop('::0.0.1.1'), '::101');
  assert.equal(ntop('::0.0.0.1'), '::1');
});

test('parseIpv6 refuses zone ids and bad tails', () => {
  assert.equal(parseIpv6('fe80::1%eth0'), null);
  assert.equal(parseIpv6('::1.2.3'), null);
  assert.equal(parseIpv6('1.2.3.4'), null);
  assert.equal(parseIpv6(''), null);
});

test('parseAddr keeps IPv4-mapped addresses as IPv6 text but matchable as IPv4', () => {
  const mapped = parseAddr('::ffff:10.0.0.1')!;
  assert.equal(mapped.text, '::ffff:10.0.0.1');
  assert.equal(mapped.v4, 0x0a000001);
  assert.notEqual(mapped.v6, null);
  const plain = parseAddr('2001:db8::1')!;
  assert.equal(plain.v4, -1);
});

test('parseAddrPort follows ngx_parse_addr_port', () => {
  assert.deepEqual(
    [parseAddrPort('192.0.2.1:8080')?.text, parseAddrPort('192.0.2.1:8080')?.port],
    ['192.0.2.1', 8080],
  );
  assert.equal(parseAddrPort('[2001:db8::1]:443')?.port, 443);
  assert.equal(parseAddrPort('::1')?.text, '::1', 'an IPv6 address is not split at a colon');
  assert.equal(parseAddrPort('192.0.2.1:0'), null);
  assert.equal(parseAddrPort('192.0.2.1:65536'), null);
  assert.equal(parseAddrPort('[2001:db8::1]'), null);
  assert.equal(parseAddrPort('host:80'), null);
});

test('normalizePeerAddress strips the IPv4-mapped prefix of dual-stack sockets only', () => {
  assert.equal(normalizePeerAddress('::ffff:127.0.0.1'), '127.0.0.1');
  assert.equal(normalizePeerAddress('::ffff:7f00:1'), '::ffff:7f00:1');
  assert.equal(normalizePeerAddress('::1'), '::1');
  assert.equal(normalizePeerAddress('10.0.0.1'), '10.0.0.1');
  assert.equal(normalizePeerAddress(undefined), '');
});
