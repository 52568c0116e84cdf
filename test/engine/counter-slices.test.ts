import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { COUNTER_SLICES, CounterSlices } from '../../src/engine/counter-slices.ts';

const FIELDS = ['passed', 'rejected'] as const;

describe('counters in slices, one per counting thread', () => {
  it('each thread counts in its own slice; every reader sees the sum', () => {
    const first = new CounterSlices(FIELDS);
    const second = new CounterSlices(FIELDS, first.memory, 1);
    const third = new CounterSlices(FIELDS, first.memory, COUNTER_SLICES - 1);
    first.own[0]! += 2;
    second.own[0]!++;
    second.own[1]!++;
    third.own[1]! += 5;
    for (const reader of [first, second, third]) {
      assert.deepEqual({ ...reader.counters }, { passed: 3, rejected: 6 });
      assert.equal(reader.counters.passed, 3);
    }
    assert.deepEqual([...second.own], [1, 1], 'a slice holds its own thread’s counts only');
  });

  it('a thread started in a dead one’s place goes on from its slice’s numbers', () => {
    const first = new CounterSlices(FIELDS);
    new CounterSlices(FIELDS, first.memory, 2).own[0]! += 7;
    const again = new CounterSlices(FIELDS, first.memory, 2);
    again.own[0]!++;
    assert.equal(first.counters.passed, 8);
  });

  it('the sum is read-only, and a slice outside the zone’s is refused', () => {
    const counters = new CounterSlices(FIELDS);
    assert.throws(() => {
      (counters.counters as { passed: number }).passed = 1;
    }, TypeError);
    assert.throws(() => new CounterSlices(FIELDS, counters.memory, COUNTER_SLICES), RangeError);
    assert.throws(() => new CounterSlices(FIELDS, counters.memory, -1), RangeError);
  });
});
