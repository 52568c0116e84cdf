import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EndpointSlice, Ingress, Service } from '../../src/k8s/objects.ts';
import { ClusterTranslator } from '../../src/k8s/translate/cluster-translator.ts';
import {
  endpointSlice,
  ingress,
  locationBlock,
  NIC_PROXY_HEADERS,
  serverBlock,
  service,
} from './builders.ts';

function translate(
  ingresses: Ingress[],
  services: Service[] = [],
  slices: EndpointSlice[] = [],
  cls?: string,
) {
  return new ClusterTranslator(cls ? { ingressClass: cls } : {}).translate({
    ingresses,
    services,
    endpointSlices: slices,
    configMap: null,
  });
}

const ref = (name: string) => ({
  kind: 'Ingress',
  apiVersion: 'networking.k8s.io/v1',
  namespace: 'default',
  name,
  uid: `uid-${name}`,
  resourceVersion: '1',
});

describe('paths, hosts and backends', () => {
  it('Exact → "=", Prefix and ImplementationSpecific → prefix; a rule without host goes to the default server', () => {
    const { text } = translate([
      ingress('web', {
        rules: [
          {
            host: 'shop.example.com',
            paths: [
              { path: '/login', type: 'Exact', svc: 'web', port: 80 },
              { path: '/api', type: 'Prefix', svc: 'web', port: 80 },
              { path: '/static', type: 'ImplementationSpecific', svc: 'web', port: 80 },
            ],
          },
          { paths: [{ path: '/healthz', svc: 'web', port: 80 }] },
        ],
      }),
    ]);
    const shop = serverBlock(text, 'shop.example.com')!;
    assert.ok(shop.includes('location = /login {'));
    assert.ok(shop.includes('location /api {'));
    assert.ok(shop.includes('location /static {'));
    const dflt = serverBlock(text, '_')!;
    assert.ok(dflt.includes('listen 80 default_server;'));
    assert.ok(dflt.includes('location /healthz {'));
    assert.ok(!dflt.includes('return 404;'));
    assert.deepEqual(locationBlock(text, 'location /healthz'), [
      ...NIC_PROXY_HEADERS,
      'proxy_pass http://default-web--web-80;',
    ]);
  });

  it('spec.defaultBackend is served at "/" when no rule path is "/"', () => {
    const { text } = translate([
      ingress('web', {
        defaultBackend: { svc: 'fallback', port: 8080 },
        rules: [{ host: 'a.example.com', paths: [{ path: '/x', svc: 'web', port: 80 }] }],
      }),
    ]);
    assert.deepEqual(locationBlock(text, 'location /'), [
      ...NIC_PROXY_HEADERS,
      'proxy_pass http://default-web--fallback-8080;',
    ]);
  });

  it('named ports and ready endpoints only, across several slices; IPv6 in brackets', () => {
    const svc = service('web', [
      { name: 'http', port: 80 },
      { name: 'metrics', port: 9100 },
    ]);
    const slices = [
      endpointSlice(
        'web',
        [
          { name: 'http', port: 8080 },
          { name: 'metrics', port: 9100 },
        ],
        [{ ip: '10.0.0.2' }, { ip: '10.0.0.3', ready: false }],
        { name: 'web-1' },
      ),
      endpointSlice('web', [{ name: 'http', port: 8080 }], [{ ip: 'fd00::7' }, { ip: '10.0.0.1' }], {
        name: 'web-2',
      }),
    ];
    const { text } = translate(
      [
        ingress('web', {
          rules: [{ host: 'a.example.com', paths: [{ path: '/', svc: 'web', port: 'http' }] }],
        }),
      ],
      [svc],
      slices,
    );
    assert.deepEqual(locationBlock(text, 'upstream default-web-a.example.com-web-http'), [
      'server 10.0.0.1:8080;',
      'server 10.0.0.2:8080;',
      'server [fd00::7]:8080;',
    ]);
  });

  it('a backend without ready endpoints or an unknown port keeps NIC’s placeholder', () => {
    const { text } = translate(
      [
        ingress('web', {
          rules: [
            {
              host: 'a.example.com',
              paths: [
                { path: '/a', svc: 'web', port: 80 },
                { path: '/b', svc: 'web', port: 81 },
              ],
            },
          ],
        }),
      ],
      [service('web', [{ port: 80 }])],
      [endpointSlice('web', [{ port: 8080 }], [{ ip: '10.0.0.1', ready: false }])],
    );
    assert.deepEqual(locationBlock(text, 'upstream default-web-a.example.com-web-80'), [
      '# Service default/web has no ready endpoints: placeholder server',
      'server 127.0.0.1:8181;',
    ]);
    assert.deepEqual(locationBlock(text, 'upstream default-web-a.example.com-web-81'), [
      '# Service default/web has no port 81: placeholder server',
      'server 127.0.0.1:8181;',
    ]);
  });

  it('the oldest Ingress owns a host; the newer one is told', () => {
    const old = ingress('old', {
      created: 1,
      rules: [{ host: 'a.example.com', paths: [{ path: '/', svc: 'old', port: 80 }] }],
    });
    const young = ingress('young', {
      created: 2,
      rules: [
        { host: 'a.example.com', paths: [{ path: '/', svc: 'young', port: 80 }] },
        { host: 'b.example.com', paths: [{ path: '/', svc: 'young', port: 80 }] },
      ],
    });
    const { text, problems } = translate([young, old]);
    assert.deepEqual(problems, [
      {
        object: ref('young'),
        field: 'spec.rules[0].host',
        error: 'host "a.example.com" is taken by default/old; this rule is ignored',
        severity: 'warning',
      },
    ]);
    assert.ok(
      serverBlock(text, 'a.example.com')!.includes('proxy_pass http://default-old-a.example.com-old-80;'),
    );
    assert.ok(
      serverBlock(text, 'b.example.com')!.includes('proxy_pass http://default-young-b.example.com-young-80;'),
    );
  });

  it('mergeable: the oldest minion wins a duplicate path; a minion without master is not served', () => {
    const master = ingress('master', {
      annotations: { 'nginx.org/mergeable-ingress-type': 'master' },
      rules: [{ host: 'cafe.example.com' }],
    });
    const minion = (name: string, created: number, host = 'cafe.example.com') =>
      ingress(name, {
        created,
        annotations: { 'nginx.org/mergeable-ingress-type': 'minion' },
        rules: [{ host, paths: [{ path: '/tea', svc: name, port: 80 }] }],
      });
    const { text, problems } = translate([
      minion('second', 2),
      minion('first', 1),
      master,
      minion('orphan', 3, 'x.example.com'),
    ]);
    assert.deepEqual(problems, [
      {
        object: ref('second'),
        field: 'spec.rules[0].http.paths',
        error: 'path "/tea" of host "cafe.example.com" is taken by default/first; ignored',
        severity: 'warning',
      },
      {
        object: ref('orphan'),
        field: 'spec.rules[0].host',
        error: 'no master Ingress for host "x.example.com"; the minion is ignored',
        severity: 'warning',
      },
    ]);
    assert.deepEqual(locationBlock(text, 'location /tea'), [
      '# location for minion default/first',
      ...NIC_PROXY_HEADERS,
      'proxy_pass http://default-first-cafe.example.com-first-80;',
    ]);
    assert.equal(serverBlock(text, 'x.example.com'), null);
  });

  it('class filter: spec.ingressClassName or the legacy annotation', () => {
    const mine = ingress('mine', {
      className: 'limitswitch',
      rules: [{ host: 'a.example.com', paths: [{ path: '/', svc: 'a', port: 80 }] }],
    });
    const legacy = ingress('legacy', {
      annotations: { 'kubernetes.io/ingress.class': 'limitswitch' },
      rules: [{ host: 'b.example.com', paths: [{ path: '/', svc: 'b', port: 80 }] }],
    });
    const other = ingress('other', {
      className: 'nginx',
      rules: [{ host: 'c.example.com', paths: [{ path: '/', svc: 'c', port: 80 }] }],
    });
    const none = ingress('none', {
      rules: [{ host: 'd.example.com', paths: [{ path: '/', svc: 'd', port: 80 }] }],
    });
    const { text } = translate([mine, legacy, other, none], [], [], 'limitswitch');
    assert.ok(serverBlock(text, 'a.example.com'));
    assert.ok(serverBlock(text, 'b.example.com'));
    assert.equal(serverBlock(text, 'c.example.com'), null);
    assert.equal(serverBlock(text, 'd.example.com'), null);
    const withoutClass = new ClusterTranslator({
      ingressClass: 'limitswitch',
      watchIngressWithoutClass: true,
    });
    assert.ok(
      serverBlock(
        withoutClass.translate({ ingresses: [none], services: [], endpointSlices: [], configMap: null }).text,
        'd.example.com',
      ),
    );
  });
});

describe('legacy and less common shapes', () => {
  it('extensions/v1beta1: servicePort by name or number-as-text, spec.backend as the default', () => {
    const legacy = {
      apiVersion: 'extensions/v1beta1',
      kind: 'Ingress',
      metadata: { name: 'old', namespace: 'shop', uid: 'u1', resourceVersion: '3' },
      spec: {
        backend: { serviceName: 'fallback', servicePort: '8080' },
        rules: [
          {
            host: '*.shop.example.com',
            http: { paths: [{ path: '/api', backend: { serviceName: 'api', servicePort: 'http' } }] },
          },
        ],
      },
    };
    const { text, problems } = translate(
      [legacy],
      [service('api', [{ name: 'http', port: 80 }], 'shop')],
      [endpointSlice('api', [{ name: 'http', port: 9000 }], [{ ip: '10.9.0.1' }], { ns: 'shop' })],
    );
    assert.deepEqual(problems, []);
    const server = serverBlock(text, '*.shop.example.com')!;
    assert.ok(server.includes('location /api {'));
    assert.ok(server.includes('proxy_pass http://shop-old-_.shop.example.com-api-http;'));
    assert.ok(server.includes('proxy_pass http://shop-old--fallback-8080;'));
    assert.deepEqual(locationBlock(text, 'upstream shop-old-_.shop.example.com-api-http'), [
      'server 10.9.0.1:9000;',
    ]);
  });

  it('ExternalName Services point at their DNS name; a TLS host without its Secret is told so', () => {
    const ext: Service = {
      kind: 'Service',
      apiVersion: 'v1',
      metadata: { name: 'ext', namespace: 'default' },
      spec: { type: 'ExternalName', externalName: 'api.partner.example', ports: [{ port: 443 }] },
    };
    const { text, problems } = translate(
      [
        ingress('ext', {
          tls: [{ hosts: ['a.example.com'], secretName: 'a-tls' }],
          rules: [{ host: 'a.example.com', paths: [{ path: '/', svc: 'ext', port: 443 }] }],
        }),
      ],
      [ext],
    );
    assert.deepEqual(locationBlock(text, 'upstream default-ext-a.example.com-ext-443'), [
      'server api.partner.example:443;',
    ]);
    assert.ok(!serverBlock(text, 'a.example.com')!.some((line) => line.startsWith('listen 443')));
    assert.deepEqual(
      problems.map((p) => p.error),
      [
        'TLS for host "a.example.com" names secret default/a-tls, which is missing or unusable; the host is served over plain HTTP only',
      ],
    );
  });
});
