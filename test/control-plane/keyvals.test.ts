import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertMatchesSpec, assertNginxError, buildApp, JSON_HEADERS } from './harness.ts';

const post = (url: string, payload: string, headers: Record<string, string> = JSON_HEADERS) =>
  ({ method: 'POST', url, payload, headers }) as const;
const patch = (url: string, payload: string, headers: Record<string, string> = JSON_HEADERS) =>
  ({ method: 'PATCH', url, payload, headers }) as const;

describe('keyvals: NGINX Plus semantics', () => {
  it('POST 201, GET, PATCH 204, PATCH null deletes, DELETE empties; each write answers its revision', async () => {
    const { app } = await buildApp();
    const created = await app.inject(post('/api/9/http/keyvals/zone_one', '{"key1":"val1"}'));
    assert.equal(created.statusCode, 201);
    assert.equal(created.body, '');
    assert.equal(created.headers['x-limitswitch-revision'], '1');

    const zone = await app.inject({ method: 'GET', url: '/api/9/http/keyvals/zone_one' });
    assert.equal(zone.body, '{"key1":"val1"}');
    assertMatchesSpec('getHttpKeyvalZone', zone);

    const changed = await app.inject(patch('/api/9/http/keyvals/zone_one/', '{"key1":"valModified1"}'));
    assert.equal(changed.statusCode, 204);
    assert.equal(changed.headers['x-limitswitch-revision'], '2');

    const deleted = await app.inject(patch('/api/9/http/keyvals/zone_one', '{"key1":null}'));
    assert.equal(deleted.statusCode, 204);
    assert.equal((await app.inject({ method: 'GET', url: '/api/9/http/keyvals/zone_one' })).body, '{}');

    await app.inject(post('/api/9/http/keyvals/zone_one', '{"a":"1","b":"2"}'));
    const emptied = await app.inject({ method: 'DELETE', url: '/api/9/http/keyvals/zone_one/' });
    assert.equal(emptied.statusCode, 204);
    assert.equal(emptied.headers['x-limitswitch-revision'], '5');
    assert.equal((await app.inject({ method: 'GET', url: '/api/9/http/keyvals/zone_one/' })).body, '{}');
  });

  it('GET all zones lists every known zone, empty ones too; fields filters keys, empty fields gives names', async () => {
    const { app } = await buildApp();
    await app.inject(post('/api/9/http/keyvals/zone_one', '{"a":"1","b":"2"}'));
    const all = await app.inject({ method: 'GET', url: '/api/9/http/keyvals' });
    assert.deepEqual(JSON.parse(all.body), { ips: {}, prefixes: {}, ttl: {}, zone_one: { a: '1', b: '2' } });
    assertMatchesSpec('getHttpKeyvals', all);
    const some = await app.inject({ method: 'GET', url: '/api/9/http/keyvals/?fields=b' });
    assert.deepEqual(JSON.parse(some.body).zone_one, { b: '2' });
    const names = await app.inject({ method: 'GET', url: '/api/9/http/keyvals/?fields=' });
    assert.equal(names.body, '{"ips":{},"prefixes":{},"ttl":{},"zone_one":{}}');
  });

  it('GET ?key= returns one pair or 404 KeyvalKeyNotFound; unknown zone is 404 KeyvalNotFound', async () => {
    const { app } = await buildApp();
    await app.inject(post('/api/9/http/keyvals/zone_one', '{"a":"1","b":"2"}'));
    assert.equal(
      (await app.inject({ method: 'GET', url: '/api/9/http/keyvals/zone_one?key=b' })).body,
      '{"b":"2"}',
    );
    const missing = await app.inject({ method: 'GET', url: '/api/9/http/keyvals/zone_one?key=zz' });
    assertNginxError(missing, 404, 'KeyvalKeyNotFound', 'keyval key not found');
    for (const method of ['GET', 'POST', 'PATCH', 'DELETE'] as const) {
      const res = await app.inject({
        method,
        url: '/api/9/http/keyvals/nope',
        payload: '{"a":"1"}',
        headers: JSON_HEADERS,
      });
      assertNginxError(res, 404, 'KeyvalNotFound', 'keyval not found');
    }
  });

  it('POST of an existing key is 409 with NGINX’s text; several keys only into an empty zone', async () => {
    const { app, store } = await buildApp();
    await app.inject(post('/api/9/http/keyvals/zone_one', '{"a":"1"}'));
    assertNginxError(
      await app.inject(post('/api/9/http/keyvals/zone_one', '{"a":"2"}')),
      409,
      'KeyvalKeyExists',
      'key "a" already exists',
    );
    assertNginxError(
      await app.inject(post('/api/9/http/keyvals/zone_one', '{"b":"1","c":"2"}')),
      400,
      'KeyvalFormatError',
      'only one key can be added: keyval zone "zone_one" already holds keys; change a key with PATCH (one key a request), or empty the zone with DELETE first',
    );
    assert.equal((await app.inject(post('/api/9/http/keyvals/zone_one', '{"b":"1"}'))).statusCode, 201);
    assert.deepEqual(Object.keys(await store.keyvals.getZone('zone_one', Date.now())).sort(), ['a', 'b']);
  });

  it('POST of several keys into a zone that holds keys keeps NGINX’s 400 KeyvalFormatError and says what to do instead (issue 34 §4)', async () => {
    const { app } = await buildApp();
    const url = '/api/9/http/keyvals/zone_one';
    // The README's step 1, run twice: the second time the zone already holds its keys.
    assert.equal((await app.inject(post(url, '{"/coffee":"1","/tea":"0"}'))).statusCode, 201);
    assertNginxError(
      await app.inject(post(url, '{"/coffee":"1","/tea":"0"}')),
      400,
      'KeyvalFormatError',
      'only one key can be added: keyval zone "zone_one" already holds keys; change a key with PATCH (one key a request), or empty the zone with DELETE first',
    );
    // What the text says works: PATCH changes a key; DELETE empties the zone, and the POST is taken again.
    assert.equal((await app.inject(patch(url, '{"/coffee":"0"}'))).statusCode, 204);
    assert.equal((await app.inject({ method: 'DELETE', url })).statusCode, 204);
    assert.equal((await app.inject(post(url, '{"/coffee":"1","/tea":"0"}'))).statusCode, 201);
  });

  it('PATCH: one key only, the key must exist', async () => {
    const { app } = await buildApp();
    await app.inject(post('/api/9/http/keyvals/zone_one', '{"a":"1"}'));
    assertNginxError(
      await app.inject(patch('/api/9/http/keyvals/zone_one', '{"a":"2","b":"3"}')),
      400,
      'KeyvalFormatError',
      'only one key can be updated',
    );
    assertNginxError(
      await app.inject(patch('/api/9/http/keyvals/zone_one', '{"missing":"2"}')),
      404,
      'KeyvalKeyNotFound',
      'keyval key not found',
    );
    assertNginxError(
      await app.inject(patch('/api/9/http/keyvals/zone_one', '{"missing":null}')),
      404,
      'KeyvalKeyNotFound',
    );
  });

  it('numbers are stored as their text; other value types are refused', async () => {
    const { app } = await buildApp();
    assert.equal((await app.inject(post('/api/9/http/keyvals/zone_one', '{"a":1}'))).statusCode, 201);
    assert.equal(
      (await app.inject(patch('/api/9/http/keyvals/zone_one', '{"a":{"value":2.5}}'))).statusCode,
      204,
    );
    assert.equal(
      (await app.inject({ method: 'GET', url: '/api/9/http/keyvals/zone_one' })).body,
      '{"a":"2.5"}',
    );
    for (const bad of ['true', '[]', '{"value":true}', '{"value":"x","other":1}', 'null']) {
      const res = await app.inject(post('/api/9/http/keyvals/zone_one', `{"b":${bad}}`));
      assertNginxError(res, 400, 'KeyvalFormatError', 'invalid value of key "b"');
    }
  });

  it('keys and values the store cannot hold as given are refused: a NUL in a key, a lone surrogate', async () => {
    const { app, store } = await buildApp();
    const url = '/api/9/http/keyvals/zone_one';
    assertNginxError(
      await app.inject(post(url, '{"a\\u0000b":"1"}')),
      400,
      'KeyvalFormatError',
      'invalid key format',
    );
    assertNginxError(
      await app.inject(post(url, '{"\\ud800":"1"}')),
      400,
      'KeyvalFormatError',
      'invalid key format',
    );
    assertNginxError(
      await app.inject(post(url, '{"k":"\\udfff"}')),
      400,
      'KeyvalFormatError',
      'invalid value of key "k"',
    );
    assertNginxError(
      await app.inject(patch(url, '{"\\ud800":null}')),
      400,
      'KeyvalFormatError',
      'invalid key format',
    );
    // A well-formed pair of surrogates (one emoji) is fine.
    assert.equal((await app.inject(post(url, '{"\\ud83d\\udd11":"\\ud83d\\udd11"}'))).statusCode, 201);
    assert.deepEqual(await store.keyvals.getZone('zone_one', Date.now()), {
      '🔑': { value: '🔑', expireAtMs: null },
    });
  });

  it("a zone's size is enforced as the config declares it: 413 KeyvalZoneFull, nothing written", async () => {
    const tiny = { name: 'tiny', type: 'string', timeoutMs: null, sizeBytes: 32_768 } as const;
    const { app, store } = await buildApp({ keyvalZones: [tiny] });
    const url = '/api/9/http/keyvals/tiny';
    for (let i = 0; i < 246; i++) {
      const res = await app.inject(post(url, JSON.stringify({ [`k${String(i).padStart(4, '0')}`]: '1' })));
      assert.equal(res.statusCode, 201, res.body);
    }
    assertNginxError(
      await app.inject(post(url, '{"k0246":"1"}')),
      413,
      'KeyvalZoneFull',
      'keyval zone "tiny" is full',
    );
    assert.equal(Object.keys(await store.keyvals.getZone('tiny', Date.now())).length, 246);
    assert.equal((await store.keyvals.head()).revision, 246);
  });

  it('body errors: key required, invalid JSON structure (400), not JSON (415), too large (413)', async () => {
    const { app } = await buildApp({ bodyLimitBytes: 1024 });
    const url = '/api/9/http/keyvals/zone_one';
    assertNginxError(await app.inject(post(url, '{}')), 400, 'KeyvalFormatError', 'key required');
    assertNginxError(await app.inject(post(url, '{"":"v"}')), 400, 'KeyvalFormatError', 'key required');
    assertNginxError(await app.inject(post(url, '["a"]')), 400, 'KeyvalFormatError', 'invalid JSON');
    assertNginxError(await app.inject(post(url, '"a"')), 400, 'KeyvalFormatError', 'invalid JSON');
    assertNginxError(await app.inject(patch(url, '{}')), 400, 'KeyvalFormatError', 'key required');
    assertNginxError(await app.inject(patch(url, '{"":null}')), 400, 'KeyvalFormatError', 'key required');
    assertNginxError(await app.inject(patch(url, '[]')), 400, 'KeyvalFormatError', 'invalid JSON');
    assertNginxError(
      await app.inject(post('/api/9/http/keyvals/ttl', '{"a":{"value":"v","expire":1.5}}')),
      400,
      'KeyvalFormatError',
      'invalid expire of key "a"',
    );
    assertNginxError(
      await app.inject(post('/api/9/http/keyvals/ips', '{"not-an-ip":"1"}')),
      400,
      'KeyvalFormatError',
      'invalid key format',
    );
    assertNginxError(await app.inject(post(url, '{"a":')), 415, 'JsonError', 'json error');
    assertNginxError(
      await app.inject(post(url, '{"a":', { 'content-type': 'application/json; charset=utf-8' })),
      415,
      'JsonError',
    );
    const big = JSON.stringify({ a: 'x'.repeat(2000) });
    assertNginxError(await app.inject(post(url, big)), 413, 'BodyTooLarge', 'request entity too large');
  });

  it('expire: only in zones with a timeout; the zone timeout applies by default', async () => {
    const { app, store } = await buildApp();
    const before = Date.now();
    assertNginxError(
      await app.inject(post('/api/9/http/keyvals/zone_one', '{"a":{"value":"1","expire":5000}}')),
      400,
      'KeyvalFormatError',
      'keyval timeout is not enabled',
    );
    assert.equal(
      (await app.inject(post('/api/9/http/keyvals/ttl', '{"a":{"value":"1","expire":5000}}'))).statusCode,
      201,
    );
    assert.equal((await app.inject(post('/api/9/http/keyvals/ttl', '{"b":"2"}'))).statusCode, 201);
    const entries = await store.keyvals.getZone('ttl', Date.now());
    const after = Date.now();
    assert.ok(entries.a!.expireAtMs! >= before + 5000 && entries.a!.expireAtMs! <= after + 5000);
    assert.ok(entries.b!.expireAtMs! >= before + 60_000 && entries.b!.expireAtMs! <= after + 60_000);
    assertNginxError(
      await app.inject(post('/api/9/http/keyvals/ttl', '{"c":{"value":"1","expire":0}}')),
      400,
      'KeyvalFormatError',
      'invalid expire of key "c"',
    );
  });

  it('type=ip zones take IPv4/IPv6 addresses and CIDR ranges only', async () => {
    const { app } = await buildApp();
    for (const key of ['10.0.0.1', '10.0.0.0/8', '2001:db8::/32', '::1']) {
      const res = await app.inject(post('/api/9/http/keyvals/ips', JSON.stringify({ [key]: '1' })));
      assert.equal(res.statusCode, 201, key);
    }
    for (const key of [
      '10.0.0.256',
      '10.0.0.0/33',
      'example.com',
      '127.1',
      'fe80::1%eth0',
      '::/129',
      '1.2.3.4/',
    ]) {
      const res = await app.inject(post('/api/9/http/keyvals/ips', JSON.stringify({ [key]: '1' })));
      assertNginxError(res, 400, 'KeyvalFormatError', 'invalid key format');
    }
    // Prefix zones take any key.
    assert.equal((await app.inject(post('/api/9/http/keyvals/prefixes', '{"/coffee":"1"}'))).statusCode, 201);
  });
});

describe('keyvals: keys that are JavaScript property names', () => {
  it('stores, lists and deletes a key named __proto__ like any other', async () => {
    const { app } = await buildApp();
    const created = await app.inject(
      post('/api/9/http/keyvals/zone_one', '{"__proto__":"1","constructor":"2"}'),
    );
    assert.equal(created.statusCode, 201);
    const zone = await app.inject({ method: 'GET', url: '/api/9/http/keyvals/zone_one' });
    assert.equal(zone.body, '{"__proto__":"1","constructor":"2"}');
    const deleted = await app.inject(patch('/api/9/http/keyvals/zone_one', '{"__proto__":null}'));
    assert.equal(deleted.statusCode, 204);
    assert.equal(
      (await app.inject({ method: 'GET', url: '/api/9/http/keyvals/zone_one' })).body,
      '{"constructor":"2"}',
    );
  });
});

describe('keyvals: a type=prefix key that can never match a $uri (issue 34 §8)', () => {
  const url = '/api/9/http/keyvals/prefixes';
  const warning = (key: string) =>
    `299 - "key ${JSON.stringify(key).replace(/["\\]/g, '\\$&')} of type=prefix keyval zone \\"prefixes\\" does not start with \\"/\\": it can never match a $uri, which always does"`;

  it('is stored as nginx stores it, and the POST and PATCH answers name it in a Warning header', async () => {
    const { app } = await buildApp();
    const created = await app.inject(post(url, '{"coffee":"1"}'));
    assert.equal(created.statusCode, 201);
    assert.equal(created.headers.warning, warning('coffee'));
    const changed = await app.inject(patch(url, '{"coffee":"0"}'));
    assert.equal(changed.statusCode, 204);
    assert.equal(changed.headers.warning, warning('coffee'));
    assert.equal((await app.inject({ method: 'GET', url })).body, '{"coffee":"0"}');
  });

  it('names each such key of a POST once; keys with "/" first, deletions and other zone types have none', async () => {
    const { app } = await buildApp();
    const created = await app.inject(post(url, '{"tea":"1","/coffee":"1","a\\"b":"1"}'));
    assert.equal(created.statusCode, 201);
    assert.deepEqual(created.headers.warning, [warning('tea'), warning('a"b')]);
    assert.equal((await app.inject(post(url, '{"/latte":"1"}'))).headers.warning, undefined);
    const deleted = await app.inject(patch(url, '{"tea":null}'));
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.headers.warning, undefined);
    const exact = await app.inject(post('/api/9/http/keyvals/zone_one', '{"coffee":"1"}'));
    assert.equal(exact.statusCode, 201);
    assert.equal(exact.headers.warning, undefined);
  });

  it('a key outside ASCII is sent as its UTF-8 bytes, as the Kubernetes API server sends warnings', async () => {
    const { app } = await buildApp();
    const created = await app.inject(post(url, '{"café":"1"}'));
    assert.equal(created.statusCode, 201);
    assert.equal(Buffer.from(String(created.headers.warning), 'latin1').toString('utf8'), warning('café'));
  });
});
