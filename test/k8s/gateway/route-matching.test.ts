/**
 * HTTPRoute matching through the engine, by the Gateway API's precedence: exact path, regular
 * expression, longest prefix (whole segments), then method, headers, query parameters, then the older
 * route; and the RequestRedirect filter answered before any backend.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decideRequest } from '../../../src/cli/simulate.ts';
import { buildSite } from '../../../src/config/build-site.ts';
import { loadConfigText } from '../../../src/config/index.ts';
import { ClusterTranslator } from '../../../src/k8s/translate/cluster-translator.ts';
import { endpointSlice, service } from '../builders.ts';
import { gateway, gatewayClass, httpRoute, rule } from './gateway-builders.ts';

const SERVICES = ['s0', 's1', 's2', 's3', 's4', 's5', 's7'];

test('each request reaches the rule the Gateway API precedence picks', () => {
  const a = httpRoute(
    'a',
    [
      rule('/api', 's0'),
      rule('/api', 's1', { headers: [{ name: 'X-Version', value: 'v2' }] }),
      rule('/api/health', 's2', { type: 'Exact' }),
      rule('/api', 's3', { method: 'POST' }),
      rule('^/api/v[0-9]+/items$', 's4', { type: 'RegularExpression' }),
      {
        matches: [
          { path: { type: 'PathPrefix', value: '/api' }, queryParams: [{ name: 'debug', value: '1' }] },
        ],
        backendRefs: [{ name: 's5', port: 80 }],
      },
      {
        matches: [{ path: { type: 'PathPrefix', value: '/old' } }],
        filters: [{ type: 'RequestRedirect', requestRedirect: { scheme: 'https', statusCode: 301 } }],
      },
    ],
    { created: 1 },
  );
  const b = httpRoute('b', [rule('/api', 's7', { headers: [{ name: 'X-Version', value: 'v2' }] })], {
    created: 2,
  });
  const t = new ClusterTranslator().translate({
    ingresses: [],
    services: SERVICES.map((s) => service(s, [{ port: 80 }])),
    endpointSlices: SERVICES.map((s, i) => endpointSlice(s, [{ port: 8000 + i }], [{ ip: '10.0.0.1' }])),
    configMap: null,
    gateway: {
      gatewayClasses: [gatewayClass()],
      gateways: [gateway('cafe')],
      httpRoutes: [a, b],
      rateLimitPolicies: [],
    },
  });
  assert.deepEqual(
    t.problems.filter((p) => p.severity === 'error'),
    [],
  );
  const site = buildSite(loadConfigText(t.text, 'gateway').http);
  const send = (uri: string, method = 'GET', headers: Record<string, string> = {}) => {
    const { verdict } = decideRequest(
      site,
      { t: 1000, addr: '10.1.1.1', host: 'cafe.example.com', uri, method, headers },
      80,
    );
    if (verdict.kind === 'proxy') return verdict.proxyUrl?.replace('http://gw-default-', '');
    const text = verdict.kind === 'return' ? verdict.text : null;
    return `${verdict.code}${text ? ` ${text}` : ''}`;
  };
  assert.equal(send('/api/x'), 'a-rule0');
  assert.equal(send('/api'), 'a-rule0');
  assert.equal(
    send('/api/x', 'GET', { 'x-version': 'v2' }),
    'a-rule1',
    'headers; the older route wins the tie',
  );
  assert.equal(send('/api/x', 'GET', { 'x-version': 'v3' }), 'a-rule0');
  assert.equal(
    send('/api/x', 'POST', { 'x-version': 'v2' }),
    'a-rule3',
    'a method match comes before headers',
  );
  assert.equal(send('/api/health'), 'a-rule2', 'exact first');
  assert.equal(send('/api/health/x'), 'a-rule0');
  assert.equal(send('/api/v2/items'), 'a-rule4', 'a regular expression before prefixes');
  assert.equal(send('/api/v2/items/1'), 'a-rule0', 'a regular expression matches the whole path');
  assert.equal(send('/api/x?debug=1'), 'a-rule5');
  assert.equal(send('/apix'), '404', 'a prefix matches whole segments');
  assert.equal(send('/old/menu?x=1'), '301 https://cafe.example.com/old/menu?x=1');
});
