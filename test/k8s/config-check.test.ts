import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfigText } from '../../src/config/index.ts';
import type { ConfigMap, Ingress } from '../../src/k8s/objects.ts';
import { ClusterTranslator } from '../../src/k8s/translate/cluster-translator.ts';
import { configMap, ingress, serverBlock } from './builders.ts';

const ZONES = 'limit_req_zone $binary_remote_addr zone=z:1m rate=1r/s;';
const site = (name: string, annotations: Record<string, string>) =>
  ingress(name, {
    annotations,
    rules: [{ host: `${name}.example.com`, paths: [{ path: '/', svc: name, port: 80 }] }],
  });
const objects = (ingresses: Ingress[], cm: ConfigMap | null) => ({
  ingresses,
  services: [],
  endpointSlices: [],
  configMap: cm,
});

describe('each fragment is loaded by the config parser before it joins', () => {
  it('names the annotation whose text the parser refused, and keeps the others', () => {
    const r = new ClusterTranslator().translate(
      objects(
        [
          site('good', { 'nginx.org/location-snippets': 'limit_req zone=z;' }),
          site('zone', { 'nginx.org/location-snippets': 'limit_req zone=nope;' }),
          site('directive', { 'nginx.org/location-snippets': 'bogus_directive on;' }),
          site('key', { 'nginx.org/limit-req-rate': '1r/s', 'nginx.org/limit-req-key': '$nope_var' }),
          site('server', { 'nginx.org/server-snippets': 'limit_req_status 200;' }),
        ],
        configMap('cfg', { 'http-snippets': ZONES }),
      ),
    );
    assert.deepEqual(
      r.problems.map((p) => [p.object.name, p.field, p.error, p.keptLastGood]),
      [
        [
          'zone',
          'metadata.annotations[nginx.org/location-snippets]',
          'zero size shared memory zone "nope"',
          false,
        ],
        [
          'directive',
          'metadata.annotations[nginx.org/location-snippets]',
          'unknown directive "bogus_directive"',
          false,
        ],
        ['key', 'metadata.annotations[nginx.org/limit-req-key]', 'unknown "nope_var" variable', false],
        [
          'server',
          'metadata.annotations[nginx.org/server-snippets]',
          'value must be between 400 and 599',
          false,
        ],
      ],
    );
    assert.ok(serverBlock(r.text, 'good.example.com'));
    for (const bad of ['zone', 'directive', 'key', 'server'])
      assert.equal(serverBlock(r.text, `${bad}.example.com`), null);
    const model = loadConfigText(r.text, 'rendered');
    assert.deepEqual(
      model.http.servers.map((s) => s.serverNames[0]),
      ['_', 'good.example.com'],
    );
  });

  it('a ConfigMap the parser refuses keeps the last good one; its location snippets are checked too', () => {
    const t = new ClusterTranslator();
    const good = configMap(
      'cfg',
      { 'http-snippets': ZONES, 'location-snippets': 'limit_req zone=z;' },
      'ls',
      '1',
    );
    const badHttp = configMap('cfg', { 'http-snippets': `${ZONES}\nfoo bar;` }, 'ls', '2');
    const badLocation = configMap(
      'cfg',
      { 'http-snippets': ZONES, 'location-snippets': 'limit_req zone=q;' },
      'ls',
      '3',
    );
    const ing = [site('a', {})];
    const first = t.translate(objects(ing, good));
    assert.deepEqual(first.problems, []);
    for (const [cm, field, error] of [
      [badHttp, 'data[http-snippets]', 'unknown directive "foo"'],
      [badLocation, 'data[location-snippets]', 'zero size shared memory zone "q"'],
    ] as const) {
      const r = t.translate(objects(ing, cm));
      assert.deepEqual(
        r.problems.map((p) => [p.object.name, p.object.resourceVersion, p.field, p.error, p.keptLastGood]),
        [['cfg', cm.metadata?.resourceVersion, field, error, true]],
      );
      assert.equal(r.text, first.text);
    }
  });
});
