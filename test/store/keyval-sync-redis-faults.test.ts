/**
 * Replicas syncing from a real redis-server through faults: kill and restart (with and without
 * persistence), pause (SIGSTOP) and resume, pub/sub connections killed. During each fault every
 * replica keeps its last state; after it, every replica equals Redis again within a second.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { KeyvalSync, type KeyvalSyncUpdate } from '../../src/store/keyval-sync.ts';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { assertInOrder, converged } from './sync-fixtures.ts';

const never = (value: string) => ({ value, expireAtMs: null });
/** The bar: converged within 1 s after Redis is back (answers PING, or SIGCONT). */
const CONVERGE_MS = 1000;

interface Replica {
  readonly sync: KeyvalSync;
  readonly updates: KeyvalSyncUpdate[];
}

describe('keyval sync through Redis faults', () => {
  const cleanup: (() => Promise<void>)[] = [];
  after(async () => {
    for (const step of cleanup.reverse()) await step();
  });

  async function setup(persistence: boolean) {
    const server = await RedisServer.start({ persistence });
    cleanup.push(() => server.stop());
    const writer = openRedisStore({ url: server.url, commandTimeoutMs: 1000 });
    cleanup.push(() => writer.close());
    const replicas: Replica[] = [];
    for (let i = 0; i < 3; i++) {
      const store = openRedisStore({ url: server.url, commandTimeoutMs: 1000 });
      const sync = new KeyvalSync({ store: store.keyvals, checkIntervalMs: 250 });
      const updates: KeyvalSyncUpdate[] = [];
      sync.onApply((u) => updates.push(u));
      cleanup.push(
        () => store.close(),
        () => sync.stop(),
      );
      replicas.push({ sync, updates });
    }
    await Promise.all(replicas.map((r) => r.sync.start()));
    const allConverged = async () =>
      (await Promise.all(replicas.map((r) => converged(r.sync, writer.keyvals)))).every(Boolean);
    return { server, writer, replicas, allConverged };
  }

  async function assertHeldDuringFault(replicas: readonly Replica[], zone: Record<string, unknown>) {
    await waitFor(() => replicas.every((r) => !r.sync.state().connected), {
      message: 'replicas notice the fault',
    });
    for (const r of replicas) {
      assert.deepEqual(r.sync.zone('z'), zone);
      assert.match(r.sync.state().lastError ?? '', /^keyval store unavailable/);
    }
  }

  for (const persistence of [true, false]) {
    it(`kill and restart ${persistence ? 'with' : 'without'} persistence`, async (t) => {
      const { server, writer, replicas, allConverged } = await setup(persistence);
      await writer.keyvals.add('z', { a: never('1'), b: never('2') });
      await writer.keyvals.delete('z', 'b');
      await waitFor(allConverged, { message: 'initial convergence' });
      await server.kill();
      await assertHeldDuringFault(replicas, { a: never('1') });
      await server.restart();
      const ms = await waitFor(allConverged, {
        timeoutMs: CONVERGE_MS,
        message: 'convergence after restart',
      });
      t.diagnostic(`converged ${ms.toFixed(0)} ms after Redis was back`);
      const expected = persistence ? { a: never('1') } : {};
      for (const r of replicas) assert.deepEqual(r.sync.zone('z'), expected);
      assert.equal(replicas[0]!.sync.state().appliedRevision, persistence ? 2 : 0);
      await writer.keyvals.set('z', 'c', never('3'));
      await waitFor(allConverged, { timeoutMs: CONVERGE_MS, message: 'the next change' });
      // The next periodic check reports the store reachable again.
      await waitFor(
        () => replicas.every((r) => r.sync.state().connected && r.sync.state().lastError === null),
        {
          timeoutMs: CONVERGE_MS,
          message: 'connected again',
        },
      );
      for (const r of replicas) assertInOrder(r.updates);
    });
  }

  it('pause (SIGSTOP) and resume (SIGCONT)', async (t) => {
    const { server, writer, replicas, allConverged } = await setup(false);
    await writer.keyvals.add('z', { a: never('1') });
    await waitFor(allConverged, { message: 'initial convergence' });
    server.pause();
    await assert.rejects(writer.keyvals.set('z', 'a', never('2')), { code: 'StoreUnavailable' });
    await assertHeldDuringFault(replicas, { a: never('1') });
    server.resume();
    const ms = await waitFor(allConverged, { timeoutMs: CONVERGE_MS, message: 'convergence after resume' });
    t.diagnostic(`converged ${ms.toFixed(0)} ms after Redis was back`);
    await writer.keyvals.set('z', 'a', never('3'));
    await waitFor(allConverged, { timeoutMs: CONVERGE_MS, message: 'the next change' });
    for (const r of replicas) {
      assert.deepEqual(r.sync.zone('z'), { a: never('3') });
      assertInOrder(r.updates);
    }
  });

  it('pub/sub connections killed mid-stream: the missed changes still arrive', async (t) => {
    const { server, writer, replicas, allConverged } = await setup(false);
    await writer.keyvals.add('z', { a: never('1') });
    await waitFor(allConverged, { message: 'initial convergence' });
    assert.equal(await server.cli('client', 'kill', 'type', 'pubsub'), '3');
    for (let i = 0; i < 20; i++) await writer.keyvals.set('z', `k${i}`, never(String(i)));
    const ms = await waitFor(allConverged, { timeoutMs: CONVERGE_MS, message: 'convergence after the kill' });
    t.diagnostic(`converged ${ms.toFixed(0)} ms after the last write`);
    // The subscriptions came back by themselves: later changes arrive by pub/sub again.
    await waitFor(
      async () => (await server.cli('pubsub', 'numsub', writer.backend.keys.channel)).endsWith('3'),
      {
        message: 'three subscribers again',
      },
    );
    await writer.keyvals.set('z', 'last', never('x'));
    await waitFor(allConverged, { timeoutMs: CONVERGE_MS, message: 'the next change' });
    for (const r of replicas) {
      assert.deepEqual(r.sync.zone('z').last, never('x'));
      assertInOrder(r.updates);
    }
  });
});
