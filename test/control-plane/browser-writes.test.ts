/**
 * Writes only from the API's own clients, tokens or not (docs/security.md, "Writes from browsers"). An
 * attack campaign wrote a key from a web page: a cross-origin `fetch` POST with `text/plain` (no CORS
 * preflight) and a DNS-rebinding page (`Host: rebind.attacker.example`, resolved to 127.0.0.1). Now a
 * write body must be JSON, the Host one of the API's names, and an Origin the request's own; a refused
 * write changes nothing.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseAlertRules } from '../../src/automation/alert-rules.ts';
import type { ControlPlaneOptions } from '../../src/control-plane/app.ts';
import { BrowserChecks } from '../../src/control-plane/browser-checks.ts';
import { OwnHosts } from '../../src/control-plane/own-hosts.ts';
import { loadApiSpec } from '../../src/control-plane/spec.ts';
import type { Store } from '../../src/store/store.ts';
import { alert, notification } from '../automation/automation-fixtures.ts';
import { assertNginxError, buildApp, JSON_HEADERS } from './harness.ts';

const URL_PATH = '/api/9/http/keyvals/zone_one';
const TOKEN = 'ops-token-0123456789abcdef';
const CURL = "curl: -H 'Content-Type: application/json', or --json instead of -d";

const write = (headers: Record<string, string>, payload = '{"k":"v"}', method = 'POST' as const) => ({
  method,
  url: URL_PATH,
  payload,
  headers,
});

async function unchanged(store: Store): Promise<void> {
  assert.equal((await store.keyvals.head()).revision, 0);
  assert.deepEqual(await store.keyvals.getZone('zone_one', Date.now()), {});
  assert.equal((await store.audit.recent(10)).length, 0);
}

function app(options: Omit<Partial<ControlPlaneOptions>, 'store'> = {}) {
  return buildApp(options);
}

describe('writes need a JSON body', () => {
  it('a text/plain POST (what a page may send cross-origin without a preflight) is 415 and changes nothing', async () => {
    const { app: a, store } = await app();
    const res = await a.inject(write({ 'content-type': 'text/plain;charset=UTF-8' }));
    assertNginxError(
      res,
      415,
      'ContentTypeNotJson',
      `the request body is "text/plain", not JSON: send it as application/json (${CURL})`,
    );
    await unchanged(store);
  });

  it("curl -d's form type and a body without a type say how to send JSON", async () => {
    const { app: a, store } = await app();
    for (const method of ['POST', 'PATCH'] as const) {
      assertNginxError(
        await a.inject({
          ...write({ 'content-type': 'application/x-www-form-urlencoded' }),
          method,
        }),
        415,
        'ContentTypeNotJson',
        `the request body is "application/x-www-form-urlencoded", not JSON: send it as application/json (${CURL})`,
      );
    }
    assertNginxError(
      await a.inject(write({})),
      415,
      'ContentTypeNotJson',
      `the request body has no Content-Type: send it as application/json (${CURL})`,
    );
    assertNginxError(
      await a.inject({ ...write({}), method: 'DELETE' }),
      415,
      'ContentTypeNotJson',
      `the request body has no Content-Type: send it as application/json (${CURL})`,
    );
    assertNginxError(
      await a.inject(write({ 'content-type': 'multipart/form-data; boundary=x' })),
      415,
      'ContentTypeNotJson',
    );
    // A DELETE with a body is held to the same rule.
    assertNginxError(
      await a.inject({ ...write({ 'content-type': 'text/plain' }), method: 'DELETE' }),
      415,
      'ContentTypeNotJson',
    );
    await unchanged(store);
  });

  it("application/json with parameters and +json types are JSON; a write without a body needs no type, nor nginx-plus-go-client's PATCH", async () => {
    const { app: a, store } = await app({ limitReqZones: ['one'] });
    assert.equal(
      (await a.inject(write({ 'content-type': 'application/json; charset=utf-8' }))).statusCode,
      201,
    );
    assert.equal(
      (await a.inject(write({ 'content-type': 'Application/JSON' }, '{"k2":"v"}'))).statusCode,
      201,
    );
    const merge = await a.inject({
      ...write({ 'content-type': 'application/merge-patch+json' }, '{"k":"w"}'),
      method: 'PATCH',
    });
    assert.equal(merge.statusCode, 204, merge.body);
    assert.deepEqual(await store.keyvals.getZone('zone_one', Date.now()), {
      k: { value: 'w', expireAtMs: null },
      k2: { value: 'v', expireAtMs: null },
    });
    // nginx-plus-go-client's PATCH: JSON without a Content-Type (no page can send a PATCH cross-origin
    // without a preflight); an empty Content-Type is still refused.
    const goClient = await a.inject({ ...write({}, '{"k":"x"}'), method: 'PATCH' });
    assert.equal(goClient.statusCode, 204, goClient.body);
    assertNginxError(
      await a.inject({ ...write({ 'content-type': '' }, '{"k":"y"}'), method: 'PATCH' }),
      415,
      'ContentTypeNotJson',
    );
    assert.equal((await store.keyvals.getZone('zone_one', Date.now())).k?.value, 'x');
    assert.equal((await a.inject({ method: 'DELETE', url: URL_PATH })).statusCode, 204);
    assert.equal(
      (
        await a.inject({
          method: 'DELETE',
          url: '/api/9/http/limit_reqs/one',
          headers: { 'content-length': '0' },
        })
      ).statusCode,
      204,
    );
  });
});

describe("writes name one of the API's hosts", () => {
  it('a DNS-rebinding Host is 421, naming the host and the flag; nothing changes', async () => {
    const { app: a, store } = await app();
    const res = await a.inject(write({ ...JSON_HEADERS, host: 'rebind.attacker.example:8080' }));
    assertNginxError(
      res,
      421,
      'HostNotAllowed',
      'host "rebind.attacker.example" is not one of this API\'s names; allow it with --server-name rebind.attacker.example',
    );
    assertNginxError(
      await a.inject({ method: 'DELETE', url: URL_PATH, headers: { host: 'rebind.attacker.example' } }),
      421,
      'HostNotAllowed',
    );
    await unchanged(store);
    // Reads are not refused by name (docs/security.md: --read-auth covers them).
    const read = await a.inject({
      method: 'GET',
      url: URL_PATH,
      headers: { host: 'rebind.attacker.example' },
    });
    assert.equal(read.statusCode, 200);
  });

  it('IP literals (v4, v6 in brackets, with or without a port) and localhost are accepted', async () => {
    const { app: a, store } = await app();
    const hosts = [
      '127.0.0.1:8080',
      '127.0.0.1',
      '10.1.2.3:80',
      '[::1]:8080',
      '[::1]',
      '[fe80::1]',
      'localhost',
      'LocalHost:9999',
      'localhost.',
    ];
    for (const [i, host] of hosts.entries()) {
      const res = await a.inject(write({ ...JSON_HEADERS, host }, `{"k${i}":"v"}`));
      assert.equal(res.statusCode, 201, `${host}: ${res.body}`);
    }
    assert.equal(Object.keys(await store.keyvals.getZone('zone_one', Date.now())).length, hosts.length);
    for (const host of ['localhost.attacker.example', '127.0.0.1.attacker.example', '[::1', '::1', '127.1']) {
      assertNginxError(await a.inject(write({ ...JSON_HEADERS, host })), 421, 'HostNotAllowed', undefined);
    }
  });

  it('serverNames (--server-name, the api server_name) are accepted, wildcards as nginx reads them', async () => {
    const { app: a } = await app({
      serverNames: ['cp.example.com', '*.svc.cluster.local', '.ops.example', 'api.example.*'],
    });
    const accepted = [
      'cp.example.com',
      'CP.Example.COM:8443',
      'limitswitch-control-plane.limitswitch.svc.cluster.local',
      'ops.example',
      'a.ops.example',
      'api.example.org',
    ];
    for (const [i, host] of accepted.entries()) {
      const res = await a.inject(write({ ...JSON_HEADERS, host }, `{"k${i}":"v"}`));
      assert.equal(res.statusCode, 201, `${host}: ${res.body}`);
    }
    for (const host of [
      'svc.cluster.local',
      'example.com',
      'cp.example.com.attacker.example',
      'xops.example',
    ]) {
      assertNginxError(await a.inject(write({ ...JSON_HEADERS, host })), 421, 'HostNotAllowed', undefined);
    }
  });

  it('~regex names are not taken, and a request without a Host is refused', async () => {
    const { app: a } = await app({ serverNames: ['~^api\\d+\\.example\\.com$', ''] });
    assertNginxError(
      await a.inject(write({ ...JSON_HEADERS, host: 'api1.example.com' })),
      421,
      'HostNotAllowed',
    );
    // An HTTP/1.0 request may leave the Host out (node refuses an HTTP/1.1 one without it).
    const head = {
      method: 'DELETE',
      scheme: 'http',
      origin: undefined,
      secFetchSite: undefined,
      hasBody: false,
    } as const;
    for (const host of [undefined, '']) {
      assert.throws(() => new BrowserChecks(['']).checkWrite({ ...head, host, contentType: undefined }), {
        code: 'HostNotAllowed',
        message:
          "the request names no host: writes must name one of this API's names (an IP address, localhost or a --server-name)",
      });
    }
    assert.equal(
      OwnHosts.invalid('~^api'),
      'regular expressions are not taken ("~^api"): name the hosts, or use a wildcard (*.example.com)',
    );
    for (const bad of ['api.example.com:8080', '*', '*.example.*', 'a..b', 'www.*.com', 'a b', ''])
      assert.match(OwnHosts.invalid(bad) ?? '', /^invalid server name or wildcard/, bad);
    for (const good of ['api.example.com', '*.example.com', '.example.com', 'www.example.*', 'cp', 'a_b-c'])
      assert.equal(OwnHosts.invalid(good), null, good);
  });
});

describe("an Origin is the request's own", () => {
  it('another origin, Origin: null and Sec-Fetch-Site cross-site/same-site are 403; nothing changes', async () => {
    const { app: a, store } = await app();
    const host = { ...JSON_HEADERS, host: '127.0.0.1:8080' };
    assertNginxError(
      await a.inject(write({ ...host, origin: 'https://evil.example' })),
      403,
      'OriginNotAllowed',
      'origin "https://evil.example" is not this API\'s own (http://127.0.0.1:8080): writes from pages of other origins are refused',
    );
    for (const origin of ['null', 'http://127.0.0.1:9999', 'http://localhost:8080', 'file://', 'not a url'])
      assertNginxError(await a.inject(write({ ...host, origin })), 403, 'OriginNotAllowed', undefined);
    for (const site of ['cross-site', 'same-site'])
      assertNginxError(
        await a.inject(write({ ...host, 'sec-fetch-site': site })),
        403,
        'OriginNotAllowed',
        `Sec-Fetch-Site "${site}": writes from pages of other origins are refused`,
      );
    // Origin comes before the body's type: a cross-origin text/plain POST is refused for its origin.
    assertNginxError(
      await a.inject(
        write({ host: '127.0.0.1:8080', origin: 'http://evil.example', 'content-type': 'text/plain' }),
      ),
      403,
      'OriginNotAllowed',
    );
    await unchanged(store);
  });

  it("the API's own pages write: same origin, default ports, https in front of plain HTTP", async () => {
    const { app: a } = await app({ serverNames: ['cp.example.com'] });
    const own: Record<string, string>[] = [
      { host: '127.0.0.1:8080', origin: 'http://127.0.0.1:8080', 'sec-fetch-site': 'same-origin' },
      { host: '[::1]:8080', origin: 'http://[::1]:8080' },
      { host: 'localhost:80', origin: 'http://localhost' },
      // TLS ends in front of the control plane: the page is https, the connection plain HTTP.
      { host: 'cp.example.com', origin: 'https://cp.example.com' },
      { host: 'cp.example.com:443', origin: 'https://cp.example.com' },
      { host: 'localhost:8080', 'sec-fetch-site': 'none' },
    ];
    for (const [i, headers] of own.entries()) {
      const res = await a.inject(write({ ...JSON_HEADERS, ...headers }, `{"k${i}":"v"}`));
      assert.equal(res.statusCode, 201, `${JSON.stringify(headers)}: ${res.body}`);
    }
  });
});

describe('order and scope', () => {
  it('with tokens the same checks apply, after the token: 401 first, then 421, 403, 415', async () => {
    const tokens = new Map([['ops', TOKEN]]);
    const { app: a, store } = await app({ auth: { tokens } });
    const auth = { authorization: `Bearer ${TOKEN}` };
    assertNginxError(
      await a.inject(write({ host: 'rebind.attacker.example', 'content-type': 'text/plain' })),
      401,
      'Unauthorized',
    );
    assertNginxError(
      await a.inject(write({ ...auth, ...JSON_HEADERS, host: 'rebind.attacker.example' })),
      421,
      'HostNotAllowed',
    );
    assertNginxError(
      await a.inject(write({ ...auth, ...JSON_HEADERS, origin: 'http://evil.example' })),
      403,
      'OriginNotAllowed',
    );
    assertNginxError(
      await a.inject(write({ ...auth, 'content-type': 'text/plain' })),
      415,
      'ContentTypeNotJson',
    );
    await unchanged(store);
    assert.equal((await a.inject(write({ ...auth, ...JSON_HEADERS }))).statusCode, 201);
  });

  it('a client address not allowed is 403 Forbidden first; read-only answers 405 before the browser checks', async () => {
    const { app: a } = await app({ auth: { allow: ['10.0.0.0/8'] } });
    assertNginxError(
      await a.inject({ ...write({ host: 'rebind.attacker.example' }), remoteAddress: '192.0.2.7' }),
      403,
      'Forbidden',
      'client 192.0.2.7 is not allowed',
    );
    const { app: readOnly } = await app({ auth: { readOnly: true } });
    assertNginxError(
      await readOnly.inject(write({ host: 'rebind.attacker.example', 'content-type': 'text/plain' })),
      405,
      'MethodDisabled',
    );
  });

  it('every write route of the spec refuses a rebinding Host and a text/plain body, and changes nothing', async () => {
    const rules = parseAlertRules(
      'rules:\n  - name: r\n    matchers: [alertname=A]\n    zone: zone_one\n    key: k\n    value: "1"\n    ttl: 1m\n',
      'rules.yaml',
    );
    const { app: a, store } = await app({
      alertRules: rules,
      limitReqZones: ['one'],
      limitConnZones: ['two'],
    });
    const writes = loadApiSpec().operations.filter((op) => op.method !== 'GET');
    assert.deepEqual(writes.map((op) => op.operationId).sort(), [
      'deleteHttpKeyvalZone',
      'deleteHttpLimitConnZone',
      'deleteHttpLimitReqZone',
      'patchHttpKeyvalZone',
      'postAlertmanagerHook',
      'postHttpKeyvalZone',
    ]);
    const body = notification([alert('firing', 'fp-1', { alertname: 'A' })]);
    for (const op of writes) {
      const zone = op.path.includes('limit_conns')
        ? 'two'
        : op.path.includes('limit_reqs')
          ? 'one'
          : 'zone_one';
      const url = op.path.replace('{version}', '9').replace('{zone}', zone);
      const payload = op.operationId === 'postAlertmanagerHook' ? JSON.stringify(body) : '{"k":"v"}';
      assertNginxError(
        await a.inject({
          method: op.method,
          url,
          payload,
          headers: { ...JSON_HEADERS, host: 'rebind.attacker.example' },
        }),
        421,
        'HostNotAllowed',
      );
      assertNginxError(
        await a.inject({ method: op.method, url, payload, headers: { 'content-type': 'text/plain' } }),
        415,
        'ContentTypeNotJson',
      );
      assertNginxError(
        await a.inject({ method: op.method, url, payload, headers: { ...JSON_HEADERS, origin: 'null' } }),
        403,
        'OriginNotAllowed',
      );
    }
    await unchanged(store);
    // Alertmanager's own request: JSON, a Service name the operator allowed.
    const { app: hooked } = await app({
      alertRules: rules,
      serverNames: ['limitswitch-control-plane.limitswitch.svc'],
    });
    const res = await hooked.inject({
      method: 'POST',
      url: '/hooks/alertmanager',
      payload: JSON.stringify(body),
      headers: { ...JSON_HEADERS, host: 'limitswitch-control-plane.limitswitch.svc' },
    });
    assert.equal(res.statusCode, 200, res.body);
  });
});
