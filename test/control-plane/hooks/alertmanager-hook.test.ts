import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { parseAlertRules } from '../../../src/automation/alert-rules.ts';
import type { ControlPlaneOptions } from '../../../src/control-plane/app.ts';
import { alert, notification } from '../../automation/automation-fixtures.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { assertMatchesSpec, assertNginxError, buildApp, isNginxError } from '../harness.ts';

const RULES = parseAlertRules(
  `max_body_bytes: 4096
rules:
  - name: coffee
    matchers: ['alertname="CoffeeOverloaded"']
    zone: prefixes
    key: "{{ .Labels.path }}"
    value: "1"
    on_resolve: restore
    ttl: 10m
  - name: abuser
    matchers: [alertname=Abuser]
    zone: ips
    key: "{{ .Labels.client }}"
    value: "1"
    ttl: 1h
  - name: server
    matchers: [alertname=ServerOverloaded]
    zone: zone_one
    key: "{{ .Labels.host }}"
    value: "1"
    ttl: 1m
    min_hold: 1s
`,
  'rules.yaml',
);

const TOKEN = 'alertmanager-token-0123456789';
const TOKENS = new Map([['alertmanager', TOKEN]]);
const COFFEE = { alertname: 'CoffeeOverloaded', path: '/coffee' };
const URL_PATH = '/hooks/alertmanager';

const apps: FastifyInstance[] = [];
after(async () => {
  await Promise.all(apps.map((a) => a.close()));
});

async function app(options: Omit<Partial<ControlPlaneOptions>, 'store'> = {}) {
  const built = await buildApp({ alertRules: RULES, ...options });
  apps.push(built.app);
  return built;
}

function basic(id: string, token: string): string {
  return `Basic ${Buffer.from(`${id}:${token}`).toString('base64')}`;
}

const firing = notification([alert('firing', 'fp-coffee', COFFEE)]);

describe('POST /hooks/alertmanager', { timeout: 120_000 }, () => {
  it('answers 404 without --alert-rules', async () => {
    const { app: a } = await app({ alertRules: undefined });
    const res = await a.inject({ method: 'POST', url: URL_PATH, payload: firing });
    assertNginxError(res, 404, 'PathNotFound', 'alert automation is not configured (--alert-rules)');
  });

  it('applies a notification and answers what it did, as the spec says', async () => {
    const { app: a, store } = await app({ auth: { tokens: TOKENS } });
    const res = await a.inject({
      method: 'POST',
      url: URL_PATH,
      payload: firing,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(res.statusCode, 200, res.body);
    assertMatchesSpec('postAlertmanagerHook', res);
    const body = JSON.parse(res.body) as { alerts: number; results: { action: string; key: string }[] };
    assert.equal(body.alerts, 1);
    assert.deepEqual(
      body.results.map((r) => [r.action, r.key]),
      [['set', '/coffee']],
    );
    assert.equal((await store.keyvals.getZone('prefixes', Date.now()))['/coffee']?.value, '1');
    const [entry] = await store.audit.recent(1);
    assert.equal(entry!.tokenId, 'alertmanager');
    assert.equal(entry!.reason, 'alert CoffeeOverloaded firing (fingerprint fp-coffee, rule coffee)');
  });

  it('authenticates with a bearer token or HTTP Basic <id>:<token>, as the API writes', async () => {
    const { app: a, store } = await app({ auth: { tokens: TOKENS } });
    const post = (authorization?: string) =>
      a.inject({
        method: 'POST',
        url: URL_PATH,
        payload: firing,
        headers: authorization ? { authorization } : {},
      });
    assertNginxError(await post(), 401, 'Unauthorized', 'bearer token required');
    assertNginxError(await post('Bearer wrong-token-0123456789'), 401, 'Unauthorized', 'invalid token');
    assertNginxError(await post(basic('alertmanager', 'wrong')), 401, 'Unauthorized', 'invalid token');
    assertNginxError(await post(basic('someone-else', TOKEN)), 401, 'Unauthorized', 'invalid token');
    assertNginxError(await post('Basic bm8tY29sb24='), 401, 'Unauthorized', 'invalid basic credentials');
    assert.equal((await store.keyvals.head()).revision, 0);
    const ok = await post(basic('alertmanager', TOKEN));
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal((await store.audit.recent(1))[0]!.tokenId, 'alertmanager');
  });

  it('without tokens accepts loopback only; CIDRs and read-only apply as to API writes', async () => {
    const open = await app();
    const remote = await open.app.inject({
      method: 'POST',
      url: URL_PATH,
      payload: firing,
      remoteAddress: '10.1.2.3',
    });
    assertNginxError(
      remote,
      403,
      'Forbidden',
      'writes are accepted from loopback only: no token is configured',
    );
    const local = await open.app.inject({ method: 'POST', url: URL_PATH, payload: firing });
    assert.equal(local.statusCode, 200, local.body);

    const fenced = await app({ auth: { tokens: TOKENS, allow: ['192.168.0.0/16'] } });
    const outside = await fenced.app.inject({
      method: 'POST',
      url: URL_PATH,
      payload: firing,
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    assertNginxError(outside, 403, 'Forbidden', 'client 127.0.0.1 is not allowed');

    const readOnly = await app({ auth: { tokens: TOKENS, readOnly: true } });
    const refused = await readOnly.app.inject({
      method: 'POST',
      url: URL_PATH,
      payload: firing,
      headers: { authorization: basic('alertmanager', TOKEN) },
    });
    assertNginxError(refused, 405, 'MethodDisabled', 'method disabled');
  });

  it('with read authentication on, Basic still works (the hook authenticates itself)', async () => {
    const { app: a } = await app({ auth: { tokens: TOKENS, readAuth: true } });
    const res = await a.inject({
      method: 'POST',
      url: URL_PATH,
      payload: firing,
      headers: { authorization: basic('alertmanager', TOKEN) },
    });
    assert.equal(res.statusCode, 200, res.body);
  });

  it('refuses bad payloads with 400 AlertFormatError naming the field, and applies nothing', async () => {
    const { app: a, store } = await app();
    const cases: [unknown, string][] = [
      [{ ...firing, version: '3' }, '/version must be equal to one of the allowed values'],
      [{ ...firing, alerts: undefined }, "(body) must have required property 'alerts'"],
      [[firing], '(body) must be object'],
      [
        { ...firing, alerts: [{ ...firing.alerts[0], fingerprint: undefined }] },
        "/alerts/0 must have required property 'fingerprint'",
      ],
      [
        { ...firing, alerts: [{ ...firing.alerts[0], labels: { path: 1 } }] },
        '/alerts/0/labels/path must be string',
      ],
      [
        { ...firing, alerts: [{ ...firing.alerts[0], status: 'pending' }] },
        '/alerts/0/status must be equal to one of the allowed values',
      ],
      [{ ...firing, truncatedAlerts: -1 }, '/truncatedAlerts must be >= 0'],
    ];
    for (const [payload, text] of cases) {
      const res = await a.inject({
        method: 'POST',
        url: URL_PATH,
        payload: JSON.stringify(payload),
        headers: { 'content-type': 'application/json' },
      });
      assertNginxError(res, 400, 'AlertFormatError', `invalid Alertmanager notification: ${text}`);
    }
    const notJson = await a.inject({
      method: 'POST',
      url: URL_PATH,
      payload: '{"version":',
      headers: { 'content-type': 'application/json' },
    });
    assertNginxError(notJson, 415, 'JsonError', 'json error');
    const huge = notification(Array.from({ length: 40 }, (_, i) => alert('firing', `fp-${i}`, COFFEE)));
    const tooLarge = await a.inject({ method: 'POST', url: URL_PATH, payload: huge });
    assertNginxError(tooLarge, 413, 'BodyTooLarge', 'request entity too large');
    assert.equal((await store.keyvals.head()).revision, 0);
  });

  it('any body: 200 or an NGINX-style 4xx, never a 5xx, and nothing applied when refused', async () => {
    const { app: a, store } = await app();
    const anyAlert = fc.record(
      {
        status: fc.oneof(fc.constantFrom('firing', 'resolved'), fc.string()),
        labels: fc.oneof(
          fc.dictionary(
            fc.constantFrom('alertname', 'path', 'client'),
            fc.constantFrom('CoffeeOverloaded', 'Abuser', '/coffee', '10.0.0.1', ''),
          ),
          fc.jsonValue(),
        ),
        fingerprint: fc.oneof(
          fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 1, maxLength: 16 }),
          fc.jsonValue(),
        ),
        startsAt: fc.string(),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      fc.jsonValue(),
      fc.record(
        {
          version: fc.oneof(fc.constant('4'), fc.jsonValue()),
          status: fc.constantFrom('firing', 'resolved', 'x'),
          receiver: fc.string(),
          alerts: fc.oneof(fc.array(anyAlert, { maxLength: 4 }), fc.jsonValue()),
          truncatedAlerts: fc.oneof(fc.nat(), fc.jsonValue()),
        },
        { requiredKeys: [] },
      ),
    );
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const revision = (await store.keyvals.head()).revision;
        const res = await a.inject({
          method: 'POST',
          url: URL_PATH,
          payload: JSON.stringify(payload),
          headers: { 'content-type': 'application/json' },
        });
        assert.ok(
          res.statusCode === 200 || (res.statusCode >= 400 && res.statusCode < 500),
          `${res.statusCode} ${res.body}`,
        );
        if (res.statusCode === 200) {
          assertMatchesSpec('postAlertmanagerHook', res);
        } else {
          assert.ok(isNginxError(res.statusCode, res.body), res.body);
          assert.equal((await store.keyvals.head()).revision, revision);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('counts notifications, changes and errors by rule on /metrics', async () => {
    const { app: a } = await app();
    await a.inject({ method: 'POST', url: URL_PATH, payload: firing });
    await a.inject({ method: 'POST', url: URL_PATH, payload: firing });
    await a.inject({
      method: 'POST',
      url: URL_PATH,
      payload: notification([alert('firing', 'fp-x', { alertname: 'Abuser', client: 'nope' })]),
    });
    await a.inject({ method: 'POST', url: URL_PATH, payload: { version: '4' } });
    await a.inject({ method: 'POST', url: URL_PATH, payload: firing, remoteAddress: '10.9.9.9' });
    const text = (await a.inject({ method: 'GET', url: '/metrics' })).body;
    const lines = text.split('\n').filter((l) => l.startsWith('limitswitch_automation_'));
    assert.deepEqual(lines.sort(), [
      'limitswitch_automation_changes_total{rule="coffee",action="set"} 1',
      'limitswitch_automation_errors_total{rule="",reason="forbidden"} 1',
      'limitswitch_automation_errors_total{rule="",reason="invalid_payload"} 1',
      'limitswitch_automation_errors_total{rule="abuser",reason="invalid_key"} 1',
      'limitswitch_automation_notifications_total{rule="abuser"} 1',
      'limitswitch_automation_notifications_total{rule="coffee"} 2',
    ]);
    // The API's mutation counter sees both writes: the set, and the TTL refresh of the re-sent one.
    assert.match(text, /limitswitch_keyval_mutations_total\{zone="prefixes",op="set"\} 2/);
  });

  it('the sweeper reverts a key once min_hold has passed', async () => {
    const { app: a, store } = await app();
    const server = { alertname: 'ServerOverloaded', host: 'cafe.example.com' };
    await a.inject({
      method: 'POST',
      url: URL_PATH,
      payload: notification([alert('firing', 'fp-s', server)]),
    });
    const res = await a.inject({
      method: 'POST',
      url: URL_PATH,
      payload: notification([alert('resolved', 'fp-s', server)]),
    });
    const action = (JSON.parse(res.body) as { results: { action: string }[] }).results[0]!.action;
    // `hold` normally; `delete` if this machine took more than min_hold between the two requests.
    assert.ok(action === 'hold' || action === 'delete', action);
    await waitFor(
      async () => !('cafe.example.com' in (await store.keyvals.getZone('zone_one', Date.now()))),
      {
        timeoutMs: 15_000,
        message: 'the held key to be reverted',
      },
    );
    const [entry] = await store.audit.recent(1);
    assert.equal(entry!.key, 'cafe.example.com');
    assert.equal(entry!.new, null);
  });
});
