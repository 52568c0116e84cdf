import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { LimitReqZone, LOOKUP_ERROR, LOOKUP_OK } from '../../src/engine/limit-req/limit-req-zone.ts';
import {
  IPV4_NODE_BYTES,
  MIN_ZONE_BYTES,
  StateTable,
  ZONE_HEADER_BYTES,
} from '../../src/engine/limit-req/state-table.ts';

const ip = (i: number): string => String.fromCharCode(10, (i >> 16) & 255, (i >> 8) & 255, i & 255);

function keysInLruOrder(table: StateTable): string[] {
  const keys: string[] = [];
  for (let node = table.head; node !== -1; node = table.nextOf(node)) {
    const text = table.keyText[node];
    keys.push(text ?? ip(table.keyU32[node]! & 0xffffff));
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
    // 28 bytes per node plus a 64k-slot index (4 bytes a slot) fill the 1m budget; 32k slots would be too few.
    assert.equal(i, Math.floor((1024 * 1024 - ZONE_HEADER_BYTES - 65536 * 4) / IPV4_NODE_BYTES));
    assert.ok(i >= 16000, `a 1m zone holds ${i} IPv4 states`);
    assert.ok(table.usedBytes <= table.budgetBytes);
    assert.ok(table.allocatedBytes() + ZONE_HEADER_BYTES <= 1024 * 1024);
  });

  it('holds a mix of IPv4 and longer keys past the all-IPv4 node count, all still found', () => {
    // 40k budget: 1024 IPv4 nodes fill a 2048-slot index (36 864 bytes); 56 one-byte keys (72 bytes each)
    // fill the rest, one node more than an all-IPv4 zone of this size could hold.
    const table = new StateTable(40960 + ZONE_HEADER_BYTES);
    for (let i = 0; i < 1024; i++) assert.notEqual(table.insert(ip(i), 0, 0), -1);
    let text = 0;
    while (table.insert(String.fromCharCode(text), 0, 0) !== -1) text++;
    assert.equal(text, 56);
    assert.equal(table.count, 1080);
    assert.ok(table.usedBytes <= table.budgetBytes);
    for (let i = 0; i < 1024; i++) assert.notEqual(table.find(ip(i)), -1);
    for (let t = 0; t < text; t++) assert.notEqual(table.find(String.fromCharCode(t)), -1);
    assert.equal(keysInLruOrder(table).length, 1080);
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
