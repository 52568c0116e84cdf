import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TranslationProblem } from '../../src/k8s/objects.ts';
import { loadKubeConfig } from '../../src/k8s/watch/kube-config.ts';
import { KubernetesConfigSource } from '../../src/k8s/watch/kubernetes-config-source.ts';
import { FakeKubeApiServer } from '../helpers/fake-kube-apiserver.ts';
import {
  configMap,
  endpointSlice,
  ingress,
  locationBlock,
  NIC_PROXY_HEADERS,
  serverBlock,
  service,
} from './builders.ts';

const CM = { namespace: 'limitswitch', name: 'limitswitch-config' };
const HTTP_SNIPPETS = 'limit_req_zone $binary_remote_addr zone=req_zone_10:1m rate=10r/s;';

const cafe = (annotations: Record<string, string> = {}) =>
  ingress('cafe', {
    className: 'limitswitch',
    annotations,
    rules: [{ host: 'cafe.example.com', paths: [{ path: '/tea', svc: 'tea-svc', port: 80 }] }],
  });

class Harness {
  readonly configs: string[] = [];
  readonly problems: TranslationProblem[] = [];
  readonly restarts: string[] = [];
  readonly logLines: [string, object, string][] = [];
  source!: KubernetesConfigSource;
  private waiters: (() => void)[] = [];

  readonly api: FakeKubeApiServer;
  constructor(api: FakeKubeApiServer) {
    this.api = api;
  }

  start(): Promise<string> {
    this.source = new KubernetesConfigSource({
      kubeConfig: loadKubeConfig({ apiServer: this.api.url }),
      ingressClass: 'limitswitch',
      configMap: CM,
      debounceMs: 20,
      backoff: { initialMs: 50, maxMs: 400 },
      logger: {
        info: (fields, message) => this.logLines.push(['info', fields, message]),
        warn: (fields, message) => this.logLines.push(['warn', fields, message]),
        error: (fields, message) => this.logLines.push(['error', fields, message]),
      },
    });
    this.source.on('config', (text) => {
      this.configs.push(text);
      for (const w of this.waiters.splice(0)) w();
    });
    this.source.on('problem', (p) => this.problems.push(p));
    this.source.on('watch-error', (path) => this.restarts.push(path));
    return this.source.start();
  }

  /** The first emitted config (from now on, or the current one) for which `ok` holds. */
  async config(ok: (text: string) => boolean, what: string, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const text = this.source.current();
      if (text !== null && ok(text)) return text;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no config with ${what}; last:\n${text}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  listCount(resource: string): number {
    return this.api.requests.filter((r) => r.path.endsWith(`/${resource}`) && r.query.watch === undefined)
      .length;
  }
}

describe('KubernetesConfigSource against a fake API server (list/watch protocol)', {
  timeout: 120_000,
}, () => {
  let api: FakeKubeApiServer;
  let h: Harness;

  before(async () => {
    api = await FakeKubeApiServer.start();
    api.apply(configMap(CM.name, { 'http-snippets': HTTP_SNIPPETS }, CM.namespace));
    api.apply(service('tea-svc', [{ port: 80 }]));
    api.apply(endpointSlice('tea-svc', [{ port: 8080 }], [{ ip: '10.1.0.1' }]));
    api.apply(cafe({ 'nginx.org/location-snippets': 'limit_req zone=req_zone_10 burst=1 nodelay;' }));
    api.apply(
      ingress('other-class', {
        className: 'nginx',
        rules: [{ host: 'x.example.com', paths: [{ path: '/', svc: 'x', port: 80 }] }],
      }),
    );
    h = new Harness(api);
  });

  after(async () => {
    await h.source?.stop();
    await api.close();
  });

  it('lists everything and emits the first config (only our class)', async () => {
    const text = await h.start();
    assert.deepEqual(locationBlock(text, 'location /tea'), [
      'limit_req zone=req_zone_10 burst=1 nodelay;',
      ...NIC_PROXY_HEADERS,
      'proxy_pass http://default-cafe-cafe.example.com-tea-svc-80;',
    ]);
    assert.deepEqual(locationBlock(text, 'upstream default-cafe-cafe.example.com-tea-svc-80'), [
      'server 10.1.0.1:8080;',
    ]);
    assert.match(text, /zone=req_zone_10:1m rate=10r\/s;/);
    assert.equal(serverBlock(text, 'x.example.com'), null);
    assert.equal(h.configs.length, 1);
    // Issue 18 §3.5: the Ingress of another class is not served, and the log says so (once).
    assert.deepEqual(
      h.logLines.filter(([level]) => level === 'info'),
      [
        [
          'info',
          { object: 'default/other-class', kind: 'Ingress' },
          'Ingress default/other-class: not served: its class is "nginx", not "limitswitch" (--ingress-class)',
        ],
      ],
    );
  });

  it('Ingress add, update and delete', async () => {
    api.apply(
      ingress('shop', {
        className: 'limitswitch',
        rules: [{ host: 'shop.example.com', paths: [{ path: '/', svc: 'shop', port: 80 }] }],
      }),
    );
    await h.config((t) => serverBlock(t, 'shop.example.com') !== null, 'the shop server');
    api.apply(cafe({ 'nginx.org/limit-req-rate': '5r/s' }));
    const updated = await h.config(
      (t) => t.includes('zone=default/cafe:10m rate=5r/s;'),
      'the new cafe limit',
    );
    assert.deepEqual(
      locationBlock(updated, 'location /tea')?.slice(
        NIC_PROXY_HEADERS.length + 1,
        NIC_PROXY_HEADERS.length + 2,
      ),
      ['limit_req zone=default/cafe;'],
    );
    api.remove('Ingress', 'default', 'shop');
    await h.config((t) => serverBlock(t, 'shop.example.com') === null, 'no shop server');
  });

  it('endpoint changes reach the upstream', async () => {
    api.apply(
      endpointSlice('tea-svc', [{ port: 8080 }], [{ ip: '10.1.0.1', ready: false }, { ip: '10.1.0.7' }]),
    );
    const text = await h.config((t) => t.includes('server 10.1.0.7:8080;'), 'the new endpoint');
    assert.deepEqual(locationBlock(text, 'upstream default-cafe-cafe.example.com-tea-svc-80'), [
      'server 10.1.0.7:8080;',
    ]);
  });

  it('ConfigMap changes reach the http block', async () => {
    api.apply(
      configMap(
        CM.name,
        {
          'http-snippets': `${HTTP_SNIPPETS}\nlimit_req_zone $binary_remote_addr zone=req_zone_20:1m rate=20r/s;`,
          'limit-req-status-code': '429',
        },
        CM.namespace,
      ),
    );
    const text = await h.config((t) => t.includes('zone=req_zone_20:1m rate=20r/s;'), 'the new zone');
    assert.match(text, /\n {4}limit_req_status 429;\n/);
  });

  it('a bad annotation: other Ingresses unaffected, the last good version kept, an Event posted', async () => {
    const before = h.configs.length;
    api.apply(cafe({ 'nginx.org/limit-req-rate': 'fast' }));
    await api.waitFor(() => api.postedEvents.length > 0, 'an Event');
    const ev = api.postedEvents[0]!;
    assert.equal(ev.metadata?.namespace, 'default');
    assert.deepEqual(
      {
        kind: (ev.involvedObject as { kind: string }).kind,
        name: (ev.involvedObject as { name: string }).name,
      },
      { kind: 'Ingress', name: 'cafe' },
    );
    assert.equal(ev.reason, 'Rejected');
    assert.equal(ev.type, 'Warning');
    assert.equal(
      ev.message,
      'metadata.annotations[nginx.org/limit-req-rate]: invalid value "fast": must be a rate like 10r/s or 600r/m; the last good version is still served',
    );
    assert.equal(h.problems.at(-1)?.field, 'metadata.annotations[nginx.org/limit-req-rate]');
    assert.deepEqual(
      h.logLines.filter(([level]) => level !== 'info'),
      [
        [
          'error',
          {
            object: 'default/cafe',
            kind: 'Ingress',
            field: 'metadata.annotations[nginx.org/limit-req-rate]',
            error: 'invalid value "fast": must be a rate like 10r/s or 600r/m',
          },
          'Ingress default/cafe: metadata.annotations[nginx.org/limit-req-rate]: invalid value "fast": must be a rate like 10r/s or 600r/m; the last good version is still served',
        ],
      ],
    );
    // The last good cafe (5r/s) is still what is served: no new config was needed.
    assert.equal(h.configs.length, before);
    assert.ok(h.source.current()!.includes('zone=default/cafe:10m rate=5r/s;'));
    // A good change elsewhere still goes through, and the rejection is not posted twice.
    api.apply(
      ingress('shop', {
        className: 'limitswitch',
        rules: [{ host: 'shop.example.com', paths: [{ path: '/', svc: 'shop', port: 80 }] }],
      }),
    );
    await h.config((t) => serverBlock(t, 'shop.example.com') !== null, 'the shop server');
    assert.equal(api.postedEvents.length, 1);
    api.apply(cafe({ 'nginx.org/limit-req-rate': '7r/s' }));
    await h.config((t) => t.includes('zone=default/cafe:10m rate=7r/s;'), 'the fixed cafe');
  });

  it('bookmarks are ignored', async () => {
    const before = h.configs.length;
    api.bookmark();
    api.apply(cafe({ 'nginx.org/limit-req-rate': '8r/s' }));
    await h.config((t) => t.includes('rate=8r/s;'), 'the change after the bookmark');
    assert.equal(h.configs.length, before + 1);
  });

  it('410 Gone in the stream → re-list, and changes made meanwhile arrive', async () => {
    const lists = h.listCount('ingresses');
    api.expireWatches();
    api.apply(cafe({ 'nginx.org/limit-req-rate': '9r/s' }));
    await h.config((t) => t.includes('rate=9r/s;'), 'the change after 410');
    await api.waitFor(() => h.listCount('ingresses') > lists, 'a re-list');
  });

  it('410 Gone as an HTTP status on re-watch → re-list', async () => {
    const lists = h.listCount('ingresses');
    api.goneAsHttpStatus = true;
    api.holdWatches(true);
    api.closeWatches();
    await api.waitFor(() => api.heldWatchCount() >= 4, 'the clients to re-watch');
    api.remove('Ingress', 'default', 'shop');
    api.compact();
    api.holdWatches(false);
    await h.config((t) => serverBlock(t, 'shop.example.com') === null, 'shop gone after the re-list');
    assert.ok(h.listCount('ingresses') > lists);
    api.goneAsHttpStatus = false;
  });

  it('a dropped connection → restart with backoff, resuming the watch without a re-list', async () => {
    const lists = h.listCount('ingresses');
    const restarts = h.restarts.length;
    const seen = api.requests.length;
    api.dropConnections();
    api.apply(cafe({ 'nginx.org/limit-req-rate': '11r/s' }));
    await h.config((t) => t.includes('rate=11r/s;'), 'the change after the drop');
    assert.ok(h.restarts.length > restarts, 'the informers stopped on the error and were restarted');
    assert.equal(h.listCount('ingresses'), lists);
    const resumed = api.requests
      .slice(seen)
      .filter((r) => r.path.endsWith('/ingresses') && r.query.watch === 'true');
    assert.ok(resumed.length > 0, 'the Ingress watch was opened again');
    assert.ok(Number(resumed[0]!.query.resourceVersion) > 100, 'from the resourceVersion it had reached');
  });
});

describe('slow start', { timeout: 60_000 }, () => {
  it('waits through 503s and a slow list, then emits the first config', async () => {
    const api = await FakeKubeApiServer.start();
    try {
      api.apply(cafe());
      api.setAvailable(false);
      api.listDelayMs = 200;
      const h = new Harness(api);
      const started = h.start();
      await api.waitFor(() => api.requests.length >= 8, 'a few refused requests');
      assert.ok(h.restarts.length >= 4);
      api.setAvailable(true);
      const text = await started;
      assert.ok(serverBlock(text, 'cafe.example.com'));
      await h.source.stop();
    } finally {
      await api.close();
    }
  });
});
