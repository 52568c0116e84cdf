import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { RedisKeyvalStore } from '../../src/store/redis-keyval-store.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const unavailable = { code: 'RL_ERR_STORE_UNAVAILABLE', status: 503, message: 'keyval store unavailable' };
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
    const store = new RedisKeyvalStore({ url: server.url, ...options });
    cleanup.push(
      () => store.close(),
      () => server.stop(),
    );
    return { server, store };
  }

  it('a write to a killed Redis fails within the 2 s default with RL_ERR_STORE_UNAVAILABLE; nothing is applied', async () => {
    const { server, store } = await setup(true, {});
    await store.add('z', { a: never('1') });
    await server.kill();
    const startMs = performance.now();
    await assert.rejects(store.set('z', 'b', never('2')), unavailable);
    // Bounded by the command timeout (2 s by default), with slack for a loaded machine.
    assert.ok(performance.now() - startMs < 5000);
    await assert.rejects(store.snapshot(), unavailable);
    await server.restart();
    await waitFor(
      () =>
        store.revision().then(
          () => true,
          () => false,
        ),
      { message: 'store reachable again' },
    );
    assert.equal(await store.revision(), 1);
    assert.deepEqual(await store.getZone('z', Date.now()), { a: never('1') });
    assert.equal((await store.set('z', 'b', never('2'))).revision, 2);
  });

  it('a write to a paused Redis times out; after resume it is applied in full or not at all', async () => {
    const { server, store } = await setup(false);
    await store.add('z', { a: never('1') });
    server.pause();
    await assert.rejects(store.add('z', { b: never('2') }), unavailable);
    server.resume();
    await waitFor(
      () =>
        store.revision().then(
          () => true,
          () => false,
        ),
      { message: 'store answering again' },
    );
    const revision = await store.revision();
    const zone = await store.getZone('z', Date.now());
    const log = (await store.changesSince(0))!;
    assert.equal(log.length, revision);
    if (revision === 2) assert.deepEqual(zone, { a: never('1'), b: never('2') });
    else assert.deepEqual([revision, zone], [1, { a: never('1') }]);
  });

  it('a store created while Redis is down fails, then works once Redis is up', async () => {
    const { server, store } = await setup(false);
    await server.kill();
    const late = new RedisKeyvalStore({ url: server.url, commandTimeoutMs: 500 });
    cleanup.push(() => late.close());
    await assert.rejects(late.head(), unavailable);
    await assert.rejects(
      late.subscribe(() => {}),
      unavailable,
    );
    await server.restart();
    await waitFor(
      () =>
        late.head().then(
          () => true,
          () => false,
        ),
      { message: 'late store connected' },
    );
    assert.equal((await late.add('z', { k: never('v') })).revision, 1);
    assert.deepEqual(await store.getZone('z', Date.now()), { k: never('v') });
  });

  it('Redis restarted without persistence comes back empty under a new epoch', async () => {
    const { server, store } = await setup(false);
    await store.add('z', { a: never('1') });
    const before = await store.head();
    await server.kill();
    await server.restart();
    await waitFor(
      () =>
        store.head().then(
          () => true,
          () => false,
        ),
      { message: 'store reachable again' },
    );
    const afterRestart = await store.head();
    assert.equal(afterRestart.revision, 0);
    assert.notEqual(afterRestart.epoch, before.epoch);
  });
});
