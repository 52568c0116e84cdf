import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { zeroCounters } from '../../../src/engine/counters.ts';
import { LIMIT_REQ, LIMIT_REQ_COUNTERS } from '../../../src/engine/limit-req/limit-req-zone.ts';
import { CounterFlusher } from '../../../src/replica/cluster/counter-flusher.ts';
import type { CounterBatch } from '../../../src/store/counter-store.ts';
import { storeUnavailableError } from '../../../src/store/keyval-errors.ts';
import { openMemoryStore } from '../../../src/store/memory/open-memory-store.ts';

function zone(name: string) {
  return { name, counters: zeroCounters(LIMIT_REQ_COUNTERS) };
}

describe('CounterFlusher', () => {
  it('a batch whose answer was lost is resent unchanged; the store applies it once', async () => {
    const store = openMemoryStore();
    const sent: CounterBatch[] = [];
    let loseAnswers = 0;
    const lossy = {
      async add(batch: CounterBatch) {
        sent.push(structuredClone(batch));
        const applied = await store.counters.add(batch);
        if (loseAnswers > 0) {
          loseAnswers--;
          throw storeUnavailableError(new Error('timed out'));
        }
        return applied;
      },
    };
    const one = zone('one');
    const flusher = new CounterFlusher(lossy, 'r1', [{ family: LIMIT_REQ, zones: () => [one] }], 'inc');
    one.counters.passed = 5;
    loseAnswers = 2;
    await assert.rejects(flusher.flush(), { code: 'StoreUnavailable' });
    one.counters.passed = 8;
    one.counters.rejected = 1;
    await assert.rejects(flusher.flush(), { code: 'StoreUnavailable' });
    await flusher.flush();
    await flusher.flush();
    assert.deepEqual(
      sent.map((b) => [b.seq, b.deltas.limit_req?.one?.passed, b.deltas.limit_req?.one?.rejected]),
      [
        [1, 5, 0],
        [1, 5, 0],
        [1, 5, 0],
        [2, 3, 1],
      ],
    );
    const totals = (await store.counters.read('limit_req')).r1?.one;
    assert.deepEqual(totals, { passed: 8, delayed: 0, rejected: 1, delayed_dry_run: 0, rejected_dry_run: 0 });
  });

  it('nothing new, nothing sent; a zone retired by a reload sends its last counts once', async () => {
    const store = openMemoryStore();
    const sent: number[] = [];
    const counting = {
      add(b: CounterBatch) {
        sent.push(b.seq);
        return store.counters.add(b);
      },
    };
    const kept = zone('kept');
    const dropped = zone('dropped');
    let zones = [kept, dropped];
    const flusher = new CounterFlusher(counting, 'r1', [{ family: LIMIT_REQ, zones: () => zones }], 'inc');
    await flusher.flush();
    assert.deepEqual(sent, []);
    dropped.counters.delayed = 2;
    zones = [kept];
    flusher.retire(LIMIT_REQ, [dropped]);
    await flusher.flush();
    await flusher.flush();
    assert.deepEqual(sent, [1]);
    assert.equal((await store.counters.read('limit_req')).r1?.dropped?.delayed, 2);
  });
});
