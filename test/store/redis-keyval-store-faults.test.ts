import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const unavailable = { code: 'StoreUnavailable', status: 503, message: 'keyval store unavailable' };
const never = (value: string) => ({ value, expireAtMs: null });

describe('redis store while Redis is away', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  async function setup(
    persistence: boolean,
    options: { commandTimeoutMs?: number } = { commandTimeoutMs: 1000 },
  ) {
    const server = await RedisServer.start({ persistence });
    const store = openRedisStore({ url: server.url, ...options });
    cleanup.push(
      () => store.close(),
      () => server.stop(),
    );
    return { server, store };
  }

  it('a write to a killed Redis fails within the 2 s default with StoreUnavailable; nothing is applied', async () => {
    const { server, store } = await setup(true, {});
    await store.keyvals.add('z', { a: never('1') });
    await server.kill();
    const startMs = performance.now();
    await assert.rejects(store.keyvals.set('z', 'b', never('2')), unavailable);
    // Bounded by the command timeout (2 s by default), with slack for a loaded machine.
    assert.ok(performance.now() - startMs < 5000);
    await assert.rejects(store.keyvals.snapshot(), unavailable);
    await server.restart();
    await waitFor(
      () =>
        store.keyvals
          .head()
          .then((h) => h.revision)
          .then(
            () => true,
            () => false,
          ),
      { message: 'store reachable again' },
    );
    assert.equal((await store.keyvals.head()).revision, 1);
    assert.deepEqual(await store.keyvals.getZone('z', Date.now()), { a: never('1') });
    assert.equal((await store.keyvals.set('z', 'b', never('2'))).revision, 2);
  });

  it('a write to a paused Redis times out; after resume it is applied in full or not at all', async () => {
    const { server, store } = await setup(false);
    await store.keyvals.add('z', { a: never('1') });
    server.pause();
    await assert.rejects(store.keyvals.add('z', { b: never('2') }), unavailable);
    server.resume();
    await waitFor(
      () =>
        store.keyvals
          .head()
          .then((h) => h.revision)
          .then(
            () => true,
            () => false,
          ),
      { message: 'store answering again' },
    );
    const revision = (await store.keyvals.head()).revision;
    const zone = await store.keyvals.getZone('z', Date.now());
    const log = (await store.keyvals.changesSince(0))!;
    assert.equal(log.length, revision);
    if (revision === 2) assert.deepEqual(zone, { a: never('1'), b: never('2') });
    else assert.deepEqual([revision, zone], [1, { a: never('1') }]);
  });

  it('a store created while Redis is down fails, then works once Redis is up', async () => {
    const { server, store } = await setup(false);
    await server.kill();
    const late = openRedisStore({ url: server.url, commandTimeoutMs: 500 });
    cleanup.push(() => late.close());
    await assert.rejects(late.keyvals.head(), unavailable);
    await assert.rejects(
      late.keyvals.subscribe(() => {}),
      unavailable,
    );
    await server.restart();
    await waitFor(
      () =>
        late.keyvals.head().then(
          () => true,
          () => false,
        ),
      { message: 'late store connected' },
    );
    assert.equal((await late.keyvals.add('z', { k: never('v') })).revision, 1);
    assert.deepEqual(await store.keyvals.getZone('z', Date.now()), { k: never('v') });
  });

  it('Redis restarted without persistence comes back empty under a new epoch', async () => {
    const { server, store } = await setup(false);
    await store.keyvals.add('z', { a: never('1') });
    const before = await store.keyvals.head();
    await server.kill();
    await server.restart();
    await waitFor(
      () =>
        store.keyvals.head().then(
          () => true,
          () => false,
        ),
      { message: 'store reachable again' },
    );
    const afterRestart = await store.keyvals.head();
    assert.equal(afterRestart.revision, 0);
    assert.notEqual(afterRestart.epoch, before.epoch);
  });
});
