/**
 * realip against the oracle: real nginx and the proxy get the same headers from the same peer
 * (127.0.0.1) under the same `set_real_ip_from` / `real_ip_header` / `real_ip_recursive`, and must
 * attribute each request to the same `$remote_addr` and `$remote_port`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RealIpConf } from '../../../src/config/model.ts';
import type { Decision } from '../../../src/replica/http/contract/decision.ts';
import { compileRealIp } from '../../../src/replica/http/edge/real-ip.ts';
import { type RunningNginx, startNginx } from '../../helpers/nginx.ts';
import { rawRequest, responseOf, startProxy, type TestProxy } from './harness.ts';

const TRUSTED = ['127.0.0.1', '10.0.0.0/8', '2001:db8::/32'];

const CONFIGS: Readonly<Record<string, RealIpConf>> = {
  xff: { trustedFrom: TRUSTED, header: 'X-Forwarded-For', recursive: false },
  'xff-recursive': { trustedFrom: TRUSTED, header: 'X-Forwarded-For', recursive: true },
  'x-real-ip': { trustedFrom: TRUSTED, header: 'X-Real-IP', recursive: true },
  custom: { trustedFrom: TRUSTED, header: 'X-Client', recursive: false },
  // spelled in lower case, nginx treats it as any other header: first line only
  'xff-lower': { trustedFrom: TRUSTED, header: 'x-forwarded-for', recursive: true },
  untrusted: { trustedFrom: ['192.0.2.0/24'], header: 'X-Forwarded-For', recursive: true },
  'mapped-cidr': { trustedFrom: ['::ffff:127.0.0.1'], header: 'X-Forwarded-For', recursive: true },
};

type Lines = readonly (readonly [string, string])[];
const xff = (...values: string[]): Lines => values.map((v) => ['X-Forwarded-For', v] as const);

const CASES: Readonly<Record<string, Lines>> = {
  none: [],
  single: xff('203.0.113.7'),
  'client then proxy': xff('203.0.113.7, 10.0.0.1'),
  'long chain': xff('198.51.100.1, 203.0.113.7, 10.0.0.1, 10.1.1.1'),
  'all trusted': xff('10.0.0.1, 10.0.0.2'),
  garbage: xff('garbage'),
  'garbage on the left': xff('garbage, 10.0.0.1'),
  'garbage on the right': xff('203.0.113.7, garbage'),
  'with port': xff('203.0.113.7:8080'),
  'bracketed v6 with port': xff('[2001:db8::1]:443'),
  'v6 chain': xff('2001:db9::1, 2001:db8::5'),
  'upper-case v6': xff('2001:DB8:0:0:0:0:0:A'),
  'v4-mapped': xff('::ffff:203.0.113.7'),
  'v4-mapped trusted': xff('203.0.113.9, ::ffff:10.0.0.1'),
  'v4-compatible forms': xff('::0.0.0.1, ::2.2.2.2'),
  'zero runs': xff('1:0:0:2:0:0:0:3'),
  'trailing separators': xff('203.0.113.7,,  , '),
  'leading space': xff(' 203.0.113.7'),
  'leading zeros': xff('010.001.002.003'),
  'short octet': xff('203.0.113.'),
  broadcast: xff('255.255.255.255'),
  'port zero': xff('203.0.113.7:0'),
  'two lines': xff('203.0.113.7', '10.0.0.1'),
  'two lines, untrusted last': xff('10.0.0.9, 10.0.0.5', '198.51.100.4'),
  'three lines recursive': xff('198.51.100.1, 10.0.0.3', '10.0.0.4', '10.0.0.5'),
  'x-real-ip twice': [
    ['X-Real-IP', '203.0.113.7'],
    ['X-Real-IP', '198.51.100.2'],
  ],
  'x-real-ip list': [['X-Real-IP', '198.51.100.2, 10.0.0.1']],
  'x-client': [['X-Client', '203.0.113.44']],
};

/** The peer's own port differs between the two connections; a port taken from a header must match. */
const withoutPeerPort = (body: string) => body.replace(/^127\.0\.0\.1\|\d*\|/, '127.0.0.1|PEER|');

const answer = (ctx: { remoteAddr: string; remotePort: number; realipRemoteAddr: string }): Decision => ({
  action: 'return',
  code: 200,
  body: `${ctx.remoteAddr}|${ctx.remotePort === 0 ? '' : ctx.remotePort}|${ctx.realipRemoteAddr}`,
});

describe('realip: the proxy attributes requests as nginx does', () => {
  let nginx: RunningNginx;
  const proxies = new Map<string, TestProxy<Decision>>();

  before(async () => {
    const servers = Object.entries(CONFIGS).map(
      ([name, conf]) => `
    server {
        listen 127.0.0.1:PORT;
        server_name ${name};
        ${conf.trustedFrom.map((cidr) => `set_real_ip_from ${cidr};`).join(' ')}
        real_ip_header ${conf.header};
        real_ip_recursive ${conf.recursive ? 'on' : 'off'};
        location / { return 200 "$remote_addr|$remote_port|$realip_remote_addr"; }
    }`,
    );
    nginx = await startNginx({ http: (port) => servers.join('\n').replaceAll('PORT', String(port)) });
    for (const [name, conf] of Object.entries(CONFIGS)) {
      // the upstream is never used: every decision is a `return`
      proxies.set(name, await startProxy([{ port: 9 }], { decide: answer, realIp: conf }));
    }
  });
  after(async () => {
    await nginx?.stop();
    for (const proxy of proxies.values()) await proxy.close();
  });

  for (const [configName] of Object.entries(CONFIGS)) {
    test(`${configName}: every header case`, async () => {
      const mismatches: string[] = [];
      for (const [caseName, lines] of Object.entries(CASES)) {
        const request = [
          'GET / HTTP/1.1',
          `Host: ${configName}`,
          ...lines.map(([n, v]) => `${n}: ${v}`),
          'Connection: close',
        ];
        const expected = responseOf(await rawRequest(nginx.port, request));
        assert.equal(expected.status, 200, `nginx answered ${caseName}`);
        const ours = responseOf(await rawRequest(proxies.get(configName)!.port, request));
        const a = withoutPeerPort(expected.body);
        const b = withoutPeerPort(ours.body);
        if (a !== b) mismatches.push(`${caseName}: nginx ${JSON.stringify(a)}, ours ${JSON.stringify(b)}`);
      }
      assert.deepEqual(mismatches, []);
    });
  }
});

describe('realip: compilation', () => {
  test('an unparseable set_real_ip_from is refused with nginx wording', () => {
    assert.throws(
      () => compileRealIp({ trustedFrom: ['10.0.0.0/33'], header: 'X-Real-IP', recursive: false }),
      {
        code: 'RL_ERR_CONFIG_INVALID',
        message: 'host not found in set_real_ip_from "10.0.0.0/33"',
      },
    );
    assert.throws(
      () => compileRealIp({ trustedFrom: ['proxy.local'], header: 'X-Real-IP', recursive: false }),
      {
        message: 'host not found in set_real_ip_from "proxy.local"',
      },
    );
  });

  test('an empty list turns realip off', () => {
    assert.equal(compileRealIp({ trustedFrom: [], header: 'X-Real-IP', recursive: false }), null);
  });

  test('low address bits are masked, as nginx does', () => {
    const resolver = compileRealIp({ trustedFrom: ['10.1.2.3/8'], header: 'X-Real-IP', recursive: false })!;
    const peer = { text: '10.200.0.1', port: 1, v4: 0x0ac80001, v6: null };
    assert.equal(resolver.matches(peer), true);
    assert.equal(resolver.resolve(peer, ['X-Real-IP', '198.51.100.7'])?.text, '198.51.100.7');
  });
});
