/**
 * The seed's cafe as Gateway API objects limits exactly as its Ingress version: the same timeline of
 * requests gives the same answers and `$limit_req_status` sequence through the engine. And the one-curl
 * toggle works for Gateway API users: a switched policy is off while its keyval says "off".
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { simulateLine } from '../../../src/cli/simulate.ts';
import { buildSite } from '../../../src/config/build-site.ts';
import { loadConfigText } from '../../../src/config/index.ts';
import type { GatewayObjects } from '../../../src/k8s/gateway/gateway-objects.ts';
import type { Ingress } from '../../../src/k8s/objects.ts';
import { ClusterTranslator } from '../../../src/k8s/translate/cluster-translator.ts';
import { endpointSlice, ingress, service } from '../builders.ts';
import { gateway, gatewayClass, httpRoute, rateLimitPolicy, rule } from './gateway-builders.ts';

const BACKENDS = {
  services: [service('tea-svc', [{ port: 80 }]), service('coffee-svc', [{ port: 80 }])],
  endpointSlices: [
    endpointSlice('tea-svc', [{ port: 8080 }], [{ ip: '10.0.0.1' }]),
    endpointSlice('coffee-svc', [{ port: 8080 }], [{ ip: '10.0.0.2' }]),
  ],
};

const NIC_LIMIT = {
  'nginx.org/limit-req-rate': '10r/s',
  'nginx.org/limit-req-burst': '1',
  'nginx.org/limit-req-no-delay': 'true',
  'nginx.org/limit-req-reject-code': '429',
};

const cafeIngresses: Ingress[] = [
  ingress('tea', {
    className: 'limitswitch',
    rules: [{ host: 'cafe.example.com', paths: [{ path: '/tea', svc: 'tea-svc', port: 80 }] }],
  }),
  ingress('coffee', {
    className: 'limitswitch',
    annotations: NIC_LIMIT,
    rules: [{ host: 'cafe.example.com', paths: [{ path: '/coffee', svc: 'coffee-svc', port: 80 }] }],
  }),
];

const cafeGateway = (annotations: Record<string, string> = {}): GatewayObjects => ({
  gatewayClasses: [gatewayClass()],
  gateways: [gateway('cafe')],
  httpRoutes: [
    httpRoute('tea', [rule('/tea', 'tea-svc')]),
    httpRoute('coffee', [rule('/coffee', 'coffee-svc')]),
  ],
  rateLimitPolicies: [
    rateLimitPolicy(
      'coffee-limit',
      { name: 'coffee' },
      {
        rejectCode: 429,
        local: { rules: [{ rate: '10r/s', burst: 1, noDelay: true, key: '$binary_remote_addr' }] },
      },
      { annotations },
    ),
  ],
});

function siteOf(objects: { ingresses?: Ingress[]; gateway?: GatewayObjects }) {
  const t = new ClusterTranslator().translate({
    ingresses: objects.ingresses ?? [],
    ...BACKENDS,
    configMap: null,
    ...(objects.gateway ? { gateway: objects.gateway } : {}),
  });
  assert.deepEqual(
    t.problems.filter((p) => p.severity === 'error'),
    [],
  );
  return buildSite(loadConfigText(t.text, 'cafe').http);
}

/** Three clients on /coffee and /tea, faster than 10r/s together, then a pause, then again. */
function timeline(): { t: number; addr: string; uri: string; host: string }[] {
  const out = [];
  for (let i = 0; i < 120; i++) {
    const t = i < 60 ? i * 23 : 3000 + (i - 60) * 41;
    out.push({
      t,
      addr: `10.0.0.${1 + (i % 3)}`,
      uri: i % 4 === 3 ? '/tea/green' : `/coffee${i % 2 ? '/latte' : ''}`,
      host: 'cafe.example.com',
    });
  }
  return out;
}

const answersOf = (site: ReturnType<typeof siteOf>, lines: object[]) =>
  lines
    .map((l) => simulateLine(site, l, 80))
    .filter((r) => r !== null)
    .map((r) => `${r.code} ${r.status}`);

describe('the cafe as Gateway API objects', () => {
  test('limits exactly as the Ingress version: the same answers and $limit_req_status for the same timeline', () => {
    const requests = timeline();
    const viaIngress = answersOf(siteOf({ ingresses: cafeIngresses }), requests);
    const viaGateway = answersOf(siteOf({ gateway: cafeGateway() }), requests);
    assert.deepEqual(viaGateway, viaIngress);
    // the timeline does exercise the limit: some pass, some are rejected, tea is never limited
    assert.ok(viaIngress.includes('429 REJECTED') && viaIngress.includes('200 PASSED'));
    const tea = viaIngress.filter((_, i) => requests[i]!.uri.startsWith('/tea'));
    assert.ok(tea.length > 0 && tea.every((a) => a === '200 '), 'tea requests are never accounted');
  });

  test('the keyval switch: "off" under <namespace>/<name> in gateway_policies turns the policy off, deleting it turns it on', () => {
    const site = siteOf({ gateway: cafeGateway({ 'limitswitch.io/keyval-switch': 'true' }) });
    const burst = (t0: number) =>
      [0, 1, 2, 3].map((i) => ({ t: t0 + i, addr: '10.0.0.9', uri: '/coffee', host: 'cafe.example.com' }));
    const sw = (t: number, value: string | null) => ({
      t,
      keyval: { zone: 'gateway_policies', key: 'default/coffee-limit', value },
    });
    assert.deepEqual(answersOf(site, burst(0)), ['200 PASSED', '200 PASSED', '429 REJECTED', '429 REJECTED']);
    assert.deepEqual(answersOf(site, [sw(10_000, 'off'), ...burst(10_001)]), [
      '200 ',
      '200 ',
      '200 ',
      '200 ',
    ]);
    assert.deepEqual(answersOf(site, [sw(20_000, null), ...burst(20_001)]), [
      '200 PASSED',
      '200 PASSED',
      '429 REJECTED',
      '429 REJECTED',
    ]);
  });
});
