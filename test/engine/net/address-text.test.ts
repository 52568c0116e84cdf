import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  cidrMatch,
  cidrText,
  isLoopback,
  listenAddressText,
  normalizePeerAddress,
  parseAddr,
  parseAddrPort,
  parseCidr,
  parseClientAddr,
  parseHostPort,
} from '../../../src/engine/net/address-text.ts';
import { NGINX_BIN } from '../../helpers/nginx.ts';

test('parseAddr keeps IPv4-mapped addresses as IPv6 text but matchable as IPv4', () => {
  const mapped = parseAddr('::ffff:10.0.0.1')!;
  assert.equal(mapped.text, '::ffff:10.0.0.1');
  assert.equal(mapped.v4, 0x0a000001);
  assert.notEqual(mapped.v6, null);
  assert.equal(parseAddr('2001:db8::1')!.v4, -1);
  assert.equal(parseAddr('010.001.002.003')!.text, '10.1.2.3', 'printed as nginx prints it');
  assert.equal(parseAddr('255.255.255.255'), null, 'INADDR_NONE');
  for (const bad of ['', ' 10.0.0.1', '10.0.0.1 ', '1.2.3', 'fe80::1%eth0', '10.0.0.0/8'])
    assert.equal(parseAddr(bad), null, bad);
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

test('parseClientAddr also takes what a socket or variable may hold', () => {
  assert.deepEqual(parseClientAddr('10.0.0.1'), { v4: 0x0a000001, v6: null });
  assert.deepEqual(parseClientAddr('255.255.255.255'), { v4: 0xffffffff, v6: null });
  const linkLocal = parseClientAddr('fe80::1%eth0')!;
  assert.deepEqual(linkLocal, parseClientAddr('fe80::1'), 'the zone id is not part of the address');
  assert.equal(parseClientAddr('::ffff:10.0.0.1')!.v4, 0x0a000001);
  for (const bad of ['', 'fe80::1%', '%eth0', ' 10.0.0.1', '1.2.3', 'localhost'])
    assert.equal(parseClientAddr(bad), null, bad);
});

test('loopback: 127.0.0.0/8, ::1 and their IPv4-mapped forms', () => {
  for (const address of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1', '::1%lo'])
    assert.equal(isLoopback(address), true, address);
  for (const address of ['10.0.0.1', '::2', '::127.0.0.1', '', 'localhost'])
    assert.equal(isLoopback(address), false, address);
});

test('normalizePeerAddress strips the IPv4-mapped prefix of dual-stack sockets only', () => {
  assert.equal(normalizePeerAddress('::ffff:127.0.0.1'), '127.0.0.1');
  assert.equal(normalizePeerAddress('::ffff:7f00:1'), '::ffff:7f00:1');
  assert.equal(normalizePeerAddress('::1'), '::1');
  assert.equal(normalizePeerAddress('10.0.0.1'), '10.0.0.1');
  assert.equal(normalizePeerAddress(undefined), '');
});

test('CIDR blocks and addresses, with the low-bits warning condition', () => {
  const cidr = (text: string) => {
    const parsed = parseCidr(text);
    return parsed && { text: cidrText(parsed), lowBits: parsed.lowBits };
  };
  assert.deepEqual(cidr('10.0.0.0/8'), { text: '10.0.0.0/8', lowBits: false });
  assert.deepEqual(cidr('10.1.2.3/8'), { text: '10.0.0.0/8', lowBits: true });
  assert.deepEqual(cidr('192.168.1.1'), { text: '192.168.1.1/32', lowBits: false });
  assert.deepEqual(cidr('2001:db8::1/32'), { text: '2001:db8::/32', lowBits: true });
  assert.deepEqual(cidr('::1'), { text: '::1/128', lowBits: false });
  assert.deepEqual(cidr('0.0.0.0/0'), { text: '0.0.0.0/0', lowBits: false });
  assert.deepEqual(cidr('010.1.2.3'), { text: '10.1.2.3/32', lowBits: false }, 'leading zeros');
  assert.deepEqual(cidr('1..2.3'), { text: '1.0.2.3/32', lowBits: false }, 'an empty octet');
  assert.deepEqual(cidr('10.0.0.0/0032'), { text: '10.0.0.0/32', lowBits: false }, 'prefix digits');
  assert.deepEqual(cidr('255.255.255.255'), { text: '255.255.255.255/32', lowBits: false });
  const mapped = parseCidr('::ffff:1.2.3.4/120')!;
  assert.deepEqual([cidrText(mapped), mapped.lowBits, mapped.v4], ['::ffff:1.2.3.0/120', true, -1]);
  for (const bad of [
    '',
    ' ',
    '10.0.0.0/33',
    '::1/129',
    '1.2.3',
    '1.2.3/24',
    '256.0.0.1',
    'example.com',
    '10.0.0.0/',
    '/8',
    '1.2.3.4/x',
    '1.2.3.4/-1',
    '1.2.3.4/+8',
    '1.2.3.4//8',
    'fe80::1%eth0',
    'fe80::1%eth0/64',
    ' 10.0.0.1',
    '10.0.0.1 ',
    '10.0.0.0/8 ',
  ])
    assert.equal(parseCidr(bad), null, JSON.stringify(bad));
});

test('parseCidr accepts what nginx -t accepts in allow, with the same low-bits warnings', () => {
  const inputs = [
    '0010.1.2.3',
    '1..2.3',
    '1.2.3',
    '1.2.3.4.',
    ' 1.2.3.4',
    '1.2.3.4/33',
    '1.2.3.4/0032',
    '1.2.3.4/8',
    '1.2.3.4/',
    '::ffff:1.2.3.4/120',
    '::ffff:1.2.3.4/95',
    '::1..2.3',
    '::1.2.3',
    'fe80::1%eth0',
    ':1:2:3:4:5:6:7:8',
    '1:2:3:4:5:6:7::',
    '1:2:3:4:5:6:1.2.3.4',
    '1:2:3:4:5:6:7:1.2.3.4',
    '::ffff:255.255.255.255',
    '::/129',
    '2001:db8::1/32',
    '',
  ];
  const prefix = mkdtempSync(join(tmpdir(), 'limitswitch-cidr-'));
  try {
    for (const input of inputs) {
      const conf = join(prefix, 'nginx.conf');
      writeFileSync(conf, `error_log stderr;\nevents {}\nhttp { access_log off; allow "${input}"; }\n`);
      const run = spawnSync(NGINX_BIN, ['-t', '-p', `${prefix}/`, '-c', conf, '-e', 'stderr'], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      const parsed = parseCidr(input);
      assert.equal(parsed !== null, run.status === 0, `${JSON.stringify(input)}: ${run.stderr}`);
      if (parsed) assert.equal(parsed.lowBits, run.stderr.includes('low address bits'), input);
    }
  } finally {
    rmSync(prefix, { recursive: true, force: true });
  }
});

test('cidrMatch follows ngx_cidr_match: IPv4-mapped clients match IPv4 blocks only', () => {
  const match = (cidr: string, address: string) => cidrMatch(parseCidr(cidr)!, parseClientAddr(address)!);
  assert.equal(match('10.0.0.0/8', '10.200.1.1'), true);
  assert.equal(match('10.0.0.0/8', '::ffff:10.1.1.1'), true);
  assert.equal(match('10.0.0.0/8', '11.0.0.1'), false);
  assert.equal(match('0.0.0.0/0', '1.2.3.4'), true);
  assert.equal(match('0.0.0.0/0', '::1'), false);
  assert.equal(match('2001:db8::/32', '2001:db8::5'), true);
  assert.equal(match('2001:db8::/32', '2001:db9::5'), false);
  assert.equal(match('fe80::/10', 'fe80::1%eth0'), true);
  assert.equal(match('::/0', '10.0.0.1'), false);
  assert.equal(match('::ffff:10.0.0.0/104', '::ffff:10.0.0.1'), false, 'an IPv6 block');
  assert.equal(match('::/96', '::10.0.0.1'), true, 'IPv4-compatible is IPv6');
  assert.equal(match('192.168.1.7', '192.168.1.8'), false);
});

test('host:port as listen and upstream servers read it', () => {
  assert.deepEqual(parseHostPort('8080', true), { host: null, port: 8080 });
  assert.deepEqual(parseHostPort('*:8080', true), { host: null, port: 8080 });
  assert.deepEqual(parseHostPort('127.0.0.1', true), { host: '127.0.0.1', port: null });
  assert.deepEqual(parseHostPort('[::1]:8081', true), { host: '::1', port: 8081 });
  assert.deepEqual(parseHostPort('[:1:2:3:4:5:6:7:8]', false), { host: ':1:2:3:4:5:6:7:8', port: null });
  assert.deepEqual(parseHostPort('tea-svc:80', false), { host: 'tea-svc', port: 80 });
  assert.deepEqual(parseHostPort('8080', false), { host: '8080', port: null });
  assert.deepEqual(parseHostPort('0', true), { error: 'invalid port' });
  assert.deepEqual(parseHostPort('a:65536', true), { error: 'invalid port' });
  assert.deepEqual(parseHostPort(':80', true), { error: 'no host' });
  for (const bad of [
    '[::1',
    '[fe80::1%eth0]:80',
    '[1:2:3:4:5:6:7::]:80',
    '[::ffff:255.255.255.255]',
    '[::1]x',
  ])
    assert.deepEqual(parseHostPort(bad, true), { error: 'invalid host' }, bad);
});

test('listen addresses print as nginx prints them', () => {
  assert.equal(listenAddressText(null, 80), '0.0.0.0:80');
  assert.equal(listenAddressText('127.0.0.1', 8080), '127.0.0.1:8080');
  assert.equal(listenAddressText('::1', 80), '[::1]:80');
});
