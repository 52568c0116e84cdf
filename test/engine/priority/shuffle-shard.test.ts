/** Kubernetes' shuffle sharding: hands of distinct cards, dealt evenly, the hash as APF computes it. */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { Dealer, flowHash, shuffleShardingError } from '../../../src/engine/priority/shuffle-shard.ts';

test('every hand has handSize distinct cards of the deck, and each card comes up as often', () => {
  const dealer = new Dealer(16, 4);
  const seen = new Array<number>(16).fill(0);
  for (let i = 0; i < 20_000; i++) {
    const hand = dealer.dealIntoHand(flowHash('level', `flow-${i}`));
    assert.equal(hand.length, 4);
    assert.equal(new Set(hand).size, 4, `hand ${hand} repeats a card`);
    for (const card of hand) {
      assert.ok(card >= 0 && card < 16);
      seen[card]!++;
    }
  }
  const expected = (20_000 * 4) / 16;
  for (const count of seen) assert.ok(Math.abs(count - expected) < expected * 0.1, `${count} vs ${expected}`);
});

test('the hand is the deal of the hash: remainders of successive divisions, lifted past earlier cards', () => {
  // 7 = 2 + 5·1 → remainders [2 (of 5), 1 (of 4)]; the second card skips the first: 1 < 2 stays 1
  assert.deepEqual(new Dealer(5, 2).dealIntoHand(7n), [2, 1]);
  // 12 = 2 + 5·2 → [2, 2]; the second is lifted past card 2: 3
  assert.deepEqual(new Dealer(5, 2).dealIntoHand(12n), [2, 3]);
});

test('the flow hash is APF’s: SHA-256 of level, zero byte, distinguisher, first 8 bytes little-endian', () => {
  const digest = createHash('sha256').update('workload-low\u0000tenant-a').digest();
  assert.equal(flowHash('workload-low', 'tenant-a'), digest.readBigUInt64LE(0));
  assert.notEqual(flowHash('workload-low', 'tenant-a'), flowHash('workload-low', 'tenant-b'));
});

test('deck and hand sizes the library refuses', () => {
  assert.equal(shuffleShardingError(64, 8), null);
  assert.match(shuffleShardingError(4, 5)!, /handSize 5 is greater than deckSize 4/);
  assert.match(shuffleShardingError(1024, 7)!, /required entropy bits/);
});
