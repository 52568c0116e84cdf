/**
 * The sequence nginx-plus-go-client's own integration test (`tests/client_test.go`, `TestKeyValue`)
 * runs against a real NGINX Plus, sent the way the client builds its URLs (GET/POST without a trailing
 * slash, PATCH/DELETE with one), over HTTP, against a real Redis.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type ControlPlaneServer, startControlPlaneServer } from '../../src/control-plane/server.ts';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import type { Store } from '../../src/store/store.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { addCounters } from './harness.ts';

/**
 * What the Go client sends and does with a response: a POST body as `application/json`, a PATCH body
 * with no `Content-Type` at all (its `patch` sets none, and Go's client adds none); the expected status,
 * else NGINX's error object decoded.
 */
async function call(method: string, url: string, expected: number, body?: unknown): Promise<unknown> {
  const res = await fetch(url, {
    method,
    ...(body === undefined
      ? {}
      : {
          // A Uint8Array body: fetch gives it no Content-Type, as Go's client does not.
          body: new TextEncoder().encode(JSON.stringify(body)),
          headers: method === 'POST' ? { 'content-type': 'application/json' } : {},
        }),
  });
  const text = await res.text();
  if (res.status !== expected) {
    const err = JSON.parse(text) as {
      error: { status: number; text: string; code: string };
      request_id: string;
    };
    throw new Error(
      `error.status=${err.error.status}; error.text=${err.error.text}; error.code=${err.error.code}`,
    );
  }
  return text === '' ? undefined : JSON.parse(text);
}

describe('nginx-plus-go-client TestKeyValue sequence over HTTP on Redis', () => {
  let redis: RedisServer;
  let store: Store;
  let server: ControlPlaneServer;
  let endpoint: string;

  before(async () => {
    redis = await RedisServer.start();
    store = openRedisStore({ url: redis.url });
    server = await startControlPlaneServer({
      store,
      keyvalZones: [{ name: 'zone_one', type: 'string', timeoutMs: null, sizeBytes: null }],
      limitReqZones: ['one'],
      host: '127.0.0.1',
      port: 0,
    });
    endpoint = `${server.url}/api`;
  });

  after(async () => {
    await server.close();
    await store.close();
    await redis.stop();
  });

  const get = (path: string) => call('GET', `${endpoint}/9/${path}`, 200);
  const post = (path: string, body: unknown) => call('POST', `${endpoint}/9/${path}`, 201, body);
  const patch = (path: string, body: unknown) => call('PATCH', `${endpoint}/9/${path}/`, 204, body);
  const del = (path: string) => call('DELETE', `${endpoint}/9/${path}/`, 204);

  it('WithCheckAPI: GET {endpoint} lists version 9', async () => {
    const versions = (await call('GET', endpoint, 200)) as number[];
    assert.ok(versions.includes(9));
  });

  it('runs TestKeyValue step by step', async () => {
    const zone = 'http/keyvals/zone_one';
    await post(zone, { key1: 'val1' });
    assert.deepEqual(await get(zone), { key1: 'val1' });
    assert.deepEqual(await get('http/keyvals'), { zone_one: { key1: 'val1' } });

    await patch(zone, { key1: 'valModified1' });
    assert.deepEqual(await get(zone), { key1: 'valModified1' });

    await assert.rejects(post(zone, { key1: 'valModified1' }), {
      message: 'error.status=409; error.text=key "key1" already exists; error.code=KeyvalKeyExists',
    });

    await post(zone, { key2: 'val2' });
    assert.deepEqual(await get(zone), { key1: 'valModified1', key2: 'val2' });

    await patch(zone, { key1: null });
    assert.deepEqual(await get(zone), { key2: 'val2' });

    await del(zone);
    assert.deepEqual(await get(zone), {});

    await assert.rejects(patch(zone, { key1: 'val1' }), {
      message: 'error.status=404; error.text=keyval key not found; error.code=KeyvalKeyNotFound',
    });
    // Five successful writes, five revisions, all in Redis.
    assert.equal((await store.keyvals.head()).revision, 5);
  });

  it('GetHTTPLimitReqs decodes a map of non-negative integers', async () => {
    await addCounters(store, 'replica-1', {
      one: { passed: 3, delayed: 1, rejected: 2, delayed_dry_run: 0, rejected_dry_run: 0 },
    });
    assert.deepEqual(await get('http/limit_reqs'), {
      one: { passed: 3, delayed: 1, rejected: 2, delayed_dry_run: 0, rejected_dry_run: 0 },
    });
  });
});
