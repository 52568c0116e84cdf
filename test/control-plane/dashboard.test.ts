/**
 * The dashboard as the control plane serves it (inject): its files, every module the page imports,
 * the same access rules as the API, and the two read views it added (`/cluster/keyvals` with expiry
 * and last writer, `/cluster/automation` with alert holds), checked against the spec.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { parseAlertRules } from '../../src/automation/alert-rules.ts';
import { alert, notification } from '../automation/automation-fixtures.ts';
import { assertMatchesSpec, assertNginxError, buildApp, JSON_HEADERS } from './harness.ts';

const TOKEN = 'dashboard-token-0123456789';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const TOKENS = new Map([['operator', TOKEN]]);
const RULES = parseAlertRules(
  `rules:
  - name: coffee
    matchers: ['alertname="CoffeeOverloaded"']
    zone: prefixes
    key: "{{ .Labels.path }}"
    value: "1"
    ttl: 10m
    min_hold: 1m
`,
  'rules.yaml',
);

const T0_MS = 1_700_000_000_000;

/** A clock the test moves. */
function settableClock() {
  let nowMs = T0_MS;
  return { nowMs: () => nowMs, advance: (ms: number) => (nowMs += ms) };
}

const apps: FastifyInstance[] = [];
after(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

async function app(options: Parameters<typeof buildApp>[0] = {}) {
  const built = await buildApp(options);
  apps.push(built.app);
  return built;
}

describe('GET /dashboard', () => {
  it('serves the page and every module it imports, with a strict content security policy', async () => {
    const { app: a } = await app();
    const page = await a.inject({ method: 'GET', url: '/dashboard' });
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
    // Follow the page's references and the modules' imports: each must be served, as what it is.
    const pending = [...page.body.matchAll(/(?:src|href)="(\/dashboard\/[^"]+)"/g)].map((m) => m[1]!);
    const seen = new Set<string>();
    while (pending.length > 0) {
      const url = pending.pop()!;
      if (seen.has(url)) continue;
      seen.add(url);
      const res = await a.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, url);
      const type = url.endsWith('.css') ? /^text\/css/ : /^text\/javascript/;
      assert.match(String(res.headers['content-type']), type, url);
      for (const m of res.body.matchAll(/from '\.\/([a-z-]+\.js)'/g)) pending.push(`/dashboard/${m[1]}`);
    }
    const files = readdirSync(new URL('../../src/control-plane/dashboard/', import.meta.url));
    const modules = files.filter((f) => f.endsWith('.js') || f.endsWith('.css'));
    assert.deepEqual([...seen].map((u) => u.slice('/dashboard/'.length)).sort(), modules.sort());
  });

  it('answers an unknown file with NGINX’s 404', async () => {
    const { app: a } = await app();
    const res = await a.inject({ method: 'GET', url: '/dashboard/secrets.txt' });
    assertNginxError(res, 404, 'PathNotFound');
    const up = await a.inject({ method: 'GET', url: '/dashboard/..%2Fapp.ts' });
    assertNginxError(up, 404, 'PathNotFound');
  });

  it('holds no data: the page loads under --read-auth, the views it reads need the token', async () => {
    const { app: a } = await app({ auth: { tokens: TOKENS, readAuth: true } });
    assert.equal((await a.inject({ method: 'GET', url: '/dashboard' })).statusCode, 200);
    assert.equal((await a.inject({ method: 'GET', url: '/dashboard/main.js' })).statusCode, 200);
    for (const url of ['/cluster/keyvals', '/cluster/automation']) {
      assertNginxError(await a.inject({ method: 'GET', url }), 401, 'Unauthorized', 'bearer token required');
      assert.equal((await a.inject({ method: 'GET', url, headers: AUTH })).statusCode, 200, url);
    }
  });
});

describe('GET /cluster/keyvals', () => {
  it('shows each key with its expiry and the audit entry that set its value', async () => {
    const clock = settableClock();
    const { app: a } = await app({ clock, auth: { tokens: TOKENS }, expirySweepMs: 0 });
    const write = (method: 'POST' | 'PATCH', zone: string, body: unknown, reason: string) =>
      a.inject({
        method,
        url: `/api/9/http/keyvals/${zone}`,
        payload: JSON.stringify(body),
        headers: { ...JSON_HEADERS, ...AUTH, 'x-limitswitch-reason': reason },
      });
    assert.equal((await write('POST', 'prefixes', { '/coffee': '0' }, 'seed')).statusCode, 201);
    assert.equal((await write('PATCH', 'prefixes', { '/coffee': '1' }, 'coffee overloaded')).statusCode, 204);
    assert.equal(
      (await write('POST', 'ttl', { a: { value: 'x', expire: 30_000 } }, 'short')).statusCode,
      201,
    );
    clock.advance(10_000);
    const res = await a.inject({ method: 'GET', url: '/cluster/keyvals' });
    assert.equal(res.statusCode, 200, res.body);
    assertMatchesSpec('getClusterKeyvals', res);
    const body = JSON.parse(res.body);
    assert.deepEqual(Object.keys(body).sort(), ['ips', 'prefixes', 'ttl', 'zone_one']);
    assert.deepEqual(body.ttl.timeout_ms, 60_000);
    assert.deepEqual(body.prefixes.type, 'prefix');
    assert.deepEqual(body.prefixes.keys['/coffee'], {
      value: '1',
      expire: null,
      last_change: {
        time: new Date(T0_MS).toISOString(),
        token_id: 'operator',
        client: '127.0.0.1',
        reason: 'coffee overloaded',
        revision: 2,
      },
    });
    assert.equal(body.ttl.keys.a.expire, 20_000);
    assert.equal(body.ttl.keys.a.last_change.reason, 'short');
    assert.deepEqual(body.zone_one.keys, {});
  });
});

describe('GET /cluster/automation', () => {
  it('lists the alert holding a switch, its hold and TTL, and the pending revert once it resolves', async () => {
    const clock = settableClock();
    const { app: a } = await app({ clock, alertRules: RULES, expirySweepMs: 0 });
    const empty = await a.inject({ method: 'GET', url: '/cluster/automation' });
    assertMatchesSpec('getClusterAutomation', empty);
    assert.deepEqual(JSON.parse(empty.body), { rules: ['coffee'], holds: [] });
    const labels = { alertname: 'CoffeeOverloaded', path: '/coffee' };
    const hook = (status: 'firing' | 'resolved') =>
      a.inject({
        method: 'POST',
        url: '/hooks/alertmanager',
        payload: notification([alert(status, 'fp-1', labels)]),
      });
    assert.equal((await hook('firing')).statusCode, 200);
    clock.advance(5_000);
    const held = await a.inject({ method: 'GET', url: '/cluster/automation' });
    assertMatchesSpec('getClusterAutomation', held);
    const [hold] = JSON.parse(held.body).holds;
    assert.deepEqual(hold, {
      zone: 'prefixes',
      key: '/coffee',
      dry_run: false,
      value: '1',
      holders: [
        {
          rule: 'coffee',
          alertname: 'CoffeeOverloaded',
          fingerprint: 'fp-1',
          since: new Date(T0_MS).toISOString(),
        },
      ],
      held_since: new Date(T0_MS).toISOString(),
      hold_until: new Date(T0_MS + 60_000).toISOString(),
      expire: 595_000,
      revert: null,
    });
    assert.equal((await hook('resolved')).statusCode, 200);
    const pending = JSON.parse((await a.inject({ method: 'GET', url: '/cluster/automation' })).body);
    assert.deepEqual(pending.holds[0].holders, []);
    assert.deepEqual(pending.holds[0].revert, {
      at: new Date(T0_MS + 60_000).toISOString(),
      action: 'delete',
      rule: 'coffee',
    });
  });
});
