/**
 * Address lists in annotations and the ConfigMap (`limit-allowlist`, `set-real-ip-from`) are read as the
 * generated `geo`/`set_real_ip_from` lines are: the translator accepts exactly what nginx accepts, and
 * real nginx (`nginx -t` on a `geo` line) is asked about every form listed here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseCidrList, parseCidrListInOrder } from '../../src/k8s/translate/annotation-values.ts';
import { NGINX_BIN } from '../helpers/nginx.ts';

/** Forms a looser address parser takes (inet_aton's shorthands, zone ids) that nginx refuses. */
const REFUSED = [
  '127.1',
  '0x7f.0.0.1',
  '2130706433',
  'fe80::1%eth0',
  'fe80::1%eth0/64',
  '10.0.0.0/33',
  '2001:db8::/129',
  '10.0.0.0/',
  '10.0.0.256',
];

/** Forms nginx accepts, some surprising: leading zeros are decimal, an empty octet is 0, `/0032` is 32. */
const ACCEPTED = [
  '010.0.0.1',
  '0010.0.0.0/8',
  '10.0.0.0/0032',
  '1..2.3',
  '255.255.255.255',
  '10.0.0.1/8',
  '2001:db8::/32',
  '::ffff:10.0.0.0/104',
  ':1:2:3:4:5:6:7:8',
];

const prefix = mkdtempSync(join(tmpdir(), 'limitswitch-geo-t-'));
after(() => rmSync(prefix, { recursive: true, force: true }));

/** Whether `nginx -t` takes `net` as a `geo` network; its `[emerg]` text otherwise. */
function nginxGeo(net: string): string | null {
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(
    conf,
    `pid nginx.pid;\nerror_log stderr;\nevents {}\nhttp {\n    geo $remote_addr $a { default 0; ${net} 1; }\n}\n`,
  );
  const run = spawnSync(NGINX_BIN, ['-t', '-p', `${prefix}/`, '-c', conf, '-e', 'stderr'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  if (run.status === 0) return null;
  const emerg = run.stderr.split('\n').find((line) => line.includes('[emerg]'));
  assert.ok(emerg, `nginx -t failed without an [emerg] line:\n${run.stderr}`);
  return emerg.replace(/^.*\[emerg\] (\d+#\d+: )?/, '').replace(/ in \S+:\d+$/, '');
}

describe('address lists in annotation and ConfigMap values', () => {
  for (const net of REFUSED) {
    it(`refuses ${net}, naming the entry, as nginx does`, () => {
      const raw = `10.0.0.0/8, ${net}`;
      const message = `invalid value "${raw}": "${net}" is not an IP address or CIDR`;
      assert.throws(() => parseCidrList(raw), { message });
      assert.throws(() => parseCidrListInOrder(raw), { message });
      assert.equal(nginxGeo(net), `invalid network "${net}"`);
    });
  }

  for (const net of ACCEPTED) {
    it(`accepts ${net} as written, as nginx does`, () => {
      assert.deepEqual(parseCidrList(`${net},10.0.0.0/8`), [net, '10.0.0.0/8'].sort());
      assert.deepEqual(parseCidrListInOrder(`${net},10.0.0.0/8`), [net, '10.0.0.0/8']);
      assert.equal(nginxGeo(net), null);
    });
  }

  it('keeps set-real-ip-from in order and sorts the allowlist, dropping repeats and empty items', () => {
    const raw = ' 2001:db8::/32 ,10.0.0.0/8,, 2001:db8::/32';
    assert.deepEqual(parseCidrListInOrder(raw), ['2001:db8::/32', '10.0.0.0/8', '2001:db8::/32']);
    assert.deepEqual(parseCidrList(raw), ['10.0.0.0/8', '2001:db8::/32']);
  });
});
