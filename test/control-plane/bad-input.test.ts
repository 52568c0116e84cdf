/**
 * Property-based bad input over every route of the spec (fast-check): whatever arrives, the answer is
 * never a 5xx, every error is in NGINX's shape, a rejected request changes nothing, and successful
 * JSON answers match the spec.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { loadApiSpec } from '../../src/control-plane/spec.ts';
import type { Store } from '../../src/store/store.ts';
import { addCounters, assertMatchesSpec, buildApp, isNginxError, operationFor } from './harness.ts';

const spec = loadApiSpec();
const METHODS = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'HEAD'] as const;
type Method = (typeof METHODS)[number];

const segment = fc.oneof(
  fc.constantFrom(
    'zone_one',
    'ttl',
    'ips',
    'prefixes',
    'req_zone',
    'nope',
    '',
    '..',
    '%2F',
    '%00',
    '%',
    'é',
    '9',
  ),
  fc.string({ maxLength: 12 }).map((s) => encodeURIComponent(s)),
);
const version = fc.oneof(
  fc.constantFrom('1', '3', '4', '5', '6', '8', '9'),
  fc.constantFrom('0', '10', '09', 'x', '-1', '9.0'),
);

/** A path from a spec template, its parameters filled with good and bad values. */
const specPath = fc
  .tuple(fc.constantFrom(...spec.operations.flatMap((op) => op.routePaths)), version, segment, fc.boolean())
  .map(([template, v, zone, extra]) => {
    const path = template.replace(':version', v).replace(':zone', zone);
    return extra ? `${path}${path.endsWith('/') ? '' : '/'}x` : path;
  });
const randomPath = fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join('/')}`);

const queryValue = fc.oneof(
  fc.constantFrom('applied', '2s', '10ms', '0', '', 'replica', 'passed,rejected', '1000', '1001', '-1', 'a'),
  fc.string({ maxLength: 8 }),
);
const query = fc
  .array(
    fc.tuple(
      fc.constantFrom('fields', 'key', 'wait', 'timeout', 'by', 'limit', 'junk', 'fields[]', '__proto__'),
      queryValue,
    ),
    { maxLength: 4 },
  )
  .map((pairs) =>
    pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`,
  );

const keyvalValue = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.double(),
  fc.constant(null),
  fc.boolean(),
  fc.record(
    {
      value: fc.oneof(fc.string({ maxLength: 4 }), fc.integer(), fc.constant(null)),
      expire: fc.oneof(fc.integer(), fc.double(), fc.string()),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 2 }),
);
const body = fc.oneof(
  fc.constant(undefined),
  fc
    .dictionary(
      fc.oneof(
        fc.constantFrom('a', '', '10.0.0.1', '10.0.0.0/33', '__proto__', 'constructor'),
        fc.string({ maxLength: 5 }),
      ),
      keyvalValue,
      { maxKeys: 3 },
    )
    .map((o) => JSON.stringify(o)),
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 30 }),
  fc.constantFrom(
    '{',
    '{"a":',
    'null',
    '[]',
    '{"a":"1"}',
    '{"a":"1","b":"2"}',
    '{"a":null}',
    'x'.repeat(70 * 1024),
  ),
);
const contentType = fc.constantFrom(
  undefined,
  'application/json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'application/json; charset=utf-16',
  'multipart/form-data',
);
const authorization = fc.constantFrom(undefined, 'Bearer nope', 'Bearer', 'Basic abc', 'Bearer  ');
/** The Host and Origin of a page: the API's own, another site's (DNS rebinding, CSRF), or malformed. */
const host = fc.constantFrom(
  undefined,
  'localhost',
  '127.0.0.1:8080',
  '[::1]:8080',
  'rebind.attacker.example',
  '[::1',
  'a..b',
  'x'.repeat(300),
);
const origin = fc.constantFrom(undefined, 'null', 'http://localhost', 'http://evil.example', '%', 'http://[');
const fetchSite = fc.constantFrom(undefined, 'same-origin', 'cross-site', 'none', 'bogus');

const anyRequest = fc.record({
  method: fc.constantFrom(...METHODS),
  path: fc.oneof({ weight: 4, arbitrary: specPath }, { weight: 1, arbitrary: randomPath }),
  query,
  body,
  contentType,
  authorization,
  host,
  origin,
  fetchSite,
  reason: fc.option(fc.string({ maxLength: 300 }), { nil: undefined }),
});

/** Writes that are nearly right, so that successes and precondition failures are exercised too. */
const plausibleWrite = fc.record({
  method: fc.constantFrom('POST', 'POST', 'POST', 'PATCH', 'PATCH', 'DELETE'),
  path: fc.constantFrom(
    '/api/9/http/keyvals/zone_one',
    '/api/9/http/keyvals/ttl/',
    '/api/4/http/keyvals/ips',
  ),
  query: fc.constantFrom('', '?wait=applied&timeout=50ms'),
  body: fc.oneof(
    { weight: 9, arbitrary: nearlyRightBody() },
    { weight: 1, arbitrary: fc.constant(JSON.stringify({ big: 'x'.repeat(70 * 1024) })) },
  ),
  contentType: fc.constant('application/json'),
  authorization: fc.constant(undefined),
  host: fc.constant(undefined),
  origin: fc.constant(undefined),
  fetchSite: fc.constant(undefined),
  reason: fc.constant(undefined),
});

function nearlyRightBody() {
  return fc
    .dictionary(
      fc.oneof(
        { weight: 3, arbitrary: fc.constantFrom('a', 'b', 'x') },
        { weight: 1, arbitrary: fc.string({ maxLength: 3 }) },
      ),
      fc.oneof({ weight: 2, arbitrary: fc.string({ maxLength: 4 }) }, { weight: 1, arbitrary: keyvalValue }),
      { minKeys: 1, maxKeys: 2 },
    )
    .map((o) => JSON.stringify(o));
}

// Nearly right writes often enough that each success and precondition failure shows up in every run
// (at 3:1, a 409 came about four times in 600 runs, and about one run in 40 saw none).
const requestArb = fc.oneof({ weight: 3, arbitrary: anyRequest }, { weight: 2, arbitrary: plausibleWrite });

async function seed(store: Store): Promise<void> {
  await store.keyvals.add('zone_one', {
    a: { value: '1', expireAtMs: null },
    b: { value: '2', expireAtMs: null },
  });
  await store.keyvals.add('ips', { '10.0.0.0/8': { value: '1', expireAtMs: null } });
  await addCounters(store, 'gone-replica', {
    req_zone: { passed: 5, delayed: 1, rejected: 2, delayed_dry_run: 0, rejected_dry_run: 0 },
  });
}

async function state(store: Store) {
  return {
    snapshot: await store.keyvals.snapshot(),
    counters: await store.counters.read('limit_req'),
    audit: (await store.audit.recent(1000)).length,
  };
}

type GeneratedRequest = typeof requestArb extends fc.Arbitrary<infer T> ? T : never;

async function send(app: FastifyInstance, r: GeneratedRequest) {
  const headers: Record<string, string> = {};
  if (r.contentType) headers['content-type'] = r.contentType;
  if (r.authorization) headers.authorization = r.authorization;
  if (r.reason !== undefined) headers['x-limitswitch-reason'] = r.reason;
  if (r.host !== undefined) headers.host = r.host;
  if (r.origin !== undefined) headers.origin = r.origin;
  if (r.fetchSite !== undefined) headers['sec-fetch-site'] = r.fetchSite;
  return app.inject({
    method: r.method as Method,
    url: `${r.path}${r.query}`,
    headers,
    ...(r.body === undefined || r.method === 'GET' || r.method === 'HEAD' ? {} : { payload: r.body }),
  });
}

describe('bad input over every route', () => {
  it('no 5xx, NGINX-shaped errors, no state change on rejection, spec-shaped successes', async () => {
    const { app, store } = await buildApp({ limitReqZones: ['req_zone'] });
    await seed(store);
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const before = await state(store);
        const res = await send(app, r);
        seen.add(res.statusCode);
        assert.ok(res.statusCode < 500, `${r.method} ${r.path}${r.query} → ${res.statusCode} ${res.body}`);
        if (res.statusCode >= 400) {
          if (r.method !== 'HEAD') assert.ok(isNginxError(res.statusCode, res.body), res.body);
          assert.deepEqual(
            await state(store),
            before,
            `${r.method} ${r.path} changed state yet answered ${res.statusCode}`,
          );
          return;
        }
        // light-my-request resolves dot segments as a URL parser does.
        const operation = operationFor(r.method, new URL(r.path, 'http://x').pathname);
        const schema = operation?.schema.response?.[String(res.statusCode)];
        if (operation && schema && r.method !== 'HEAD') assertMatchesSpec(operation.operationId, res);
      }),
      { numRuns: 600 },
    );
    // The inputs reached deep enough to succeed as well as to fail in every way.
    for (const status of [200, 201, 204, 400, 404, 405, 409, 413, 415])
      assert.ok(seen.has(status), `never saw ${status}`);
    // Still serving.
    assert.equal((await app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });

  it('with tokens configured, no request without the token changes anything', async () => {
    const { app, store } = await buildApp({
      auth: { tokens: new Map([['ops', 'ops-0123456789abcdef']]) },
      limitReqZones: ['req_zone'],
    });
    await seed(store);
    const before = await state(store);
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const res = await send(app, r);
        assert.ok(res.statusCode < 500);
        if (['POST', 'PATCH', 'DELETE'].includes(r.method)) {
          assert.ok(res.statusCode >= 400, `${r.method} ${r.path} → ${res.statusCode}`);
        }
      }),
      { numRuns: 300 },
    );
    assert.deepEqual(await state(store), before);
  });
});
