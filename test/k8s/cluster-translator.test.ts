import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConfigMap, Ingress } from '../../src/k8s/objects.ts';
import { ClusterTranslator } from '../../src/k8s/translate/cluster-translator.ts';
import { configMap, ingress, locationBlock, serverBlock } from './builders.ts';

const objects = (ingresses: Ingress[], cm: ConfigMap | null = null) => ({
  ingresses,
  services: [],
  endpointSlices: [],
  configMap: cm,
});

const ref = (name: string, rv = '1') => ({
  kind: 'Ingress',
  apiVersion: 'networking.k8s.io/v1',
  namespace: 'default',
  name,
  uid: `uid-${name}`,
  resourceVersion: rv,
});

const site = (name: string, annotations: Record<string, string> = {}, rv = '1') =>
  ingress(name, {
    rv,
    annotations,
    rules: [{ host: `${name}.example.com`, paths: [{ path: '/', svc: name, port: 80 }] }],
  });

describe('one bad Ingress never takes down the others', () => {
  it('a bad annotation rejects only its Ingress, with object, field and error', () => {
    const t = new ClusterTranslator();
    const r = t.translate(objects([site('good'), site('bad', { 'nginx.org/limit-req-rate': '10r/h' })]));
    assert.deepEqual(r.problems, [
      {
        object: ref('bad'),
        field: 'metadata.annotations[nginx.org/limit-req-rate]',
        error: 'invalid value "10r/h": must be a rate like 10r/s or 600r/m',
        severity: 'error',
        keptLastGood: false,
      },
    ]);
    assert.ok(serverBlock(r.text, 'good.example.com'));
    assert.equal(serverBlock(r.text, 'bad.example.com'), null);
    assert.deepEqual([...r.ingresses], [['default/good', 'current']]);
  });

  it('a bad update keeps the last good version of that Ingress', () => {
    const t = new ClusterTranslator();
    const zones = configMap('cfg', {
      'http-snippets': ['a', 'b', 'c']
        .map((z) => `limit_req_zone $binary_remote_addr zone=${z}:1m rate=1r/s;`)
        .join('\n'),
    });
    const v1 = site('shop', { 'nginx.org/location-snippets': 'limit_req zone=a;' }, '1');
    const v2 = site('shop', { 'nginx.org/location-snippets': 'limit_req zone=b;\n}\nlocation /evil {' }, '2');
    t.translate(objects([v1, site('other')], zones));
    const r = t.translate(objects([v2, site('other')], zones));
    assert.deepEqual(r.problems, [
      {
        object: ref('shop', '2'),
        field: 'metadata.annotations[nginx.org/location-snippets]',
        error: 'invalid snippet: unexpected "}" on line 2: a snippet cannot close the block it is placed in',
        severity: 'error',
        keptLastGood: true,
      },
    ]);
    assert.ok(serverBlock(r.text, 'shop.example.com')!.includes('limit_req zone=a;'));
    assert.equal(r.ingresses.get('default/shop'), 'last-good');
    assert.equal(r.ingresses.get('default/other'), 'current');
    // Fixing it brings the new version in; deleting it forgets the old one.
    const v3 = site('shop', { 'nginx.org/location-snippets': 'limit_req zone=c;' }, '3');
    assert.equal(
      locationBlock(t.translate(objects([v3], zones)).text, 'location /')?.[0],
      'limit_req zone=c;',
    );
    t.translate(objects([], zones));
    const again = t.translate(objects([v2], zones));
    assert.equal(again.problems[0]?.keptLastGood, false);
    assert.equal(serverBlock(again.text, 'shop.example.com'), null);
  });

  it('reports every bad field of an Ingress at once', () => {
    const r = new ClusterTranslator().translate(
      objects([
        site('x', {
          'nginx.org/limit-req-burst': '-1',
          'nginx.org/limit-req-reject-code': '200',
          'nginx.org/mergeable-ingress-type': 'boss',
        }),
      ]),
    );
    assert.deepEqual(
      r.problems.map((p) => [p.field, p.error]),
      [
        [
          'metadata.annotations[nginx.org/mergeable-ingress-type]',
          'invalid value "boss": must be master or minion',
        ],
        [
          'metadata.annotations[nginx.org/limit-req-burst]',
          'invalid value "-1": must be a non-negative integer',
        ],
        [
          'metadata.annotations[nginx.org/limit-req-reject-code]',
          'invalid value "200": must be an HTTP status code between 400 and 599',
        ],
      ],
    );
  });

  it('checks the Ingress spec: paths, hosts, backends, and the mergeable shapes', () => {
    const bad = ingress('bad', {
      rules: [{ host: 'a.example.com', paths: [{ path: '/a;b', svc: 'a', port: 80 }] }, { host: 'Bad_Host' }],
    });
    const master = ingress('master', {
      annotations: { 'nginx.org/mergeable-ingress-type': 'master' },
      rules: [{ host: 'm.example.com', paths: [{ path: '/', svc: 'm', port: 80 }] }],
    });
    const minion = ingress('minion', {
      annotations: { 'nginx.org/mergeable-ingress-type': 'minion' },
      tls: [{ hosts: ['m.example.com'], secretName: 's' }],
      rules: [{ host: 'm.example.com', paths: [{ path: '/x', svc: 'm', port: 80 }] }],
    });
    const r = new ClusterTranslator().translate(objects([bad, master, minion]));
    assert.deepEqual(
      r.problems.map((p) => [p.object.name, p.field, p.error]),
      [
        [
          'bad',
          'spec.rules[0].http.paths[0].path',
          'invalid value "/a;b": must start with "/" and contain no whitespace, braces, semicolons, quotes, backslashes or "#"',
        ],
        [
          'bad',
          'spec.rules[1].host',
          'invalid value "Bad_Host": must be a lower-case DNS name, optionally starting with "*."',
        ],
        ['master', 'spec.rules[0].http.paths', 'a master cannot have paths; put them in minions'],
        ['minion', 'spec.tls', 'a minion cannot have TLS; put it in the master'],
      ],
    );
  });

  it('a bad ConfigMap value keeps the last good ConfigMap', () => {
    const t = new ClusterTranslator();
    const good = configMap(
      'cfg',
      { 'http-snippets': 'limit_req_zone $binary_remote_addr zone=z:1m rate=1r/s;' },
      'ls',
      '1',
    );
    const bad = configMap(
      'cfg',
      {
        'http-snippets': 'limit_req_zone $binary_remote_addr zone=y:1m rate=1r/s;',
        'limit-req-status-code': '700',
      },
      'ls',
      '2',
    );
    t.translate(objects([], good));
    const r = t.translate(objects([], bad));
    assert.deepEqual(r.problems, [
      {
        object: {
          kind: 'ConfigMap',
          apiVersion: 'v1',
          namespace: 'ls',
          name: 'cfg',
          uid: 'uid-cm-cfg',
          resourceVersion: '2',
        },
        field: 'data[limit-req-status-code]',
        error: 'invalid value "700": must be an HTTP status code between 400 and 599',
        severity: 'error',
        keptLastGood: true,
      },
    ]);
    assert.match(r.text, /zone=z:1m/);
    assert.doesNotMatch(r.text, /zone=y:1m/);
  });
});
