/**
 * `limitswitch replica --kubernetes` end to end: a real replica process watches the fake API server
 * (list/watch over HTTP, through a kubeconfig file) and serves real upstreams; every object change is
 * checked through real HTTP requests to the replica. Redis is real, so `nginx.org/limit-req-scale` sees
 * a second replica register and go.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import type { Store } from '../../src/store/store.ts';
import { FakeKubeApiServer } from '../helpers/fake-kube-apiserver.ts';
import { freePort } from '../helpers/free-port.ts';
import { kubeconfig } from '../helpers/kubeconfig.ts';
import { LimitswitchProcess, TempDir } from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { startUpstream, type TestUpstream } from '../replica/http/harness.ts';
import { configMap, endpointSlice, ingress, type PathSpec, service } from './builders.ts';

const CM = { namespace: 'limitswitch', name: 'limitswitch-config' };
const RATE_FIELD = 'metadata.annotations[nginx.org/limit-req-rate]';
/** The scaled Ingress: 4r/s, burst 4, keyed on X-Client so each measurement starts with a fresh state. */
const SCALED_BURST = 4;

/** http-snippets: the tea zone's key is empty (not accounted) until the map says otherwise. */
const teaSnippets = (key: string) =>
  `map $uri $tea_limit_key { default ${key}; }\nlimit_req_zone $tea_limit_key zone=tea_zone:1m rate=1r/m;\n`;

const cafe = (paths: readonly PathSpec[], annotations: Record<string, string> = {}) =>
  ingress('cafe', {
    className: 'limitswitch',
    annotations: { 'nginx.org/location-snippets': 'limit_req zone=tea_zone;', ...annotations },
    rules: [{ host: 'cafe.example.com', paths }],
  });

const TEA: PathSpec = { path: '/tea', svc: 'tea-svc', port: 80 };

describe('replica --kubernetes: object changes reach a running replica', { timeout: 180_000 }, () => {
  const dir = new TempDir();
  const upstreams = new Map<string, TestUpstream>();
  let api: FakeKubeApiServer;
  let redis: RedisServer;
  let store: Store;
  let replica: LimitswitchProcess;
  let base: string;

  const upstream = (name: string) => upstreams.get(name)!;
  const teaSlice = (name: string) =>
    endpointSlice('tea-svc', [{ port: upstream(name).port }], [{ ip: '127.0.0.1' }]);

  before(async () => {
    for (const name of ['tea-a', 'tea-c', 'coffee-b']) {
      upstreams.set(
        name,
        await startUpstream((_req, res) => {
          res.setHeader('content-type', 'text/plain');
          res.end(name);
        }),
      );
    }
    [api, redis] = await Promise.all([FakeKubeApiServer.start(), RedisServer.start()]);
    store = openRedisStore({ url: redis.url });
    api.apply(
      configMap(
        CM.name,
        { 'http-snippets': teaSnippets('""'), 'limit-req-status-code': '429' },
        CM.namespace,
      ),
    );
    api.apply(service('tea-svc', [{ port: 80 }]));
    api.apply(service('coffee-svc', [{ port: 80 }]));
    api.apply(teaSlice('tea-a'));
    api.apply(endpointSlice('coffee-svc', [{ port: upstream('coffee-b').port }], [{ ip: '127.0.0.1' }]));
    api.apply(cafe([TEA]));
    api.apply(
      ingress('other-class', {
        className: 'nginx',
        rules: [{ host: 'other.example.com', paths: [{ path: '/', svc: 'tea-svc', port: 80 }] }],
      }),
    );
    const listenPort = await freePort();
    replica = new LimitswitchProcess('replica', [
      '--kubernetes',
      '--kubeconfig',
      dir.write('kubeconfig.yaml', kubeconfig(api.url)),
      '--ingress-class',
      'limitswitch',
      '--configmap',
      `${CM.namespace}/${CM.name}`,
      '--listen-port',
      String(listenPort),
      '--redis',
      redis.url,
      '--id',
      'replica-k8s',
    ]);
    const listening = await replica.waitForLog('replica listening');
    assert.deepEqual(listening.listen, [`0.0.0.0:${listenPort}`]);
    base = `http://127.0.0.1:${listenPort}`;
  });

  after(async () => {
    await replica?.stop();
    await store?.close();
    await Promise.all([api?.close(), redis?.stop(), ...[...upstreams.values()].map((u) => u.close())]);
    dir.remove();
  });

  async function get(host: string, path: string, headers: Record<string, string> = {}) {
    const res = await request(`${base}${path}`, { headers: { host, ...headers } });
    return { status: res.statusCode, text: await res.body.text() };
  }

  /** Polls until `host``path` answers `status` (and `text`, when given): the change reached the replica. */
  async function answers(host: string, path: string, status: number, text?: string): Promise<void> {
    let last = { status: 0, text: '' };
    await waitFor(
      async () => {
        last = await get(host, path);
        return last.status === status && (text === undefined || last.text === text);
      },
      {
        timeoutMs: 30_000,
        intervalMs: 50,
        message: `${host}${path} → ${status} ${text ?? ''} (last: ${last.status} ${last.text.slice(0, 80)})`,
      },
    );
  }

  /** The first log line `msg` written after `mark` lines (so earlier, older ones do not count). */
  function logAfter(
    mark: number,
    msg: string,
    match: (line: Record<string, unknown>) => boolean = () => true,
  ) {
    return replica.waitForLog(msg, (line) => replica.lines.indexOf(line) >= mark && match(line));
  }

  test('the first config comes from the listed objects (our class only)', async () => {
    assert.deepEqual(await get('cafe.example.com', '/tea'), { status: 200, text: 'tea-a' });
    assert.equal((await get('cafe.example.com', '/coffee')).status, 404);
    assert.equal((await get('other.example.com', '/')).status, 404);
    const watched = new Set(api.requests.filter((r) => r.query.watch === 'true').map((r) => r.path));
    assert.deepEqual([...watched].sort(), [
      '/api/v1/namespaces/limitswitch/configmaps',
      '/api/v1/secrets',
      '/api/v1/services',
      '/apis/discovery.k8s.io/v1/endpointslices',
      '/apis/networking.k8s.io/v1/ingresses',
    ]);
  });

  test('Ingress add: the new host is served', async () => {
    api.apply(
      ingress('shop', {
        className: 'limitswitch',
        rules: [{ host: 'shop.example.com', paths: [{ path: '/', svc: 'coffee-svc', port: 80 }] }],
      }),
    );
    await answers('shop.example.com', '/', 200, 'coffee-b');
  });

  test('Ingress update: a new path and backend replace the old ones', async () => {
    api.apply(
      ingress('shop', {
        className: 'limitswitch',
        rules: [{ host: 'shop.example.com', paths: [{ path: '/beans', svc: 'tea-svc', port: 80 }] }],
      }),
    );
    await answers('shop.example.com', '/beans', 200, 'tea-a');
    assert.equal((await get('shop.example.com', '/')).status, 404);
  });

  test('Ingress delete: the host falls to the default server (404)', async () => {
    api.remove('Ingress', 'default', 'shop');
    await answers('shop.example.com', '/beans', 404);
    assert.deepEqual(await get('cafe.example.com', '/tea'), { status: 200, text: 'tea-a' });
  });

  test('EndpointSlice change: traffic moves to the new upstream, no request fails meanwhile', async () => {
    const seen: { status: number; text: string }[] = [];
    let moved = false;
    const traffic = (async () => {
      while (!moved) seen.push(await get('cafe.example.com', '/tea'));
    })();
    const before = upstream('tea-c').requests.length;
    api.apply(teaSlice('tea-c'));
    try {
      await answers('cafe.example.com', '/tea', 200, 'tea-c');
    } finally {
      moved = true;
      await traffic;
    }
    assert.ok(upstream('tea-c').requests.length > before);
    const failed = seen.filter((r) => r.status !== 200 || (r.text !== 'tea-a' && r.text !== 'tea-c'));
    assert.deepEqual(failed, []);
    assert.ok(seen.length > 0);
  });

  test('a bad annotation: that Ingress keeps its last good version, others are unaffected, an Event names it', async () => {
    const mark = replica.lines.length;
    // The bad version also adds /coffee: it must not be served.
    api.apply(
      cafe([TEA, { path: '/coffee', svc: 'coffee-svc', port: 80 }], { 'nginx.org/limit-req-rate': 'fast' }),
    );
    const message = `${RATE_FIELD}: invalid value "fast": must be a rate like 10r/s or 600r/m; the last good version is still served`;
    await api.waitFor(
      () => api.postedEvents.some((e) => e.message === message),
      'the Event for the bad annotation',
    );
    const events = api.postedEvents.filter((e) => e.message === message);
    assert.equal(events.length, 1);
    const ev = events[0]!;
    assert.equal(ev.metadata?.namespace, 'default');
    assert.deepEqual(
      {
        kind: (ev.involvedObject as { kind: string }).kind,
        name: (ev.involvedObject as { name: string }).name,
        reason: ev.reason,
        type: ev.type,
      },
      { kind: 'Ingress', name: 'cafe', reason: 'Rejected', type: 'Warning' },
    );
    const line = await logAfter(mark, `Ingress default/cafe: ${message}`);
    assert.equal(line.field, RATE_FIELD);
    assert.equal(line.object, 'default/cafe');
    // Another Ingress still goes through.
    api.apply(
      ingress('juice', {
        className: 'limitswitch',
        rules: [{ host: 'juice.example.com', paths: [{ path: '/', svc: 'coffee-svc', port: 80 }] }],
      }),
    );
    await answers('juice.example.com', '/', 200, 'coffee-b');
    assert.deepEqual(await get('cafe.example.com', '/tea'), { status: 200, text: 'tea-c' });
    assert.equal((await get('cafe.example.com', '/coffee')).status, 404);
    // Fixed: the new version (with /coffee) is served.
    api.apply(cafe([TEA, { path: '/coffee', svc: 'coffee-svc', port: 80 }]));
    await answers('cafe.example.com', '/coffee', 200, 'coffee-b');
  });

  test('ConfigMap change: http-snippets switch the tea limit on (429), then off again', async () => {
    for (let i = 0; i < 5; i++) assert.equal((await get('cafe.example.com', '/tea')).status, 200);
    api.apply(
      configMap(
        CM.name,
        { 'http-snippets': teaSnippets('$binary_remote_addr'), 'limit-req-status-code': '429' },
        CM.namespace,
      ),
    );
    // 1r/m, no burst: once the new map is in force, the second request of this client is rejected.
    await answers('cafe.example.com', '/tea', 429);
    assert.equal((await get('cafe.example.com', '/tea')).status, 429);
    // Only the cafe's locations name the zone.
    assert.deepEqual(await get('juice.example.com', '/'), { status: 200, text: 'coffee-b' });
    // A change that leaves the zone's key and size alone keeps its state: not one request passes
    // between the old status and the new one (a fresh zone would let the first through).
    api.apply(
      configMap(
        CM.name,
        { 'http-snippets': teaSnippets('$binary_remote_addr'), 'limit-req-status-code': '503' },
        CM.namespace,
      ),
    );
    const statuses = new Set<number>();
    await waitFor(
      async () => {
        const { status } = await get('cafe.example.com', '/tea');
        statuses.add(status);
        return status === 503;
      },
      { timeoutMs: 30_000, intervalMs: 50, message: 'limit-req-status-code 503' },
    );
    assert.deepEqual(
      [...statuses].filter((s) => s !== 429 && s !== 503),
      [],
    );
    api.apply(
      configMap(
        CM.name,
        { 'http-snippets': teaSnippets('""'), 'limit-req-status-code': '429' },
        CM.namespace,
      ),
    );
    await answers('cafe.example.com', '/tea', 200, 'tea-c');
  });

  /**
   * Requests with X-Client `client`, one after the other, for `ms`: the rate they were granted beyond
   * the first request and the burst. nginx's arithmetic bounds it by the zone's rate exactly
   * (passes ≤ 1 + burst + rate × seconds), whatever the machine's pace.
   */
  async function grantedRate(client: string, ms: number): Promise<number> {
    const startMs = performance.now();
    let passed = 0;
    while (performance.now() - startMs < ms) {
      const { status } = await get('scaled.example.com', '/', { 'x-client': client });
      assert.ok(status === 200 || status === 429, `status ${status}`);
      if (status === 200) passed++;
      await delay(10); // pacing, not synchronisation: the burst absorbs any gap below 1 s
    }
    return (passed - 1 - SCALED_BURST) / ((performance.now() - startMs) / 1000);
  }

  test('limit-req-scale: a second live replica halves the rate; it doubles back when that one goes', async () => {
    api.apply(
      ingress('scaled', {
        className: 'limitswitch',
        annotations: {
          'nginx.org/limit-req-rate': '4r/s',
          'nginx.org/limit-req-burst': String(SCALED_BURST),
          'nginx.org/limit-req-no-delay': 'true',
          'nginx.org/limit-req-key': '$http_x_client',
          'nginx.org/limit-req-scale': 'true',
          'nginx.org/limit-req-reject-code': '429',
        },
        rules: [{ host: 'scaled.example.com', paths: [{ path: '/', svc: 'tea-svc', port: 80 }] }],
      }),
    );
    await answers('scaled.example.com', '/', 200, 'tea-c');
    const alone = await grantedRate('alone', 3000);
    assert.ok(alone > 2.8 && alone <= 4.05, `one replica: 4r/s expected, granted ${alone.toFixed(2)}/s`);

    let mark = replica.lines.length;
    const ghost = {
      id: 'replica-ghost',
      version: '0.1.0',
      configHash: 'ghost',
      appliedRevision: 0,
      appliedCommit: '',
      startedAtMs: Date.now(),
      keyvalZones: [],
      limitReqZones: [],
    };
    await store.registry.heartbeat(ghost, 120_000);
    const changed = await logAfter(mark, 'live replica count changed');
    assert.deepEqual([changed.replicas, changed.was], [2, 1]);
    await logAfter(mark, 'configuration reloaded', (l) => l.replicas === 2);
    const halved = await grantedRate('halved', 3000);
    assert.ok(halved <= 2.05, `two replicas: 2r/s expected, granted ${halved.toFixed(2)}/s`);

    mark = replica.lines.length;
    await store.registry.deregister(ghost.id);
    await logAfter(mark, 'configuration reloaded', (l) => l.replicas === 1);
    const back = await grantedRate('back', 3000);
    assert.ok(back > 2.8, `one replica again: 4r/s expected, granted ${back.toFixed(2)}/s`);
  });

  test('SIGTERM stops the watches and the replica exits 0', async () => {
    assert.ok(api.watchCount() > 0);
    assert.deepEqual(await replica.stop(), { code: 0, signal: null });
    await api.waitFor(() => api.watchCount() === 0, 'the watches to close');
  });
});
