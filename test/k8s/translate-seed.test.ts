import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { ClusterTranslator } from '../../src/k8s/translate/cluster-translator.ts';
import { emptyObjects, readYamlObjects } from '../../src/k8s/yaml-objects.ts';
import { TestPki } from '../helpers/tls-certs.ts';
import {
  endpointSlice,
  locationBlock,
  NIC_PROXY_HEADERS,
  serverBlock,
  service,
  tlsSecret,
} from './builders.ts';

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

/** The seed's Ingresses name `cafe-secret` for TLS: it exists here, as it does in the article's cluster. */
const pki = new TestPki();
const cafeCert = pki.server('cafe', ['cafe.example.com']);
const CAFE_SECRET = tlsSecret('cafe-secret', { cert: pki.read(cafeCert.cert), key: pki.read(cafeCert.key) });
pki.remove();

function translateFixtures(...names: string[]) {
  const objs = emptyObjects();
  for (const n of names) readYamlObjects(fixture(n), n, objs);
  return new ClusterTranslator({ ingressClass: 'nginx' }).translate({
    ingresses: objs.ingresses,
    services: [service('tea-svc', [{ port: 80 }]), service('coffee-svc', [{ port: 80 }])],
    endpointSlices: [
      endpointSlice(
        'tea-svc',
        [{ port: 8080 }],
        [{ ip: '10.1.0.2' }, { ip: '10.1.0.1' }, { ip: '10.1.0.9', ready: false }],
      ),
      endpointSlice('coffee-svc', [{ port: 8080 }], [{ ip: '10.2.0.1' }]),
    ],
    configMap: objs.configMaps[0] ?? null,
    secrets: [CAFE_SECRET],
  });
}

describe('the seed article, legacy extensions/v1beta1 objects', () => {
  it('mergeable master/minions: each minion’s snippets on its own path, NIC upstream names', () => {
    const { text, problems } = translateFixtures('seed-configmap.yaml', 'seed-mergeable-v1beta1.yaml');
    assert.deepEqual(problems, []);
    assert.deepEqual(locationBlock(text, 'location /tea'), [
      '# location for minion default/cafe-ingress-teasvc-minion',
      'limit_req zone=req_zone_10 burst=1 nodelay;',
      'limit_req zone=perserver nodelay;',
      ...NIC_PROXY_HEADERS,
      'proxy_pass http://default-cafe-ingress-teasvc-minion-cafe.example.com-tea-svc-80;',
    ]);
    assert.deepEqual(locationBlock(text, 'location /coffee'), [
      '# location for minion default/cafe-ingress-coffeesvc-minion',
      'limit_req zone=req_zone_20 burst=1 nodelay;',
      'limit_req zone=perserver nodelay;',
      ...NIC_PROXY_HEADERS,
      'proxy_pass http://default-cafe-ingress-coffeesvc-minion-cafe.example.com-coffee-svc-80;',
    ]);
    assert.deepEqual(
      locationBlock(text, 'upstream default-cafe-ingress-teasvc-minion-cafe.example.com-tea-svc-80'),
      ['server 10.1.0.1:8080;', 'server 10.1.0.2:8080;'],
    );
    const server = serverBlock(text, 'cafe.example.com')!;
    assert.equal(server[0], '# master default/cafe-ingress-master');
    // TLS from the Secret, NIC's file layout; plain HTTP redirected (ssl-redirect)
    assert.ok(server.includes('listen 443 ssl;'));
    assert.ok(server.includes('ssl_certificate /etc/limitswitch/secrets/default-cafe-secret;'));
    assert.ok(server.includes('ssl_certificate_key /etc/limitswitch/secrets/default-cafe-secret;'));
    assert.match(text, /server_name cafe\.example\.com;\n {8}return 301 "?https:\/\/\$host\$request_uri"?;/);
    // The ConfigMap's http-snippets come first, unchanged.
    assert.match(
      text,
      /http \{\n {4}# ConfigMap nginx-ingress\/nginx-config: http-snippets\n {4}#keyval_zone zone=limitreq_uri:64k type=prefix;\n {4}keyval_zone zone=limitreq_uri:64k;\n/,
    );
    assert.match(text, /\n {4}limit_req_zone \$limit_key_servername zone=perserver:10m rate=50r\/s;\n/);
  });

  it('one Ingress with location-snippets: the same limits on both paths', () => {
    const { text, problems } = translateFixtures('seed-configmap.yaml', 'seed-annotation-v1beta1.yaml');
    // This Ingress names no class; with a class filter it is not ours.
    assert.deepEqual(problems, []);
    assert.equal(locationBlock(text, 'location /tea'), null);
    const all = new ClusterTranslator().translate({
      ingresses: readYamlObjects(fixture('seed-annotation-v1beta1.yaml'), 'x').ingresses,
      services: [],
      endpointSlices: [],
      configMap: readYamlObjects(fixture('seed-configmap.yaml'), 'y').configMaps[0]!,
      secrets: [CAFE_SECRET],
    });
    assert.deepEqual(all.problems, []);
    for (const path of ['/tea', '/coffee']) {
      assert.deepEqual(locationBlock(all.text, `location ${path}`)?.slice(0, 2), [
        'limit_req zone=req_zone_10 burst=1 nodelay;',
        'limit_req zone=perserver nodelay;',
      ]);
    }
    assert.deepEqual(locationBlock(all.text, 'upstream default-cafe-ingress-cafe.example.com-tea-svc-80'), [
      '# Service default/tea-svc not found: placeholder server',
      'server 127.0.0.1:8181;',
    ]);
  });
});
