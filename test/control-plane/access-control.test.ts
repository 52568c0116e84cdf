import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AccessControl, parseAllowRange, parseTokens } from '../../src/control-plane/access-control.ts';
import { assertMatchesSpec, assertNginxError, buildApp, JSON_HEADERS } from './harness.ts';

const ALICE = 'alice-0123456789abcdef';
const BOB = 'bob-fedcba9876543210';
const tokens = new Map([
  ['alice', ALICE],
  ['bob', BOB],
]);

const write = (remoteAddress: string, authorization?: string, key = 'k') => ({
  method: 'POST' as const,
  url: '/api/9/http/keyvals/zone_one',
  payload: JSON.stringify({ [key]: 'v' }),
  remoteAddress,
  headers: { ...JSON_HEADERS, ...(authorization ? { authorization } : {}) },
});

describe('tokens file / LIMITSWITCH_TOKENS', () => {
  it('reads id:token lines and comma lists, skipping blanks and comments', () => {
    const parsed = parseTokens(`# ops\nalice:${ALICE}\n\n bob:${BOB} \n`, 'tokens.txt');
    assert.deepEqual([...parsed], [...tokens]);
    assert.deepEqual([...parseTokens(`alice:${ALICE},bob:${BOB}`, 'LIMITSWITCH_TOKENS')], [...tokens]);
    // A token may contain ':'.
    assert.equal(parseTokens('a:b:cdefghijklmnopq', 'x').get('a'), 'b:cdefghijklmnopq');
  });

  it('refuses malformed entries, short tokens and duplicates', () => {
    assert.throws(() => parseTokens('no-colon', 'f'), { message: 'f: entry 1: expected "id:token"' });
    assert.throws(() => parseTokens('a:short', 'f'), {
      message: 'f: entry 1: token "a" is shorter than 16 characters',
    });
    assert.throws(() => parseTokens(`a b:${ALICE}`, 'f'), { message: 'f: entry 1: invalid token id "a b"' });
    assert.throws(() => parseTokens(`a:${ALICE}\na:${BOB}`, 'f'), {
      message: 'f: entry 2: duplicate token id "a"',
    });
  });
});

describe('access control', () => {
  it('without tokens: writes from loopback only; reads from anywhere', async () => {
    const { app } = await buildApp();
    assert.equal((await app.inject(write('127.0.0.1'))).statusCode, 201);
    assert.equal((await app.inject(write('::1', undefined, 'k6'))).statusCode, 201);
    assertNginxError(
      await app.inject(write('10.0.0.5', undefined, 'k2')),
      403,
      'Forbidden',
      'writes are accepted from loopback only: no token is configured',
    );
    const read = await app.inject({
      method: 'GET',
      url: '/api/9/http/keyvals/zone_one',
      remoteAddress: '10.0.0.5',
    });
    assert.equal(read.body, '{"k":"v","k6":"v"}');
  });

  it('with tokens: 401 without or with a wrong token, any configured token admits', async () => {
    const { app, store } = await buildApp({ auth: { tokens } });
    const missing = await app.inject(write('127.0.0.1'));
    assertNginxError(missing, 401, 'Unauthorized', 'bearer token required');
    assert.equal(missing.headers['www-authenticate'], 'Bearer realm="limitswitch"');
    assertNginxError(
      await app.inject(write('127.0.0.1', `Bearer ${ALICE}x`)),
      401,
      'Unauthorized',
      'invalid token',
    );
    assertNginxError(
      await app.inject(write('127.0.0.1', `Basic ${ALICE}`)),
      401,
      'Unauthorized',
      'bearer token required',
    );
    assert.deepEqual(await store.keyvals.getZone('zone_one', Date.now()), {});
    assert.equal((await app.inject(write('10.9.9.9', `Bearer ${ALICE}`))).statusCode, 201);
    assert.equal((await app.inject(write('10.9.9.9', `bearer ${BOB}`, 'k2'))).statusCode, 201);
    const audit = await store.audit.recent(10);
    assert.deepEqual(
      audit.map((e) => [e.tokenId, e.key]),
      [
        ['bob', 'k2'],
        ['alice', 'k'],
      ],
    );
  });

  it('--allow CIDR: other addresses get 403 even with a valid token', async () => {
    const { app } = await buildApp({ auth: { tokens, allow: ['10.0.0.0/8', '::1'] } });
    assertNginxError(
      await app.inject(write('192.168.1.1', `Bearer ${ALICE}`)),
      403,
      'Forbidden',
      'client 192.168.1.1 is not allowed',
    );
    assert.equal((await app.inject(write('10.1.1.1', `Bearer ${ALICE}`))).statusCode, 201);
    assert.equal((await app.inject(write('::ffff:10.2.2.2', `Bearer ${ALICE}`, 'k2'))).statusCode, 201);
    // Reads are open unless readAuth.
    assert.equal(
      (await app.inject({ method: 'GET', url: '/api/9/', remoteAddress: '192.168.1.1' })).statusCode,
      200,
    );
  });

  it('--allow ranges and loopback are read as nginx reads addresses', () => {
    const bearer = `Bearer ${ALICE}`;
    const allowed = new AccessControl({ tokens, allow: ['fe80::/10', '10.0.0.0/8'] });
    for (const client of ['fe80::1%eth0', '::ffff:10.0.0.1', '10.0.0.1'])
      assert.deepEqual(allowed.authorizeWrite(client, bearer), { tokenId: 'alice' }, client);
    for (const client of ['11.0.0.1', '::10.0.0.1', 'garbage'])
      assert.throws(() => allowed.authorizeWrite(client, bearer), {
        message: `client ${client} is not allowed`,
      });
    const loopbackOnly = new AccessControl();
    for (const client of ['127.0.0.1', '::1', '::ffff:127.0.0.1'])
      assert.deepEqual(loopbackOnly.authorizeWrite(client, undefined), { tokenId: null }, client);
    assert.throws(() => loopbackOnly.authorizeWrite('10.0.0.1', undefined), {
      message: 'writes are accepted from loopback only: no token is configured',
    });
    assert.throws(() => parseAllowRange('1.2.3'), { message: 'invalid address or CIDR "1.2.3"' });
    assert.throws(() => new AccessControl({ allow: ['10.0.0.0/33'] }), {
      message: 'invalid address or CIDR "10.0.0.0/33"',
    });
  });

  it('read-only: every write is 405 MethodDisabled after authentication; nothing changes', async () => {
    const { app, store } = await buildApp({ auth: { tokens, readOnly: true } });
    for (const method of ['POST', 'PATCH', 'DELETE'] as const) {
      const res = await app.inject({ ...write('127.0.0.1', `Bearer ${ALICE}`), method });
      assertNginxError(res, 405, 'MethodDisabled', 'method disabled');
    }
    const limitReq = await app.inject({
      method: 'DELETE',
      url: '/api/9/http/limit_reqs/one',
      headers: { authorization: `Bearer ${ALICE}` },
    });
    assertNginxError(limitReq, 405, 'MethodDisabled');
    assertNginxError(await app.inject(write('127.0.0.1')), 401, 'Unauthorized');
    assert.equal((await store.keyvals.head()).revision, 0);
    assert.equal((await app.inject({ method: 'GET', url: '/api/9/http/keyvals/zone_one' })).statusCode, 200);
  });

  it('readAuth: API reads need a token; probes, metrics and docs stay open', async () => {
    const { app } = await buildApp({ auth: { tokens, readAuth: true } });
    for (const url of [
      '/api/9/http/keyvals',
      '/api/9/nginx',
      '/limit_reqs',
      '/cluster/replicas',
      '/audit',
      '/api/',
    ]) {
      assertNginxError(await app.inject({ method: 'GET', url }), 401, 'Unauthorized');
      const ok = await app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${BOB}` } });
      assert.equal(ok.statusCode, 200, url);
    }
    for (const url of ['/healthz', '/readyz', '/metrics', '/docs', '/docs/openapi.json']) {
      assert.equal((await app.inject({ method: 'GET', url })).statusCode, 200, url);
    }
  });
});

describe('audit trail', () => {
  it('records time, token id, client, zone, key, old → new, revision and the reason header', async () => {
    const { app } = await buildApp({ auth: { tokens } });
    const auth = { authorization: `Bearer ${ALICE}`, ...JSON_HEADERS };
    const url = '/api/9/http/keyvals/zone_one';
    await app.inject({
      method: 'POST',
      url,
      payload: '{"/coffee":"1"}',
      headers: auth,
      remoteAddress: '10.0.0.7',
    });
    await app.inject({
      method: 'PATCH',
      url,
      payload: '{"/coffee":"0"}',
      headers: { ...auth, 'x-limitswitch-reason': 'alert CoffeeOverload resolved' },
    });
    await app.inject({ method: 'PATCH', url, payload: '{"/coffee":null}', headers: auth });
    await app.inject({ method: 'POST', url, payload: '{"a":"1","b":"2"}', headers: auth });
    await app.inject({ method: 'DELETE', url, headers: auth });
    const res = await app.inject({ method: 'GET', url: '/audit?limit=6' });
    assertMatchesSpec('getAudit', res);
    const entries = JSON.parse(res.body) as Record<string, unknown>[];
    assert.deepEqual(
      entries.map((e) => [e.revision, e.key, e.old, e.new, e.reason]),
      [
        [5, 'b', '2', null, null],
        [5, 'a', '1', null, null],
        [4, 'b', null, '2', null],
        [4, 'a', null, '1', null],
        [3, '/coffee', '0', null, null],
        [2, '/coffee', '1', '0', 'alert CoffeeOverload resolved'],
      ],
    );
    const last = (
      JSON.parse((await app.inject({ method: 'GET', url: '/audit' })).body) as Record<string, unknown>[]
    ).at(-1)!;
    assert.equal(last.client, '10.0.0.7');
    assert.equal(last.token_id, 'alice');
    assert.equal(last.zone, 'zone_one');
    assert.ok(Math.abs(Date.parse(String(last.time)) - Date.now()) < 60_000);
    assertNginxError(
      await app.inject({ method: 'GET', url: '/audit?limit=0' }),
      400,
      'QueryFormatError',
      'invalid "limit" argument',
    );
  });
});
