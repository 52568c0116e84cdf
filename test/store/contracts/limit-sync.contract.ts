/**
 * The cluster-wide limits port contract: one nginx bucket per key for the fleet, shares by arrivals,
 * each batch applied once, time on the store's own clock. The store's clock is real here (Redis's
 * TIME cannot be set), so the arithmetic is checked at rate 0 (nothing leaks) or with margins for
 * the milliseconds between calls.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DRAINED, type LimitSyncStore, SYNC_LOST_AFTER_MS } from '../../../src/store/limit-sync-store.ts';
import type { StoreHarness } from './store-harness.ts';

const RATE = 10_000; // 10r/s

interface Options {
  readonly rateMilli?: number;
  readonly seq?: number;
  readonly incarnation?: string;
}

const seqs = new Map<string, number>();

/** An exchange of `replicaId` with the next seq (unless one is given); entries [key, charged, seen, ageMs?]. */
function exchange(
  store: LimitSyncStore,
  replicaId: string,
  entries: [string, number, number, number?][],
  options: Options = {},
) {
  const seq = options.seq ?? (seqs.get(replicaId) ?? 0) + 1;
  seqs.set(replicaId, Math.max(seq, seqs.get(replicaId) ?? 0));
  return store.exchange({
    zone: 'api',
    rateMilli: options.rateMilli ?? 0,
    replicaId,
    incarnation: options.incarnation ?? 'i1',
    seq,
    entries: entries.map(([key, charged, seen, ageMs]) => ({ key, charged, seen, ageMs: ageMs ?? 0 })),
  });
}

function near(actual: number, expected: number, tolerance: number, what: string): void {
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `${what}: ${actual}, expected ${expected} ± ${tolerance}`,
  );
}

export function limitSyncContract(name: string, harness: StoreHarness): void {
  describe(`cluster-wide limits port contract: ${name}`, () => {
    it('a bucket per key: its first request free, raised 1000 a charged request, never below one request’s credit, no clamp above', async () => {
      const { limitSync } = await harness.create();
      assert.deepEqual(
        await exchange(limitSync, 'a1', [
          ['a', 3, 4],
          ['b', 0, 1],
        ]),
        [
          { excessMilli: 2000, share: 1 },
          { excessMilli: DRAINED, share: 1 },
        ],
      );
      assert.deepEqual(await exchange(limitSync, 'a1', [['a', 20, 20]]), [{ excessMilli: 22_000, share: 1 }]);
      assert.equal(await limitSync.keys('api'), 2);
      assert.equal(await limitSync.keys('other'), 0);
    });

    it('the bucket leaks at the rate on the store’s clock; a new one starts when its first request came', async () => {
      const { limitSync } = await harness.create();
      // 30 requests that came over the last 5 s at 10 r/s: 50 leaked, the bucket is drained.
      const [old] = await exchange(limitSync, 'b1', [['old', 30, 30, 5000]], { rateMilli: RATE });
      assert.equal(old!.excessMilli, DRAINED);
      // The same 30 just now: 29 above the free one, less what leaked in the call's milliseconds.
      const startedMs = Date.now();
      const [fresh] = await exchange(limitSync, 'b1', [['fresh', 30, 30, 0]], { rateMilli: RATE });
      const [later] = await exchange(limitSync, 'b1', [['fresh', 0, 0, 0]], { rateMilli: RATE });
      const elapsedMs = Date.now() - startedMs;
      assert.ok(fresh!.excessMilli <= 29_000 && fresh!.excessMilli >= 29_000 - 10 * (elapsedMs + 2));
      assert.ok(later!.excessMilli <= fresh!.excessMilli, `${later!.excessMilli} > ${fresh!.excessMilli}`);
      assert.ok(later!.excessMilli >= 29_000 - 10 * (elapsedMs + 2));
    });

    it('a batch at or below the last seq of its incarnation is answered, not applied; a new incarnation starts over', async () => {
      const { limitSync } = await harness.create();
      await exchange(limitSync, 'c1', [['k', 1, 1]], { seq: 1 });
      await exchange(limitSync, 'c1', [['k', 5, 5]], { seq: 2 });
      // The same batch again (its answer was lost), and an older one run late: nothing added.
      assert.deepEqual(await exchange(limitSync, 'c1', [['k', 5, 5]], { seq: 2 }), [
        { excessMilli: 5000, share: 1 },
      ]);
      assert.deepEqual(await exchange(limitSync, 'c1', [['k', 1, 1]], { seq: 1 }), [
        { excessMilli: 5000, share: 1 },
      ]);
      assert.deepEqual(await exchange(limitSync, 'c1', [['k', 1, 1]], { seq: 3 }), [
        { excessMilli: 6000, share: 1 },
      ]);
      // The replica restarted: seq 1 of its new incarnation is new.
      assert.deepEqual(await exchange(limitSync, 'c1', [['k', 1, 1]], { seq: 1, incarnation: 'i2' }), [
        { excessMilli: 7000, share: 1 },
      ]);
      // Another replica's seqs are its own; its share is of the arrivals applied (1 of 1 + 8).
      const [other] = await exchange(limitSync, 'c2', [['k', 1, 1]], { seq: 1 });
      assert.equal(other!.excessMilli, 8000);
      near(other!.share, 1 / 9, 0.01, 'c2');
    });

    it('shares follow each replica’s recent arrivals (1 s time constant)', async () => {
      const { limitSync } = await harness.create();
      assert.equal((await exchange(limitSync, 'd1', [['k', 0, 30]]))[0]!.share, 1);
      near((await exchange(limitSync, 'd2', [['k', 0, 10]]))[0]!.share, 0.25, 0.03, 'd2');
      near((await exchange(limitSync, 'd1', [['k', 0, 0]]))[0]!.share, 0.75, 0.03, 'd1');
    });

    it('a live replica not heard from keeps its part; once its heartbeat lapses the others take it', async () => {
      const store = await harness.create();
      const { limitSync, registry } = store;
      const info = (id: string) => ({
        id,
        version: 't',
        configHash: 'h',
        appliedRevision: 0,
        appliedCommit: '',
        startedAtMs: 0,
        keyvalZones: [],
        limitReqZones: ['api'],
      });
      await registry.heartbeat(info('cut'), 60_000);
      await registry.heartbeat(info('gone'), 60_000);
      await exchange(limitSync, 'cut', [['held', 0, 100]]);
      await exchange(limitSync, 'gone', [['free', 0, 100]]);
      await registry.deregister('gone');
      await sleep(SYNC_LOST_AFTER_MS + 500);
      // "cut" is live and silent: its weight decays no further than SYNC_LOST_AFTER_MS past its last
      // exchange (100 e^-1.5 ≈ 22 of 122); "gone" is not live: its weight decays to now (≈ 13 or less).
      const [held] = await exchange(limitSync, 'other', [['held', 0, 100]]);
      near(
        held!.share,
        100 / (100 + 100 * Math.exp(-SYNC_LOST_AFTER_MS / 1000)),
        0.01,
        'beside a cut-off replica',
      );
      const [free] = await exchange(limitSync, 'other', [['free', 0, 100]]);
      assert.ok(free!.share >= 100 / (100 + 100 * Math.exp(-(SYNC_LOST_AFTER_MS + 500) / 1000)) - 1e-9);
    });

    it('two replicas sending at once: every charge lands in the one bucket', async () => {
      const store = await harness.create();
      const peer = await harness.peer(store);
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          // a replica sends one batch at a time: twenty replicas, over two connections
          exchange(i % 2 ? peer.limitSync : store.limitSync, `e${i}`, [['k', 1, 1]]),
        ),
      );
      const [bucket] = await exchange(store.limitSync, 'reader', [['k', 0, 0]]);
      assert.equal(bucket!.excessMilli, DRAINED + 20_000);
    });

    it('a batch of 500 keys (the most a replica sends at once) in one exchange', async () => {
      const { limitSync } = await harness.create();
      const entries = Array.from({ length: 500 }, (_, i): [string, number, number] => [`k${i}`, i % 3, 3]);
      const buckets = await exchange(limitSync, 'f1', entries);
      assert.equal(buckets.length, 500);
      assert.deepEqual(
        buckets.slice(0, 3).map((b) => b.excessMilli),
        [DRAINED, DRAINED + 1000, DRAINED + 2000],
      );
      assert.equal(await limitSync.keys('api'), 500);
    });
  });
}
