/**
 * A limit_req zone's state shared between tables (the workers' zone objects), in one thread: what one
 * does the other sees, and nginx's pin on a node left pending by a non-last limit.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import {
  LimitReqZone,
  LOOKUP_AGAIN,
  LOOKUP_ERROR,
  LOOKUP_OK,
} from '../../src/engine/limit-req/limit-req-zone.ts';
import { StateTable } from '../../src/engine/limit-req/state-table.ts';
import { MIN_ZONE_BYTES, ZONE_HEADER_BYTES } from '../../src/engine/limit-req/zone-size.ts';
import type { SharedZoneMemory } from '../../src/engine/shared-zone.ts';

const ip = (i: number): string => String.fromCharCode(10, (i >> 16) & 255, (i >> 8) & 255, i & 255);
const text = (i: number, length: number): string =>
  Array.from({ length }, (_, j) => String.fromCharCode((i * 31 + j * 7) & 255)).join('');

/** Everything a table holds, in LRU order, and its accounting. */
function stateOf(table: StateTable): unknown {
  const nodes: string[] = [];
  for (let node = table.head; node !== -1; node = table.nextOf(node)) {
    nodes.push(
      `${JSON.stringify(table.keyOf(node))}=${table.excessOf(node)}@${table.lastOf(node)}/${table.pinsOf(node)}`,
    );
  }
  return {
    nodes,
    count: table.count,
    usedBytes: table.usedBytes,
    allocatedBytes: table.allocatedBytes(),
    tail: table.tail === -1 ? null : table.keyOf(table.tail),
  };
}

/** What `use` does with the table under the zone lock, as a shared table is used. */
function locked<T>(table: StateTable, use: (table: StateTable) => T): T {
  table.lock();
  try {
    return use(table);
  } finally {
    table.unlock();
  }
}

function zone(sizeBytes: number, memory?: SharedZoneMemory): LimitReqZone {
  const shared = memory === undefined ? undefined : { memory, slice: 1 };
  return new LimitReqZone('one', parseComplexValue('$key'), sizeBytes, 1000, false, shared);
}

describe('a state table shared by two tables', () => {
  it('each sees the other’s inserts, touches, removals and size accounting', () => {
    const first = new StateTable(MIN_ZONE_BYTES);
    const second = StateTable.attach(first.share(), 2);
    assert.ok(first.shared && second.shared);
    const a = locked(first, (t) => t.insert(ip(1), 1000, 5));
    const b = locked(second, (t) => t.insert('a text key', 2000, 6));
    assert.equal(
      locked(second, (t) => t.find(ip(1))),
      a,
    );
    assert.equal(
      locked(first, (t) => t.find('a text key')),
      b,
    );
    assert.equal(second.excessOf(a), 1000);
    assert.equal(first.lastOf(b), 6);
    locked(second, (t) => t.touch(a));
    assert.equal(first.head, a);
    assert.equal(first.tail, b);
    assert.equal(first.usedBytes, second.usedBytes);
    assert.equal(first.count, 2);
    locked(first, (t) => t.remove(b));
    assert.equal(
      locked(second, (t) => t.find('a text key')),
      -1,
    );
    assert.deepEqual(stateOf(second), stateOf(first));
    // Filling through one (its index grows): the other finds every key, and has no room either.
    let i = 2;
    while (locked(first, (t) => t.insert(ip(i), 0, 0)) !== -1) i++;
    locked(second, (t) => {
      assert.equal(t.hasRoomFor(ip(i)), false);
      assert.equal(t.insert(ip(i), 0, 0), -1);
      for (let k = 1; k < i; k++) assert.notEqual(t.find(ip(k)), -1);
    });
    assert.deepEqual(stateOf(second), stateOf(first));
  });

  it('random operations through either table leave the state one table alone would have', () => {
    const op = fc.tuple(
      fc.boolean(),
      fc.constantFrom('insert', 'touch', 'remove', 'evict'),
      fc.oneof(
        fc.integer({ min: 0, max: 1500 }).map(ip),
        fc
          .tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: 600 }))
          .map(([i, n]) => text(i, n)),
      ),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 1500 }), (ops) => {
        const alone = new StateTable(32768 + ZONE_HEADER_BYTES);
        const first = new StateTable(32768 + ZONE_HEADER_BYTES);
        const second = StateTable.attach(first.share(), 2);
        for (const [useSecond, kind, key] of ops) {
          const shared = useSecond ? second : first;
          const apply = (table: StateTable): void => {
            const node = table.find(key);
            if (kind === 'insert' && node === -1) table.insert(key, key.length, 1);
            else if (kind === 'touch') table.touch(node);
            else if (kind === 'remove' && node !== -1) table.remove(node);
            else if (kind === 'evict' && table.tail !== -1) table.remove(table.tail);
          };
          apply(alone);
          locked(shared, apply);
          assert.ok(shared.usedBytes <= shared.budgetBytes);
        }
        assert.deepEqual(stateOf(first), stateOf(alone));
        assert.deepEqual(stateOf(second), stateOf(alone));
        for (const table of [first, second]) {
          locked(table, (t) => {
            for (let node = t.head; node !== -1; node = t.nextOf(node))
              assert.equal(t.find(t.keyOf(node)), node);
          });
        }
      }),
      { numRuns: 60 },
    );
  });

  it('holds any mix of key lengths the size allows: long keys after the records of short ones were freed', () => {
    const table = new StateTable(MIN_ZONE_BYTES);
    let i = 0;
    while (table.insert(ip(i), 0, 0) !== -1) i++;
    // Every record handed out and the index grown: the text keys' bytes must find room elsewhere.
    for (let round = 0; round < 40; round++) {
      const key = text(round, 1 + ((round * 977) % 9000));
      while (!table.hasRoomFor(key)) table.remove(table.tail);
      assert.notEqual(table.insert(key, round, 0), -1);
      assert.equal(table.keyOf(table.find(key)), key);
    }
    assert.ok(table.usedBytes <= table.budgetBytes);
  });

  it('a second table of another size, or with sync where the first has none (or the reverse), is refused', () => {
    const owner = zone(MIN_ZONE_BYTES);
    assert.throws(() => zone(2 * MIN_ZONE_BYTES, owner.share()), RangeError);
    const synced = new LimitReqZone('s', parseComplexValue('$key'), MIN_ZONE_BYTES, 1000, true);
    const attached = new LimitReqZone('s', parseComplexValue('$key'), MIN_ZONE_BYTES, 1000, true, {
      memory: synced.share(),
      slice: 1,
    });
    assert.equal(attached.sync!.memory, synced.sync!.memory);
    assert.throws(
      () =>
        new LimitReqZone('s', parseComplexValue('$key'), MIN_ZONE_BYTES, 1000, true, {
          memory: owner.share(),
          slice: 1,
        }),
      /the shared state is of a zone without sync/,
    );
    assert.throws(() => zone(MIN_ZONE_BYTES, synced.share()), /the shared state is of a zone with sync/);
  });
});

describe('the pin on a pending node (nginx’s lr->count)', () => {
  it('keeps a node a non-last limit left pending from being evicted by another worker until it is committed', () => {
    const mine = zone(MIN_ZONE_BYTES);
    const theirs = zone(MIN_ZONE_BYTES, mine.share());
    assert.equal(mine.lookup(ip(0), 100_000, 0, false), LOOKUP_AGAIN);
    const pending = locked(mine.table, (t) => t.find(ip(0)));
    assert.equal(mine.table.pinsOf(pending), 1);
    // Never accounted and idle: unpinned, the next new key's expire would take it at once.
    let i = 1;
    while (i < 5000 && theirs.lookup(ip(i), 100_000, 0, true) === LOOKUP_OK) i++;
    assert.equal(theirs.lastExcessMilli, 0);
    assert.equal(mine.table.tail, pending, 'the pinned node is the tail, and stops the forced eviction');
    assert.equal(theirs.lookup(ip(i), 100_000, 0, true), LOOKUP_ERROR);
    assert.equal(
      locked(mine.table, (t) => t.find(ip(0))),
      pending,
    );
    assert.equal(mine.commit(100_000), 0);
    assert.equal(mine.table.pinsOf(pending), 0);
    assert.equal(mine.table.lastOf(pending), 100_000);
    assert.equal(theirs.lookup(ip(i), 100_000, 0, true), LOOKUP_OK, 'unpinned, the tail is evicted');
    assert.equal(
      locked(mine.table, (t) => t.find(ip(0))),
      -1,
    );
  });

  it('is taken on a found node too, and released without a commit when a later limit rejects', () => {
    const z = zone(MIN_ZONE_BYTES);
    assert.equal(z.lookup('k', 0, 0, true), LOOKUP_OK);
    assert.equal(z.lookup('k', 5000, 0, false), LOOKUP_AGAIN);
    const node = z.table.find('k');
    assert.equal(z.table.pinsOf(node), 1);
    z.release();
    assert.equal(z.table.pinsOf(node), 0);
    assert.equal(z.table.lastOf(node), 0, 'released, not committed');
    z.release();
    assert.equal(z.table.pinsOf(node), 0, 'a second release has nothing pending');
  });
});
