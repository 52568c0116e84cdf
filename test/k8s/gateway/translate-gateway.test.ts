/**
 * Gateway API objects → config text and statuses, through the cluster translator (every piece checked
 * by the config parser, as on a replica): NGF's RateLimitPolicy fields, defaults, zone names, targets,
 * inheritance and conflict rule; listener, route and policy conditions.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type {
  GatewayObjects,
  HTTPRouteFilter,
  RateLimitPolicy,
} from '../../../src/k8s/gateway/gateway-objects.ts';
import type { StatusUpdate } from '../../../src/k8s/gateway/translate-gateway.ts';
import { ClusterTranslator } from '../../../src/k8s/translate/cluster-translator.ts';
import { endpointSlice, locationBlock, serverBlock, service } from '../builders.ts';
import { gateway, gatewayClass, httpRoute, rateLimitPolicy, rule } from './gateway-builders.ts';

const BACKENDS = {
  services: [service('tea-svc', [{ port: 80 }]), service('coffee-svc', [{ port: 80 }])],
  endpointSlices: [
    endpointSlice('tea-svc', [{ port: 8080 }], [{ ip: '10.0.0.1' }]),
    endpointSlice('coffee-svc', [{ port: 8080 }], [{ ip: '10.0.0.2' }, { ip: '10.0.0.3' }]),
  ],
};

const cafeRoutes = () => [
  httpRoute('tea', [rule('/tea', 'tea-svc')]),
  httpRoute('coffee', [rule('/coffee', 'coffee-svc')]),
];

function translate(g: Partial<GatewayObjects>) {
  return new ClusterTranslator().translate({
    ingresses: [],
    ...BACKENDS,
    configMap: null,
    gateway: {
      gatewayClasses: g.gatewayClasses ?? [gatewayClass()],
      gateways: g.gateways ?? [gateway('cafe')],
      httpRoutes: g.httpRoutes ?? cafeRoutes(),
      rateLimitPolicies: g.rateLimitPolicies ?? [],
    },
  });
}

function statusOf(statuses: readonly StatusUpdate[], kind: StatusUpdate['kind'], name: string) {
  const s = statuses.find((u) => u.kind === kind && u.name === name);
  assert.ok(s, `no status for ${kind} ${name}`);
  return s.status as Record<string, unknown>;
}

type Conds = { type: string; status: string; reason: string; message: string }[];

function policyAccepted(statuses: readonly StatusUpdate[], name: string) {
  const ancestors = statusOf(statuses, 'RateLimitPolicy', name).ancestors as { conditions: Conds }[];
  assert.ok(ancestors.length > 0);
  return ancestors[0]!.conditions.find((c) => c.type === 'Accepted')!;
}

const limited = (rl: NonNullable<RateLimitPolicy['spec']>['rateLimit'], name = 'coffee-limit', created = 3) =>
  rateLimitPolicy(name, { name: 'coffee' }, rl, { created });

describe('Gateway API translation', () => {
  test('a route policy becomes NGF’s zone (defaults, name) and limit lines in the route’s locations only', () => {
    const t = translate({
      rateLimitPolicies: [
        limited({
          rejectCode: 429,
          local: {
            rules: [
              { rate: '', key: '' },
              { rate: '5r/m', burst: 2, delay: 1, zoneSize: '1m' },
            ],
          },
        }),
      ],
    });
    assert.deepEqual(
      t.problems.filter((p) => p.severity === 'error'),
      [],
    );
    assert.match(t.text, /limit_req_zone \$gw_rl_0 zone=default_rl_coffee-limit_rule0:10m rate=100r\/s;/);
    assert.match(t.text, /limit_req_zone \$gw_rl_1 zone=default_rl_coffee-limit_rule1:1m rate=5r\/m;/);
    // the key is the policy's only for requests that selected the coffee route
    const keyMap = t.text
      .split('\n')
      .slice(t.text.split('\n').findIndex((l) => l.includes('map $gw_route $gw_rl_0')));
    assert.match(keyMap[1]!, /^\s+e\d+ \$binary_remote_addr;$/);
    assert.equal(keyMap[2]!.trim(), '}');
    const coffee = locationBlock(t.text, 'location /coffee/')!;
    assert.ok(coffee.includes('limit_req zone=default_rl_coffee-limit_rule0;'));
    assert.ok(coffee.includes('limit_req zone=default_rl_coffee-limit_rule1 burst=2 delay=1;'));
    assert.ok(coffee.includes('limit_req_status 429;'));
    assert.ok(!coffee.includes('limit_req_log_level error;'), 'NGF writes no log level it was not given');
    assert.ok(locationBlock(t.text, 'location = /coffee')!.includes('limit_req_status 429;'));
    const tea = locationBlock(t.text, 'location /tea/')!;
    assert.ok(!tea.some((l) => l.startsWith('limit_req')), tea.join('\n'));
    assert.deepEqual(policyAccepted(t.gatewayStatuses, 'coffee-limit').reason, 'Accepted');
    const parents = statusOf(t.gatewayStatuses, 'HTTPRoute', 'coffee').parents as { conditions: Conds }[];
    assert.ok(
      parents[0]!.conditions.some(
        (c) => c.type === 'gateway.nginx.org/RateLimitPolicyAffected' && c.status === 'True',
      ),
    );
    const teaParents = statusOf(t.gatewayStatuses, 'HTTPRoute', 'tea').parents as { conditions: Conds }[];
    assert.ok(!teaParents[0]!.conditions.some((c) => c.type === 'gateway.nginx.org/RateLimitPolicyAffected'));
  });

  test('a Gateway policy limits every route of the Gateway; a route policy adds its own (both apply)', () => {
    const t = translate({
      rateLimitPolicies: [
        rateLimitPolicy(
          'gw-limit',
          { kind: 'Gateway', name: 'cafe' },
          { logLevel: 'warn', local: { rules: [{ rate: '50r/s', key: '$binary_remote_addr' }] } },
        ),
        limited({ rejectCode: 466, local: { rules: [{ rate: '1r/s', key: '$binary_remote_addr' }] } }),
      ],
    });
    const coffee = locationBlock(t.text, 'location /coffee/')!;
    assert.ok(coffee.includes('limit_req zone=default_rl_gw-limit_rule0;'));
    assert.ok(coffee.includes('limit_req zone=default_rl_coffee-limit_rule0;'));
    assert.ok(coffee.includes('limit_req_status 466;'));
    assert.ok(
      coffee.includes('limit_req_log_level warn;'),
      'the Gateway’s setting where the route sets none',
    );
    const tea = locationBlock(t.text, 'location /tea/')!;
    assert.ok(tea.includes('limit_req zone=default_rl_gw-limit_rule0;'));
    assert.ok(!tea.includes('limit_req zone=default_rl_coffee-limit_rule0;'));
    const gw = statusOf(t.gatewayStatuses, 'Gateway', 'cafe').conditions as Conds;
    assert.ok(gw.some((c) => c.type === 'gateway.nginx.org/RateLimitPolicyAffected'));
  });

  test('two policies on one target that both set rejectCode conflict: the oldest wins, the other is Conflicted and not applied', () => {
    const t = translate({
      rateLimitPolicies: [
        limited(
          { rejectCode: 429, local: { rules: [{ rate: '2r/s', key: '$binary_remote_addr' }] } },
          'younger',
          9,
        ),
        limited(
          { rejectCode: 503, local: { rules: [{ rate: '1r/s', key: '$binary_remote_addr' }] } },
          'older',
          4,
        ),
        // sets none of dryRun/logLevel/rejectCode: no conflict, applied too
        limited({ local: { rules: [{ rate: '3r/s', key: '$http_x_client' }] } }, 'rules-only', 10),
      ],
    });
    const younger = policyAccepted(t.gatewayStatuses, 'younger');
    assert.equal(younger.status, 'False');
    assert.equal(younger.reason, 'Conflicted');
    assert.match(younger.message, /default\/older/);
    assert.equal(policyAccepted(t.gatewayStatuses, 'older').reason, 'Accepted');
    const programmed = (name: string) =>
      (
        statusOf(t.gatewayStatuses, 'RateLimitPolicy', name).ancestors as { conditions: Conds }[]
      )[0]!.conditions.find((c) => c.type === 'Programmed');
    assert.deepEqual([programmed('older')?.status, programmed('younger')?.reason], ['True', 'Overridden']);
    assert.equal(policyAccepted(t.gatewayStatuses, 'rules-only').reason, 'Accepted');
    assert.doesNotMatch(t.text, /default_rl_younger_rule0/);
    assert.match(t.text, /default_rl_older_rule0/);
    assert.match(t.text, /zone=default_rl_rules-only_rule0:10m rate=3r\/s/);
    assert.ok(locationBlock(t.text, 'location /coffee/')!.includes('limit_req_status 503;'));
  });

  test('a bad policy is Invalid on its status, with the field; the others are served unchanged', () => {
    const good = limited({ local: { rules: [{ rate: '1r/s', key: '$binary_remote_addr' }] } }, 'good', 3);
    const before = translate({ rateLimitPolicies: [good] });
    for (const [name, rl, message] of [
      [
        'bad-rate',
        { local: { rules: [{ rate: '10r/h', key: '$binary_remote_addr' }] } },
        /rules\[0\]\.rate: "10r\/h": must contain a number followed by 'r\/s' or 'r\/m'/,
      ],
      [
        'bad-delay',
        { local: { rules: [{ rate: '1r/s', key: 'k', noDelay: true, delay: 2 }] } },
        /NoDelay cannot be true when Delay is also set/,
      ],
      ['bad-code', { rejectCode: 302, local: { rules: [] } }, /rejectCode: 302: must be in 400-599/],
      [
        'bad-key',
        { local: { rules: [{ rate: '1r/s', key: '$binary_remote_addr;' }] } },
        /must be a valid limit_req key/,
      ],
    ] as const) {
      const t = translate({
        rateLimitPolicies: [good, rateLimitPolicy(name, { name: 'coffee' }, rl, { created: 5 })],
      });
      const accepted = policyAccepted(t.gatewayStatuses, name);
      assert.equal(accepted.reason, 'Invalid', name);
      assert.match(accepted.message, message);
      assert.equal(t.text, before.text, `${name} changed the config`);
      assert.ok(t.problems.some((p) => p.object.name === name && p.severity === 'error'));
    }
    const mixed = rateLimitPolicy('mixed', [{ kind: 'Gateway', name: 'cafe' }, { name: 'coffee' }], {
      local: { rules: [] },
    });
    assert.match(
      policyAccepted(translate({ rateLimitPolicies: [mixed] }).gatewayStatuses, 'mixed').message,
      /Cannot mix Gateway kind/,
    );
  });

  test('a policy whose targets are not served is TargetNotFound', () => {
    const t = translate({
      rateLimitPolicies: [rateLimitPolicy('lost', { name: 'no-such-route' }, { local: { rules: [] } })],
    });
    assert.equal(policyAccepted(t.gatewayStatuses, 'lost').reason, 'TargetNotFound');
  });

  test('listeners the replica cannot serve say why; routes attach only where a listener takes them', () => {
    const t = translate({
      gateways: [
        gateway('cafe', [
          { name: 'http', protocol: 'HTTP', port: 80, hostname: 'cafe.example.com' },
          { name: 'odd-port', protocol: 'HTTP', port: 8080, hostname: 'odd.example.com' },
          { name: 'tcp', protocol: 'TCP', port: 80 },
          {
            name: 'https',
            protocol: 'HTTPS',
            port: 443,
            hostname: 'cafe.example.com',
            tls: { certificateRefs: [{ name: 'missing' }] },
          },
        ]),
        gateway('rival', [{ name: 'http', protocol: 'HTTP', port: 80, hostname: 'cafe.example.com' }], {
          created: 5,
        }),
        gateway('foreign', undefined, { className: 'other' }),
      ],
      httpRoutes: [
        ...cafeRoutes(),
        httpRoute('elsewhere', [rule('/', 'tea-svc')], { hostnames: ['elsewhere.example.com'] }),
        httpRoute('no-section', [rule('/', 'tea-svc')], { sectionName: 'nope' }),
      ],
    });
    const listeners = statusOf(t.gatewayStatuses, 'Gateway', 'cafe').listeners as {
      name: string;
      attachedRoutes: number;
      conditions: Conds;
    }[];
    const reason = (n: string) =>
      listeners
        .find((l) => l.name === n)!
        .conditions.find((c) => c.status === 'False' || (c.type === 'Conflicted' && c.status === 'True'))
        ?.reason;
    assert.equal(listeners.find((l) => l.name === 'http')!.attachedRoutes, 2);
    assert.equal(reason('odd-port'), 'PortUnavailable');
    assert.equal(reason('tcp'), 'UnsupportedProtocol');
    assert.equal(reason('https'), 'InvalidCertificateRef');
    const rival = statusOf(t.gatewayStatuses, 'Gateway', 'rival').listeners as { conditions: Conds }[];
    assert.ok(
      rival[0]!.conditions.some(
        (c) => c.type === 'Conflicted' && c.status === 'True' && c.reason === 'HostnameConflict',
      ),
    );
    assert.ok(
      !t.gatewayStatuses.some((s) => s.name === 'foreign'),
      'a Gateway of another class is not ours to write',
    );
    const parent = (n: string) =>
      (statusOf(t.gatewayStatuses, 'HTTPRoute', n).parents as { conditions: Conds }[])[0]!.conditions[0]!;
    assert.equal(parent('elsewhere').reason, 'NoMatchingListenerHostname');
    assert.equal(parent('no-section').reason, 'NoMatchingParent');
    assert.equal(parent('tea').reason, 'Accepted');
    assert.ok(serverBlock(t.text, 'cafe.example.com'));
    assert.equal(serverBlock(t.text, 'odd.example.com'), null);
  });

  test('backends: weights spread over endpoints; a missing Service is ResolvedRefs=False and its rule answers 500', () => {
    const weighted = httpRoute('split', [
      {
        matches: [{ path: { type: 'PathPrefix', value: '/split' } }],
        backendRefs: [
          { name: 'tea-svc', port: 80, weight: 3 },
          { name: 'coffee-svc', port: 80, weight: 1 },
        ],
      },
    ]);
    const missing = httpRoute('missing', [rule('/missing', 'no-svc')]);
    const t = translate({ httpRoutes: [weighted, missing] });
    const upstream = t.text
      .split('\n')
      .slice(t.text.split('\n').findIndex((l) => l.includes('upstream gw-default-split-rule0')));
    // tea's one endpoint weighs 3 × 2, each of coffee's two 1 × 1: 6 : 1 : 1 = 3 : 1 between the Services
    assert.deepEqual(
      upstream.slice(1, 4).map((l) => l.trim()),
      ['server 10.0.0.1:8080 weight=6;', 'server 10.0.0.2:8080;', 'server 10.0.0.3:8080;'],
    );
    const resolved = (
      statusOf(t.gatewayStatuses, 'HTTPRoute', 'missing').parents as { conditions: Conds }[]
    )[0]!.conditions[1]!;
    assert.equal(resolved.reason, 'BackendNotFound');
    assert.doesNotMatch(t.text, /gw-default-missing-rule0/);
  });

  test('a route with a filter limitswitch does not honour is refused loudly (UnsupportedValue)', () => {
    const cases: [HTTPRouteFilter, RegExp][] = [
      [{ type: 'RequestHeaderModifier' }, /filter RequestHeaderModifier is not supported/],
      [{ type: 'URLRewrite', urlRewrite: { hostname: 'b.example' } }, /hostname rewrite is not supported/],
      [{ type: 'URLRewrite' }, /urlRewrite: a path rewrite is required/],
    ];
    for (const [filter, message] of cases) {
      const filtered = httpRoute('filtered', [{ ...rule('/f', 'tea-svc'), filters: [filter] }]);
      const t = translate({ httpRoutes: [filtered] });
      const accepted = (
        statusOf(t.gatewayStatuses, 'HTTPRoute', 'filtered').parents as { conditions: Conds }[]
      )[0]!.conditions[0]!;
      assert.equal(accepted.status, 'False');
      assert.equal(accepted.reason, 'UnsupportedValue');
      assert.match(accepted.message, message);
      assert.ok(t.problems.some((p) => p.object.name === 'filtered' && p.severity === 'error'));
    }
  });

  test("URLRewrite's path is served: the selected rule rewrites before proxying", () => {
    const rewriting = httpRoute('rewriting', [
      {
        ...rule('/v1', 'tea-svc'),
        filters: [
          {
            type: 'URLRewrite',
            urlRewrite: { path: { type: 'ReplacePrefixMatch', replacePrefixMatch: '/' } },
          },
        ],
      },
    ]);
    const t = translate({ httpRoutes: [rewriting] });
    assert.ok(!t.problems.some((p) => p.severity === 'error'), JSON.stringify(t.problems));
    assert.ok(t.text.includes('if ($gw_route = e0) { rewrite ^/v1/?(.*)$ /$1 break; }'), t.text);
  });
});
