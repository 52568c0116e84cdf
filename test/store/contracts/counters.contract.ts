/** The counters port contract: per-kind totals per replica and zone, each batch applied once. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { CounterBatch } from '../../../src/store/counter-store.ts';
import type { StoreHarness } from './store-harness.ts';

const d = (passed: number, rejected: number) => ({
  passed,
  delayed: 1,
  rejected,
  delayed_dry_run: 0,
  rejected_dry_run: 2,
});

function batch(
  replicaId: string,
  seq: number,
  deltas: CounterBatch['deltas'],
  incarnation = 'i1',
): CounterBatch {
  return { replicaId, incarnation, seq, deltas };
}

export function countersContract(name: string, harness: StoreHarness): void {
  describe(`counters port contract: ${name}`, () => {
    it('deltas add up per replica and zone, kinds apart; reset zeroes one zone of one kind everywhere', async () => {
      const { counters } = await harness.create();
      assert.equal(await counters.add(batch('r1', 1, { limit_req: { one: d(5, 1), two: d(1, 0) } })), true);
      await counters.add(batch('r1', 2, { limit_req: { one: d(3, 2) }, limit_conn: { one: { passed: 7 } } }));
      await counters.add(batch('r2', 1, { limit_req: { one: d(1, 1) } }));
      assert.deepEqual(await counters.read('limit_req'), {
        r1: { one: { ...d(8, 3), delayed: 2, rejected_dry_run: 4 }, two: d(1, 0) },
        r2: { one: d(1, 1) },
      });
      assert.deepEqual(await counters.read('limit_conn'), { r1: { one: { passed: 7 } } });
      assert.deepEqual(await counters.read('nothing'), {});
      await counters.reset('limit_req', 'one');
      const zero = { passed: 0, delayed: 0, rejected: 0, delayed_dry_run: 0, rejected_dry_run: 0 };
      assert.deepEqual(await counters.read('limit_req'), {
        r1: { one: zero, two: d(1, 0) },
        r2: { one: zero },
      });
      assert.deepEqual(await counters.read('limit_conn'), { r1: { one: { passed: 7 } } });
    });

    it('resets are counted per kind and zone, for replicas to follow', async () => {
      const { counters } = await harness.create();
      assert.deepEqual(await counters.resets('limit_req', ['one', 'two']), { one: 0, two: 0 });
      await counters.add(batch('r1', 1, { limit_req: { one: d(5, 1) } }));
      await counters.reset('limit_req', 'one');
      await counters.reset('limit_req', 'one');
      assert.deepEqual(await counters.resets('limit_req', ['one', 'two']), { one: 2, two: 0 });
      assert.deepEqual(await counters.resets('limit_conn', ['one']), { one: 0 });
      assert.deepEqual(await counters.resets('limit_req', []), {});
      // The count is no replica's record.
      assert.deepEqual(Object.keys(await counters.read('limit_req')), ['r1']);
    });

    it('exactly once: a batch sent again (a lost answer) or an older one changes nothing', async () => {
      const { counters } = await harness.create();
      const first = batch('r1', 1, { limit_req: { one: d(5, 0) } });
      assert.equal(await counters.add(first), true);
      assert.equal(await counters.add(first), false);
      assert.equal(await counters.add(batch('r1', 3, { limit_req: { one: d(1, 0) } })), true);
      assert.equal(await counters.add(batch('r1', 2, { limit_req: { one: d(100, 0) } })), false);
      // A new incarnation (the replica restarted) starts its own sequence; another replica is apart.
      assert.equal(await counters.add(batch('r1', 1, { limit_req: { one: d(1, 0) } }, 'i2')), true);
      assert.equal(await counters.add(batch('r2', 1, { limit_req: { one: d(1, 0) } })), true);
      const totals = await counters.read('limit_req');
      assert.equal(totals.r1?.one?.passed, 7);
      assert.equal(totals.r2?.one?.passed, 1);
    });

    it('two clients sending the same batch concurrently: applied once', async () => {
      const store = await harness.create();
      const peer = await harness.peer(store);
      const same = batch('r1', 1, { limit_req: { one: d(1, 0) } });
      const applied = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? peer : store).counters.add(same)),
      );
      assert.equal(applied.filter(Boolean).length, 1);
      assert.equal((await store.counters.read('limit_req')).r1?.one?.passed, 1);
    });
  });
}
