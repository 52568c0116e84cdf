/**
 * geo's `ranges`, `proxy` and `proxy_recursive` against real nginx on the same config: ranges added
 * before, after, inside and at either end of others, cut at /16 boundaries, deleted exactly; an address
 * that does not parse (looked up as 255.255.255.255); a request from a `proxy` network looked up by the
 * last address of its X-Forwarded-For, or with `proxy_recursive` by the first untrusted one from the
 * right. Every variable of every request compared.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

const GEOS = `
    geo $arg_ip $r_basic {
        ranges;
        default                    default;
        127.0.0.0-127.255.255.255  loopback;
        192.0.2.0-192.0.2.255      test;
        10.10.3.0-10.11.2.255      two16;
        10.12.3.0-10.13.2.255      two16b;
        delete                     10.10.3.0-10.11.2.255;
    }
    geo $arg_ip $r_insert {
        ranges;
        default                default;
        127.0.0.0-127.0.0.255  test;
        127.0.0.1-127.0.0.2    test2;
        127.0.0.1-127.0.0.1    loopback;
        127.0.1.0-127.0.1.255  a;
        127.0.1.0-127.0.1.1    b;
        127.0.2.0-127.0.2.255  c;
        127.0.2.9-127.0.2.255  d;
        127.0.3.5-127.0.3.9    e;
        127.0.3.0-127.0.3.1    f;
        127.0.3.5-127.0.3.9    g;
    }
    geo $arg_ip $r_delete {
        ranges;
        default                default;
        127.0.0.0-127.0.0.255  test;
        127.0.0.1-127.0.0.1    loopback;
        delete                 127.0.0.0-127.0.0.0;
        delete                 127.0.0.2-127.0.0.255;
        delete                 127.0.0.1-127.0.0.1;
        delete                 127.0.9.0-127.0.9.9;
    }
    geo $arg_ip $cidr_unparsed {
        default       default;
        192.0.2.0/24  test;
        0.0.0.0/0     world;
    }
    geo $geo_proxy {
        default       default;
        proxy         127.0.0.1;
        127.0.0.0/8   loopback;
        192.0.2.0/24  test;
    }
    geo $geo_proxy_recursive {
        proxy_recursive;
        default       default;
        proxy         127.0.0.1;
        proxy         10.0.0.0/8;
        127.0.0.0/8   loopback;
        192.0.2.0/24  test;
    }
    geo $geo_ranges_proxy {
        ranges;
        proxy                  127.0.0.1;
        default                default;
        192.0.2.1-192.0.2.1    test;
        127.0.0.0-127.0.0.255  loopback;
    }
`;

const body = (port: number) => `
${GEOS}
    server {
        listen 127.0.0.1:${port};
        location / {
            return 200 "$r_basic|$r_insert|$r_delete|$cidr_unparsed|$geo_proxy|$geo_proxy_recursive|$geo_ranges_proxy\\n";
        }
    }
`;

const IPS = [
  '127.0.0.0',
  '127.0.0.1',
  '127.0.0.2',
  '127.0.0.3',
  '127.0.1.0',
  '127.0.1.1',
  '127.0.1.2',
  '127.0.2.8',
  '127.0.2.9',
  '127.0.3.0',
  '127.0.3.5',
  '127.0.3.9',
  '127.0.9.5',
  '127.200.0.1',
  '192.0.2.1',
  '10.10.3.0',
  '10.11.2.1',
  '10.12.3.0',
  '10.13.2.255',
  '10.13.3.0',
  '255.255.255.255',
  'not-an-address',
  '::ffff:192.0.2.1',
  '2001:db8::1',
];
const FORWARDED = [
  undefined,
  '192.0.2.1',
  '10.0.0.1',
  '10.0.0.1, 192.0.2.1',
  '192.0.2.1, 127.0.0.1',
  '192.0.2.1, 10.0.0.5',
  '192.0.2.1,10.1.1.1, 127.0.0.1',
  'garbage',
];

async function answers(port: number): Promise<string[]> {
  const out: string[] = [];
  for (const ip of IPS) {
    const res = await request(`http://127.0.0.1:${port}/?ip=${encodeURIComponent(ip)}`);
    out.push(`ip=${ip}: ${(await res.body.text()).trim()}`);
  }
  for (const xff of FORWARDED) {
    const res = await request(`http://127.0.0.1:${port}/`, {
      headers: xff === undefined ? {} : { 'x-forwarded-for': xff },
    });
    out.push(`X-Forwarded-For ${xff}: ${(await res.body.text()).trim()}`);
  }
  return out;
}

describe('geo ranges and proxy, replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body);
  });

  after(() => both?.stop());

  test('every variable of every request as nginx has it', async () => {
    const fromNginx = await answers(both.nginxPort);
    assert.deepEqual(await answers(both.replicaPort), fromNginx);
  });
});
