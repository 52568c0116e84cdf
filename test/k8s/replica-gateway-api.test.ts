/**
 * `limitswitch replica --kubernetes --gateway-api` end to end: a real replica process watches Gateway
 * API objects and RateLimitPolicies on the fake API server (real list/watch wire protocol) and serves
 * real upstreams; each change is seen through real requests, without a restart or reload, and each
 * object's status is written back through the `/status` subresource.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { FakeKubeApiServer } from '../helpers/fake-kube-apiserver.ts';
import { freePort } from '../helpers/free-port.ts';
import { kubeconfig } from '../helpers/kubeconfig.ts';
import { LimitswitchProcess, TempDir } from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { startUpstream, type TestUpstream } from '../replica/http/harness.ts';
import { endpointSlice, service } from './builders.ts';
import { gateway, gatewayClass, httpRoute, rateLimitPolicy, rule } from './gateway/gateway-builders.ts';

type Conds = { type: string; status: string; reason: string; message: string }[];

describe('replica --gateway-api: Gateway, HTTPRoute and RateLimitPolicy changes reach a running replica', {
  timeout: 180_000,
}, () => {
  const dir = new TempDir();
  const upstreams = new Map<string, TestUpstream>();
  let api: FakeKubeApiServer;
  let redis: RedisServer;
  let replica: LimitswitchProcess;
  let base: string;

  before(async () => {
    for (const name of ['tea', 'coffee', 'coffee-v2']) {
      upstreams.set(
        name,
        await startUpstream((_req, res) => {
          res.setHeader('content-type', 'text/plain');
          res.end(name);
        }),
      );
    }
    [api, redis] = await Promise.all([FakeKubeApiServer.start(), RedisServer.start()]);
    for (const name of ['tea', 'coffee', 'coffee-v2']) {
      api.apply(service(`${name}-svc`, [{ port: 80 }]));
      api.apply(endpointSlice(`${name}-svc`, [{ port: upstreams.get(name)!.port }], [{ ip: '127.0.0.1' }]));
    }
    api.apply(gatewayClass());
    api.apply(gateway('cafe'));
    api.apply(httpRoute('tea', [rule('/tea', 'tea-svc')]));
    api.apply(httpRoute('coffee', [rule('/coffee', 'coffee-svc')]));
    const listenPort = await freePort();
    replica = new LimitswitchProcess('replica', [
      '--kubernetes',
      '--gateway-api',
      '--kubeconfig',
      dir.write('kubeconfig.yaml', kubeconfig(api.url)),
      '--listen-port',
      String(listenPort),
      '--redis',
      redis.url,
      '--id',
      'replica-gateway',
    ]);
    await replica.waitForLog('replica listening');
    base = `http://127.0.0.1:${listenPort}`;
  });

  after(async () => {
    await replica?.stop();
    await Promise.all([api?.close(), redis?.stop(), ...[...upstreams.values()].map((u) => u.close())]);
    dir.remove();
  });

  async function get(path: string, headers: Record<string, string> = {}) {
    const res = await request(`${base}${path}`, { headers: { host: 'cafe.example.com', ...headers } });
    return { status: res.statusCode, text: await res.body.text() };
  }

  async function answers(path: string, status: number, text?: string, headers: Record<string, string> = {}) {
    let last = { status: 0, text: '' };
    await waitFor(
      async () => {
        last = await get(path, headers);
        return last.status === status && (text === undefined || last.text === text);
      },
      {
        timeoutMs: 30_000,
        intervalMs: 50,
        message: `${path} → ${status} ${text ?? ''} (last: ${last.status} ${last.text.slice(0, 60)})`,
      },
    );
  }

  /** Waits until the stored object's status satisfies `check`. */
  async function statusOf(kind: string, name: string, check: (status: Record<string, unknown>) => boolean) {
    let last: unknown;
    await api
      .waitFor(
        () => {
          last = api.get(kind, 'default', name)?.status;
          return last !== undefined && check(last as Record<string, unknown>);
        },
        `${kind} ${name} status`,
        30_000,
      )
      .catch((err) => {
        throw new Error(`${(err as Error).message}; last: ${JSON.stringify(last)}`);
      });
    return last as Record<string, unknown>;
  }

  const policyReason = (s: Record<string, unknown>) =>
    (s.ancestors as { conditions: Conds }[] | undefined)?.[0]?.conditions.find((c) => c.type === 'Accepted')
      ?.reason;

  test('the listed objects are served and their status written: class Accepted, Gateway Programmed, routes Accepted', async () => {
    assert.deepEqual(await get('/tea'), { status: 200, text: 'tea' });
    assert.deepEqual(await get('/coffee/latte'), { status: 200, text: 'coffee' });
    assert.equal((await get('/coffeeshop')).status, 404, 'a prefix matches whole path segments');
    await statusOf('GatewayClass', 'limitswitch', (s) => (s.conditions as Conds)[0]?.reason === 'Accepted');
    const gw = await statusOf(
      'Gateway',
      'cafe',
      (s) => (s.listeners as { attachedRoutes: number }[] | undefined)?.[0]?.attachedRoutes === 2,
    );
    assert.ok((gw.conditions as Conds).some((c) => c.type === 'Programmed' && c.status === 'True'));
    const route = await statusOf('HTTPRoute', 'coffee', (s) => Array.isArray(s.parents));
    const parent = (
      route.parents as {
        controllerName: string;
        conditions: (Conds[number] & { lastTransitionTime: string })[];
      }[]
    )[0]!;
    assert.equal(parent.controllerName, 'limitswitch.io/gateway-controller');
    assert.equal(parent.conditions[0]!.reason, 'Accepted');
    assert.match(parent.conditions[0]!.lastTransitionTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  test('a RateLimitPolicy created, changed and deleted: the limits follow, without a restart', async () => {
    const pid = replica.pid;
    const policy = (rate: string, burst: number) =>
      rateLimitPolicy(
        'coffee-limit',
        { name: 'coffee' },
        { rejectCode: 429, local: { rules: [{ rate, burst, noDelay: true, key: '$http_x_client' }] } },
      );
    api.apply(policy('1r/m', 0));
    await answers('/coffee', 429, undefined, { 'x-client': 'probe-1' });
    assert.deepEqual((await get('/coffee', { 'x-client': 'a' })).status, 200);
    assert.deepEqual((await get('/coffee', { 'x-client': 'a' })).status, 429);
    assert.deepEqual((await get('/tea', { 'x-client': 'a' })).status, 200, 'the tea route is not limited');
    assert.equal(
      policyReason(await statusOf('RateLimitPolicy', 'coffee-limit', (s) => policyReason(s) === 'Accepted')),
      'Accepted',
    );
    await statusOf('HTTPRoute', 'coffee', (s) =>
      (s.parents as { conditions: Conds }[]).some((p) =>
        p.conditions.some((c) => c.type === 'gateway.nginx.org/RateLimitPolicyAffected'),
      ),
    );

    api.apply(policy('1r/m', 2));
    // a fresh client now has 1 + burst 2
    await waitFor(
      async () => {
        const client = `b-${Math.random()}`;
        const codes = [];
        for (let i = 0; i < 4; i++) codes.push((await get('/coffee', { 'x-client': client })).status);
        return codes.join() === '200,200,200,429';
      },
      { timeoutMs: 30_000, intervalMs: 50, message: 'burst 2 in force' },
    );

    api.remove('RateLimitPolicy', 'default', 'coffee-limit');
    await waitFor(
      async () => {
        const codes = [];
        for (let i = 0; i < 4; i++) codes.push((await get('/coffee', { 'x-client': 'c' })).status);
        return codes.every((c) => c === 200);
      },
      { timeoutMs: 30_000, intervalMs: 50, message: 'no limit after the delete' },
    );
    assert.equal(replica.pid, pid);
  });

  test('a conflicting younger policy is Conflicted; a bad one is Invalid; the oldest keeps limiting', async () => {
    api.apply(
      rateLimitPolicy(
        'first',
        { name: 'coffee' },
        { rejectCode: 429, local: { rules: [{ rate: '1r/m', key: '$http_x_client' }] } },
        { created: 10 },
      ),
    );
    await answers('/coffee', 429, undefined, { 'x-client': 'probe-2' });
    api.apply(
      rateLimitPolicy(
        'second',
        { name: 'coffee' },
        { rejectCode: 503, local: { rules: [{ rate: '1r/m', key: '$http_x_client' }] } },
        { created: 20 },
      ),
    );
    api.apply(
      rateLimitPolicy(
        'broken',
        { name: 'coffee' },
        { local: { rules: [{ rate: '10r/h', key: '$http_x_client' }] } },
        { created: 30 },
      ),
    );
    const second = await statusOf('RateLimitPolicy', 'second', (s) => policyReason(s) === 'Conflicted');
    assert.match(JSON.stringify(second), /default\/first/);
    const broken = await statusOf('RateLimitPolicy', 'broken', (s) => policyReason(s) === 'Invalid');
    assert.match(JSON.stringify(broken), /10r\/h/);
    assert.equal(
      policyReason(await statusOf('RateLimitPolicy', 'first', (s) => policyReason(s) !== undefined)),
      'Accepted',
    );
    assert.equal((await get('/coffee', { 'x-client': 'd' })).status, 200);
    assert.equal((await get('/coffee', { 'x-client': 'd' })).status, 429, "the first policy's code");
    for (const name of ['first', 'second', 'broken']) api.remove('RateLimitPolicy', 'default', name);
  });

  test('an HTTPRoute changed to match a header sends those requests to another backend; deleted, its paths 404', async () => {
    api.apply(
      httpRoute('coffee', [
        rule('/coffee', 'coffee-v2-svc', { headers: [{ name: 'X-Version', value: 'v2' }] }),
        rule('/coffee', 'coffee-svc'),
      ]),
    );
    await answers('/coffee', 200, 'coffee-v2', { 'x-version': 'v2' });
    assert.deepEqual(await get('/coffee', { 'x-version': 'v3' }), { status: 200, text: 'coffee' });
    assert.deepEqual(await get('/coffee'), { status: 200, text: 'coffee' });
    api.remove('HTTPRoute', 'default', 'coffee');
    await answers('/coffee', 404);
    assert.deepEqual(await get('/tea'), { status: 200, text: 'tea' });
  });

  test('a Gateway changed to another hostname moves its routes; deleted, nothing of it is served', async () => {
    api.apply(gateway('cafe', [{ name: 'http', protocol: 'HTTP', port: 80 }]));
    api.apply(httpRoute('tea', [rule('/tea', 'tea-svc')], { hostnames: [] }));
    // a listener and a route without hostnames: any host
    await waitFor(
      async () =>
        (await request(`${base}/tea`, { headers: { host: 'elsewhere.example' } })).statusCode === 200,
      {
        timeoutMs: 30_000,
        intervalMs: 50,
        message: 'tea on any host',
      },
    );
    api.remove('Gateway', 'default', 'cafe');
    await answers('/tea', 404);
    // the route is no longer attached: limitswitch's entry leaves its status
    await statusOf('HTTPRoute', 'tea', (s) => Array.isArray(s.parents) && s.parents.length === 0);
  });
});
