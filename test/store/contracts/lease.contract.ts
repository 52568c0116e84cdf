/**
 * The leases port contract: exclusive leases with tokens, compare-and-delete release, records fenced
 * by the lease. The interleaving test is the race the keyval-based lock had: a holder whose lease
 * lapsed (paused, slow store) must neither remove nor overwrite what the next holder does.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Lease } from '../../../src/store/lease-store.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import type { StoreHarness } from './store-harness.ts';

export function leaseContract(name: string, harness: StoreHarness): void {
  describe(`leases port contract: ${name}`, () => {
    it('one holder at a time; released by its token only', async () => {
      const store = await harness.create();
      const peer = await harness.peer(store);
      const lease = await store.leases.acquire('automation/z/k', 30_000);
      assert.ok(lease);
      assert.equal(await peer.leases.acquire('automation/z/k', 30_000), null);
      assert.ok(await peer.leases.acquire('automation/z/other', 30_000), 'another name is free');
      assert.equal(await peer.leases.release({ name: lease.name, token: 'not-the-token' }), false);
      assert.equal(await peer.leases.acquire('automation/z/k', 30_000), null);
      assert.equal(await store.leases.release(lease), true);
      assert.equal(await store.leases.release(lease), false);
      assert.ok(await peer.leases.acquire('automation/z/k', 30_000));
    });

    it('records: written only under a held lease, read by prefix, live ones only', async () => {
      let nowMs = 1_700_000_000_000;
      const store = await harness.create({ clock: { nowMs: () => nowMs } });
      const lease = await store.leases.acquire('l', 30_000);
      assert.ok(lease);
      assert.equal(await store.leases.putRecord(lease, 'a/1', { value: 'one', expireAtMs: null }), true);
      assert.equal(
        await store.leases.putRecord(lease, 'a/2', { value: 'two', expireAtMs: nowMs + 100 }),
        true,
      );
      assert.equal(await store.leases.putRecord(lease, 'b/1', { value: 'three', expireAtMs: null }), true);
      assert.equal(
        await store.leases.putRecord({ name: 'l', token: 'forged' }, 'a/3', { value: 'x', expireAtMs: null }),
        false,
      );
      assert.deepEqual(
        { ...(await store.leases.records('a/', nowMs)) },
        {
          'a/1': { value: 'one', expireAtMs: null },
          'a/2': { value: 'two', expireAtMs: nowMs + 100 },
        },
      );
      assert.deepEqual(Object.keys(await store.leases.records('a/', nowMs + 100)), ['a/1']);
      nowMs += 200;
      assert.equal(await store.leases.putRecord(lease, 'a/1', null), true);
      assert.deepEqual(
        { ...(await store.leases.records('', nowMs)) },
        { 'b/1': { value: 'three', expireAtMs: null } },
      );
      assert.deepEqual(Object.keys(await store.leases.records('__proto__', nowMs)), []);
    });

    it('two control planes interleaved: a lapsed holder can neither release nor write over the next one', async () => {
      const a = await harness.create();
      const b = await harness.peer(a);
      const name = 'automation/limitreq_uri/%2Fcoffee';
      const first = await a.leases.acquire(name, 50);
      assert.ok(first);
      assert.equal(
        await a.leases.putRecord(first, 'automation/state/x', { value: 'a', expireAtMs: null }),
        true,
      );
      // A pauses past its lease; B takes over.
      let second: Lease | null = null;
      await waitFor(
        async () => {
          second = await b.leases.acquire(name, 30_000);
          return second !== null;
        },
        { message: 'the lease lapses' },
      );
      assert.ok(second);
      // A wakes up and goes on as if it still held the lease: nothing it does lands.
      assert.equal(
        await a.leases.putRecord(first, 'automation/state/x', { value: 'stale', expireAtMs: null }),
        false,
      );
      assert.equal(await a.leases.release(first), false);
      assert.equal(await a.leases.acquire(name, 30_000), null, "B's lease is still held");
      assert.equal(
        await b.leases.putRecord(second, 'automation/state/x', { value: 'b', expireAtMs: null }),
        true,
      );
      assert.deepEqual(
        { ...(await a.leases.records('automation/', Date.now())) },
        {
          'automation/state/x': { value: 'b', expireAtMs: null },
        },
      );
      assert.equal(await b.leases.release(second), true);
    });
  });
}
