import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { LimitReqZone, LOOKUP_ERROR, LOOKUP_OK } from '../../src/engine/limit-req/limit-req-zone.ts';
import { StateTable } from '../../src/engine/limit-req/state-table.ts';
import { IPV4_NODE_BYTES, MIN_ZONE_BYTES, ZONE_HEADER_BYTES } from '../../src/engine/limit-req/zone-size.ts';

const ip = (i: number): string => String.fromCharCode(10, (i >> 16) & 255, (i >> 8) & 255, i & 255);

function keysInLruOrder(table: StateTable): string[] {
  const keys: string[] = [];
  for (let node = table.head; node !== -1; node = table.nextOf(node)) {
    keys.push(table.keyOf(node));
  }
  return keys;
}

describe('state table', () => {
  it('finds, inserts and removes uint32 and text keys like a Map (random operations)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.boolean(),
            fc.oneof(fc.integer({ min: 0, max: 300 }).map(ip), fc.string({ maxLength: 6 })),
          ),
          {
            maxLength: 400,
          },
        ),
        (ops) => {
          const table = new StateTable(1024 * 1024);
          const model = new Map<string, number>();
          for (const [insert, key] of ops) {
            const node = table.find(key);
            assert.equal(node !== -1, model.has(key));
            if (insert && node === -1) {
              const created = table.insert(key, model.size, 0);
              model.set(key, model.size);
              assert.equal(table.excessOf(created), model.get(key));
            } else if (!insert && node !== -1) {
              table.remove(node);
              model.delete(key);
            }
          }
          assert.equal(table.count, model.size);
          for (const key of model.keys()) assert.notEqual(table.find(key), -1);
        },
      ),
    );
  });

  it('keeps most recently used first and evicts from the tail', () => {
    const table = new StateTable(MIN_ZONE_BYTES);
    const a = table.insert(ip(1), 0, 0);
    table.insert(ip(2), 0, 0);
    table.insert(ip(3), 0, 0);
    table.touch(a);
    assert.deepEqual(keysInLruOrder(table), [ip(1), ip(3), ip(2)]);
    table.remove(table.tail);
    assert.deepEqual(keysInLruOrder(table), [ip(1), ip(3)]);
  });

  it('holds as many IPv4 states as the size allows, and never more bytes than the size', () => {
    const table = new StateTable(1024 * 1024);
    let i = 0;
    while (table.insert(ip(i), 0, 0) !== -1) i++;
    // Beside a 32k-slot index (4 bytes a slot), 28 640 records of 32 bytes fill the 1m zone to its last
    // byte; one more would not fit, and a 64k-slot index would leave room for fewer.
    const budget = 1024 * 1024 - ZONE_HEADER_BYTES;
    assert.equal(i, 28640);
    assert.ok(i * IPV4_NODE_BYTES + 32768 * 4 <= budget);
    assert.ok((i + 1) * IPV4_NODE_BYTES + 32768 * 4 > budget);
    assert.ok(i <= (32768 * 7) / 8, 'the index is at most 7/8 full');
    assert.ok(i >= 16000, `a 1m zone holds ${i} IPv4 states`);
    assert.ok(table.usedBytes <= table.budgetBytes);
    assert.equal(table.allocatedBytes(), table.usedBytes, 'every allocated byte is charged');
  });

  it('holds a mix of IPv4 and longer keys past the all-IPv4 node count, all still found', () => {
    // 36 296-byte budget: 896 IPv4 nodes fill a 1024-slot index to 7/8 (32 768 bytes; the 897th would
    // need 2048 slots, 36 896 bytes in all, so this is the most an all-IPv4 zone of this size holds);
    // 49 one-byte keys (72 bytes each, none in the index) fill the rest.
    const table = new StateTable(36296 + ZONE_HEADER_BYTES);
    let ipv4 = 0;
    while (table.insert(ip(ipv4), 0, 0) !== -1) ipv4++;
    assert.equal(ipv4, 896);
    let text = 0;
    while (table.insert(String.fromCharCode(text), 0, 0) !== -1) text++;
    assert.equal(text, 49);
    assert.equal(table.count, 945);
    assert.ok(table.usedBytes <= table.budgetBytes);
    assert.ok(table.allocatedBytes() <= table.budgetBytes);
    for (let i = 0; i < ipv4; i++) assert.notEqual(table.find(ip(i)), -1);
    for (let t = 0; t < text; t++) assert.notEqual(table.find(String.fromCharCode(t)), -1);
    assert.equal(keysInLruOrder(table).length, 945);
  });

  it('finds, inserts and removes with the index at its full load (random operations in a small zone)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 0, max: 1500 })), {
          minLength: 500,
          maxLength: 3000,
        }),
        (ops) => {
          const table = new StateTable(32768 + ZONE_HEADER_BYTES);
          const model = new Map<string, number>();
          for (const [insert, i] of ops) {
            const key = ip(i);
            const node = table.find(key);
            assert.equal(node, model.get(key) ?? -1, 'a node keeps its id while it lives');
            if (insert && node === -1) {
              const created = table.insert(key, i, 0);
              if (created !== -1) model.set(key, created);
              else assert.equal(model.size, 896, 'refused only when the index is 7/8 full');
            } else if (!insert && node !== -1) {
              table.remove(node);
              model.delete(key);
            }
          }
          for (const [key, node] of model) {
            assert.equal(table.find(key), node);
            assert.equal(table.keyOf(node), key);
            assert.equal(table.excessOf(node), key.charCodeAt(2) * 256 + key.charCodeAt(3));
          }
          assert.equal(keysInLruOrder(table).length, model.size);
        },
      ),
    );
  });

  it('finds every key after long churn in a full index (deletes move entries back across the end of the slots)', () => {
    const table = new StateTable(32768 + ZONE_HEADER_BYTES);
    const live: number[] = [];
    let next = 0;
    while (table.insert(ip(next), 0, 0) !== -1) live.push(next++);
    let x = 7;
    for (let step = 0; step < 20000; step++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      const at = (x >>> 0) % live.length;
      table.remove(table.find(ip(live[at]!)));
      live[at] = next;
      assert.notEqual(table.insert(ip(next++), 0, 0), -1);
    }
    for (const i of live) assert.notEqual(table.find(ip(i)), -1, `key ${i} is found`);
    assert.equal(table.count, live.length);
  });

  it('keeps node ids while its arrays and index grow', () => {
    const table = new StateTable(10 * 1024 * 1024);
    const nodes = Array.from({ length: 20000 }, (_, i) => table.insert(ip(i), i, 0));
    for (const [i, node] of nodes.entries()) {
      assert.equal(table.find(ip(i)), node);
      assert.equal(table.excessOf(node), i);
      assert.ok(table.isLive(node));
    }
  });

  it('touch moves a node to the head and leaves the head, or no node, where they are', () => {
    const table = new StateTable(MIN_ZONE_BYTES);
    const [a, b, c] = [ip(1), ip(2), ip(3)].map((key) => table.insert(key, 0, 0));
    table.touch(c!);
    table.touch(-1);
    assert.deepEqual(keysInLruOrder(table), [ip(3), ip(2), ip(1)]);
    table.touch(a!); // the tail
    assert.deepEqual(keysInLruOrder(table), [ip(1), ip(3), ip(2)]);
    assert.equal(table.tail, b);
    table.touch(c!); // the middle
    assert.deepEqual(keysInLruOrder(table), [ip(3), ip(1), ip(2)]);
    assert.equal(table.head, c);
  });
});

describe('zone expiry (ngx_http_limit_req_expire)', () => {
  const key = parseComplexValue('$binary_remote_addr');

  it('removes up to two idle, drained states from the LRU tail before each new key', () => {
    const zone = new LimitReqZone('one', key, 64 * 1024, 1000);
    for (let i = 0; i < 5; i++) zone.lookup(ip(i), 0, 0, true);
    zone.lookup(ip(100), 60000, 0, true);
    assert.equal(zone.table.count, 4, 'ip0 and ip1 went, the new key came');
    assert.equal(zone.table.find(ip(0)), -1);
    assert.equal(zone.table.find(ip(1)), -1);
    assert.notEqual(zone.table.find(ip(2)), -1);
  });

  it('keeps states idle less than 60 s, or still draining', () => {
    const zone = new LimitReqZone('one', key, 64 * 1024, 16);
    zone.lookup(ip(1), 0, 5000, true);
    zone.lookup(ip(1), 0, 5000, true); // excess 1000, drains at 16/s: needs 62.5 s
    zone.lookup(ip(2), 59999, 0, true);
    assert.notEqual(zone.table.find(ip(1)), -1, 'idle < 60 s');
    zone.lookup(ip(3), 61000, 0, true);
    assert.notEqual(zone.table.find(ip(1)), -1, 'still draining');
    zone.lookup(ip(4), 62500, 0, true);
    assert.equal(zone.table.find(ip(1)), -1, 'drained and idle');
  });

  it('evicts the least recently used state when the zone is full', () => {
    const zone = new LimitReqZone('one', key, MIN_ZONE_BYTES, 1000);
    let i = 0;
    while (zone.table.hasRoomFor(ip(i))) zone.lookup(ip(i++), 1, 0, true);
    zone.lookup(ip(0), 2, 10, true); // bump ip0: ip1 is now the LRU tail
    assert.equal(zone.lookup(ip(99999), 3, 0, true), LOOKUP_OK);
    assert.equal(zone.table.find(ip(1)), -1);
    assert.notEqual(zone.table.find(ip(0)), -1);
  });

  it('rejects with an allocation failure when even eviction leaves no room', () => {
    const zone = new LimitReqZone('one', key, MIN_ZONE_BYTES, 1000);
    assert.equal(zone.lookup('k'.repeat(MIN_ZONE_BYTES), 0, 0, true), LOOKUP_ERROR);
  });

  it('refuses zones smaller than 32k', () => {
    assert.throws(() => new LimitReqZone('one', key, MIN_ZONE_BYTES - 1, 1000), /zone "one" is too small/);
  });
});
