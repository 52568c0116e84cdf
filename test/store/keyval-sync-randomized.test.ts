/**
 * Randomized: three writers mutate at random while faults strike at random (kill and restart, data
 * lost on restart, pause and resume, pub/sub connections killed). At the end every replica's mirror
 * equals Redis, revision and epoch included, and each applied its changes strictly in order.
 * The seed is printed; `LIMITSWITCH_SEED=<n>` replays a run's choices.
 */
import assert from 'node:assert/strict';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { isLimitswitchError } from '../../src/shared/errors.ts';
import { KeyvalSync, type KeyvalSyncUpdate } from '../../src/store/keyval-sync.ts';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import type { Store } from '../../src/store/store.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { seededRandom } from '../helpers/seeded-random.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { assertInOrder, converged } from './sync-fixtures.ts';

const DURATION_MS = 6000;
const EXPECTED_FAILURES = new Set([
  'KeyvalKeyExists',
  'KeyvalKeyNotFound',
  'KeyvalFormatError',
  'StoreUnavailable',
]);

const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  for (const step of cleanup.reverse()) await step();
});

it('random writers and random faults: every replica ends equal to Redis, revision for revision', async (t) => {
  const seed = Number(process.env.LIMITSWITCH_SEED ?? Math.floor(Math.random() * 2 ** 31));
  t.diagnostic(`seed ${seed}`);
  const random = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const pause = (maxMs: number) => new Promise((r) => setTimeout(r, Math.floor(random() * maxMs)));

  const server = await RedisServer.start({ persistence: true });
  cleanup.push(() => server.stop());
  const open = () => {
    const store = openRedisStore({ url: server.url, commandTimeoutMs: 500 });
    cleanup.push(() => store.close());
    return store;
  };
  const writers = [open(), open(), open()];
  const replicas: { sync: KeyvalSync; updates: KeyvalSyncUpdate[] }[] = [];
  for (let i = 0; i < 4; i++) {
    const sync = new KeyvalSync({ store: open().keyvals, checkIntervalMs: 250 });
    const updates: KeyvalSyncUpdate[] = [];
    sync.onApply((u) => updates.push(u));
    cleanup.push(() => sync.stop());
    replicas.push({ sync, updates });
  }
  await Promise.all(replicas.map((r) => r.sync.start()));

  const endMs = performance.now() + DURATION_MS;
  const outcomes = new Map<string, number>();
  const count = (what: string) => outcomes.set(what, (outcomes.get(what) ?? 0) + 1);

  const write = async (store: Store) => {
    while (performance.now() < endMs) {
      const zone = pick(['a', 'b', 'c']);
      const key = pick(['k1', 'k2', 'k3', 'k4']);
      const entry = {
        value: String(Math.floor(random() * 1000)),
        expireAtMs: random() < 0.2 ? Date.now() + 200 : null,
      };
      const op = pick(['add', 'add-many', 'change', 'set', 'delete', 'empty', 'expire'] as const);
      try {
        if (op === 'add') await store.keyvals.add(zone, { [key]: entry });
        else if (op === 'add-many') await store.keyvals.add(zone, { [key]: entry, x: entry });
        else if (op === 'change') await store.keyvals.change(zone, key, entry);
        else if (op === 'set') await store.keyvals.set(zone, key, entry);
        else if (op === 'delete') await store.keyvals.delete(zone, key);
        else if (op === 'empty') await store.keyvals.empty(zone);
        else await store.keyvals.expireDue(Date.now());
        count(`${op} ok`);
      } catch (err) {
        if (!isLimitswitchError(err) || !EXPECTED_FAILURES.has(err.code)) throw err;
        count(err.code);
        if (err.code === 'StoreUnavailable') await pause(50);
      }
      await pause(5);
    }
  };

  const faults = async () => {
    while (performance.now() < endMs - 500) {
      await pause(600);
      const fault = pick(['kill', 'wipe', 'pause', 'pubsub'] as const);
      count(`fault ${fault}`);
      if (fault === 'kill' || fault === 'wipe') {
        await server.kill();
        if (fault === 'wipe') {
          for (const name of readdirSync(server.dir))
            rmSync(join(server.dir, name), { recursive: true, force: true });
        }
        await pause(300);
        await server.restart();
      } else if (fault === 'pause') {
        server.pause();
        await pause(700);
        server.resume();
      } else {
        await server.cli('client', 'kill', 'type', 'pubsub').catch(() => '');
      }
    }
  };

  await Promise.all([...writers.map(write), faults()]);
  t.diagnostic(JSON.stringify(Object.fromEntries([...outcomes].sort())));
  assert.ok((outcomes.get('set ok') ?? 0) > 10, 'the writers got work done between faults');

  const truth = writers[0]!;
  await waitFor(
    async () => (await Promise.all(replicas.map((r) => converged(r.sync, truth.keyvals)))).every(Boolean),
    {
      timeoutMs: 5000,
      message: 'every replica equal to Redis',
    },
  );
  const head = await truth.keyvals.head();
  for (const r of replicas) {
    assert.deepEqual(
      { revision: r.sync.state().appliedRevision, epoch: r.sync.state().epoch },
      { revision: head.revision, epoch: head.epoch },
    );
    assertInOrder(r.updates);
  }
});
