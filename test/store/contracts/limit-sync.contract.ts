/** The cluster-wide limits port contract: one nginx bucket per key for the fleet, shares by arrivals. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DRAINED, type LimitSyncStore } from '../../../src/store/limit-sync-store.ts';
import type { StoreHarness } from './store-harness.ts';

const T = 1_700_000_000_000;
const RATE = 10_000; // 10r/s

function exchange(
  store: LimitSyncStore,
  replicaId: string,
  nowMs: number,
  entries: [string, number, number][],
) {
  return store.exchange({
    zone: 'api',
    rateMilli: RATE,
    replicaId,
    nowMs,
    entries: entries.map(([key, charged, seen]) => ({ key, charged, seen })),
  });
}

export function limitSyncContract(name: string, harness: StoreHarness): void {
  describe(`cluster-wide limits port contract: ${name}`, () => {
    it('a bucket per key: its first request free, raised 1000 a charged request, leaked at the rate to the sender clock, no clamp above', async () => {
      const { limitSync } = await harness.create();
      assert.deepEqual(
        await exchange(limitSync, 'r1', T, [
          ['a', 3, 4],
          ['b', 0, 1],
        ]),
        [
          { excessMilli: 2000, lastMs: T, share: 1 },
          { excessMilli: DRAINED, lastMs: T, share: 1 },
        ],
      );
      // 250 ms at 10 r/s leaks 2500; the debt beyond any burst stays.
      assert.deepEqual(await exchange(limitSync, 'r1', T + 250, [['a', 20, 20]]), [
        { excessMilli: 2000 + 20_000 - 2500, lastMs: T + 250, share: 1 },
      ]);
      // A sender whose clock is behind the bucket's leaks (and decays) nothing.
      const [behind] = await exchange(limitSync, 'r2', T + 100, [['a', 1, 1]]);
      assert.deepEqual({ ...behind, share: 0 }, { excessMilli: 20_500, lastMs: T + 250, share: 0 });
      const share = 1 / (4 * Math.exp(-0.25) + 20 + 1);
      assert.ok(Math.abs(behind!.share - share) < 1e-9, `${behind!.share} ≠ ${share}`);
      // Leaked down to one request's credit, not below.
      const [drained] = await exchange(limitSync, 'r1', T + 60_000, [['a', 0, 0]]);
      assert.equal(drained!.excessMilli, DRAINED);
      // "b", idle since T with nothing in its bucket, was forgotten on the way.
      assert.equal(await limitSync.keys('api'), 1);
      assert.equal(await limitSync.keys('other'), 0);
    });

    it('shares follow each replica’s recent arrivals (1 s time constant)', async () => {
      const { limitSync } = await harness.create();
      assert.equal((await exchange(limitSync, 'r1', T, [['k', 0, 30]]))[0]!.share, 1);
      assert.equal((await exchange(limitSync, 'r2', T, [['k', 0, 10]]))[0]!.share, 0.25);
      assert.equal((await exchange(limitSync, 'r1', T, [['k', 0, 0]]))[0]!.share, 0.75);
      const later = (await exchange(limitSync, 'r2', T + 1000, [['k', 0, 10]]))[0]!.share;
      // r2: 10/e + 10 of 40/e + 10.
      const expected = (10 / Math.E + 10) / (40 / Math.E + 10);
      assert.ok(Math.abs(later - expected) < 1e-9, `${later} ≠ ${expected}`);
    });

    it('two replicas sending at once: every charge lands in the one bucket', async () => {
      const store = await harness.create();
      const peer = await harness.peer(store);
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          exchange(i % 2 ? peer.limitSync : store.limitSync, `r${i % 2}`, T, [['k', 1, 1]]),
        ),
      );
      const [bucket] = await exchange(store.limitSync, 'r0', T, [['k', 0, 0]]);
      assert.equal(bucket!.excessMilli, DRAINED + 20_000);
    });

    it('a batch of 500 keys (the most a replica sends at once) in one exchange', async () => {
      const { limitSync } = await harness.create();
      const entries = Array.from({ length: 500 }, (_, i): [string, number, number] => [`k${i}`, i % 3, 3]);
      const buckets = await exchange(limitSync, 'r1', T, entries);
      assert.equal(buckets.length, 500);
      assert.deepEqual(
        buckets.slice(0, 3).map((b) => b.excessMilli),
        [DRAINED, DRAINED + 1000, DRAINED + 2000],
      );
      assert.equal(await limitSync.keys('api'), 500);
    });

    it('a key idle for a minute with its bucket drained is forgotten', async () => {
      const { limitSync } = await harness.create();
      await exchange(limitSync, 'r1', T, [
        ['old', 1, 1],
        ['busy', 1000, 1000],
      ]);
      await exchange(limitSync, 'r1', T + 61_000, [['new', 1, 1]]);
      // "busy" (1000 requests at 10 r/s) has not drained in 61 s: kept.
      assert.equal(await limitSync.keys('api'), 2);
      const [busy] = await exchange(limitSync, 'r1', T + 61_000, [['busy', 0, 0]]);
      assert.equal(busy!.excessMilli, DRAINED + 1_000_000 - 610_000);
    });
  });
}
