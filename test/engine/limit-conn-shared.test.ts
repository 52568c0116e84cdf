/** A limit_conn zone's shared memory: zone objects attached to one buffer are one zone. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { slotsForKey } from '../../src/engine/limit-conn/conn-table.ts';
import {
  type ConnNode,
  LimitConnZone,
  limitConnNodeBytes,
  PASSED,
  REJECTED,
} from '../../src/engine/limit-conn/limit-conn-zone.ts';

const KEY = parseComplexValue('$binary_remote_addr');
/** 32k: 32768 − 8 descriptors × 24 − 1024 = 31552 bytes for nodes. */
const SMALL = 32 * 1024;
const SMALL_BUDGET = 31552;

function pair(sizeBytes = 1 << 20): [LimitConnZone, LimitConnZone] {
  const first = new LimitConnZone('addr', KEY, sizeBytes);
  return [first, new LimitConnZone('addr', KEY, sizeBytes, { memory: first.share(), slice: 1 })];
}

/** A deterministic generator (mulberry32), so a failure replays. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/**
 * Random acquires (limits 1 to 3) and releases over `keyCount` keys of 1 to 255 bytes, by two zone
 * objects in turn, checked step by step against a Map that counts as the zone did before its state was
 * shared; releases grow with what is held, so about `heldRequests` are.
 */
function checkAgainstModel(
  sizeBytes: number,
  budgetBytes: number,
  keyCount: number,
  heldRequests: number,
): void {
  const [a, b] = pair(sizeBytes);
  const next = random(7);
  const pool = Array.from({ length: keyCount }, (_, i) => {
    const length = 1 + Math.floor(next() ** 2 * 255);
    return Array.from({ length }, (_, j) => String.fromCharCode((i * 31 + j * 7) & 0xff)).join('');
  });
  const model = new Map<string, number>();
  let modelBytes = 0;
  const held: [string, ConnNode][] = [];
  let fullTimes = 0;
  for (let step = 0; step < 40_000; step++) {
    const zone = next() < 0.5 ? a : b;
    if (next() < held.length / (2 * heldRequests)) {
      const [key, node] = held.splice(Math.floor(next() * held.length), 1)[0]!;
      zone.release(node);
      const count = model.get(key)! - 1;
      if (count > 0) model.set(key, count);
      else {
        model.delete(key);
        modelBytes -= limitConnNodeBytes(key.length);
      }
    } else {
      const key = pool[Math.floor(next() * pool.length)]!;
      const limit = 1 + Math.floor(next() * 3);
      const result = zone.acquire(key, limit);
      const count = model.get(key) ?? 0;
      let expected: 'node' | 'busy' | 'full' = 'node';
      if (count >= limit) expected = 'busy';
      else if (count === 0 && modelBytes + limitConnNodeBytes(key.length) > budgetBytes) expected = 'full';
      assert.equal(typeof result === 'number' ? 'node' : result, expected, `step ${step}`);
      if (result === 'full') fullTimes++;
      if (typeof result === 'number') {
        if (count === 0) modelBytes += limitConnNodeBytes(key.length);
        model.set(key, count + 1);
        held.push([key, result]);
      }
    }
    assert.deepEqual(
      [zone.usedBytes, zone.keys, zone.requestsInProgress],
      [modelBytes, model.size, held.length],
    );
  }
  assert.ok(fullTimes > 1000, `the zone was full often (${fullTimes} times)`);
  for (const key of pool) assert.equal(a.inProgress(key), model.get(key) ?? 0);
  for (const [, node] of held) b.release(node);
  assert.deepEqual([a.usedBytes, a.keys, a.requestsInProgress], [0, 0, 0]);
}

describe('limit_conn zone in shared memory', () => {
  it('two zone objects on one buffer see each other’s acquires and releases', () => {
    const [a, b] = pair();
    const first = a.acquire('\x0a\x00\x00\x01', 2);
    assert.equal(typeof first, 'number');
    assert.equal(b.acquire('\x0a\x00\x00\x01', 2), first, 'the same node');
    assert.equal(a.acquire('\x0a\x00\x00\x01', 2), 'busy');
    assert.equal(b.acquire('\x0a\x00\x00\x01', 2), 'busy');
    assert.deepEqual([b.inProgress('\x0a\x00\x00\x01'), b.keys, b.requestsInProgress], [2, 1, 2]);
    assert.equal(b.usedBytes, limitConnNodeBytes(4));
    b.release(first as ConnNode);
    assert.equal(a.inProgress('\x0a\x00\x00\x01'), 1);
    assert.equal(typeof a.acquire('\x0a\x00\x00\x01', 2), 'number');
    b.release(first as ConnNode);
    a.release(first as ConnNode);
    assert.deepEqual([a.keys, a.requestsInProgress, a.usedBytes], [0, 0, 0]);
    assert.deepEqual([b.keys, b.requestsInProgress, b.usedBytes], [0, 0, 0]);
  });

  it('counts what each object counts in one set of counters', () => {
    const [a, b] = pair();
    a.counts[PASSED]!++;
    b.counts[PASSED]! += 2;
    b.counts[REJECTED]!++;
    assert.deepEqual({ ...a.counters }, { passed: 3, rejected: 1, rejected_dry_run: 0 });
    assert.deepEqual({ ...b.counters }, { ...a.counters });
  });

  it('is full for every object at once; a release by one makes room for the other', () => {
    const [a, b] = pair(SMALL);
    const nodes: ConnNode[] = [];
    for (let i = 0; ; i++) {
      const node = a.acquire(`k${String(i).padStart(3, '0')}`, 5);
      if (node === 'full') break;
      nodes.push(node as ConnNode);
    }
    assert.equal(nodes.length, Math.floor(SMALL_BUDGET / 64));
    assert.equal(b.acquire('knew', 5), 'full');
    assert.equal(typeof b.acquire('k000', 5), 'number', 'a key it holds is counted');
    b.release(nodes[0]!);
    b.release(nodes[1]!);
    assert.equal(b.acquire('knew', 5), nodes[1], 'the freed slot');
    assert.equal(a.usedBytes, nodes.length * 64);
  });

  it('keys are byte strings compared exactly', () => {
    const [a, b] = pair();
    const long = 'k'.repeat(254);
    const keys = ['a', 'a\x00', '\x00a', '\xff', long, `${long}a`, `${long}b`, `a${long}`];
    const nodes = keys.map((k) => a.acquire(k, 1));
    assert.equal(new Set(nodes).size, keys.length);
    for (const k of keys)
      assert.deepEqual([b.inProgress(k), b.acquire(k, 1)], [1, 'busy'], JSON.stringify(k));
    assert.equal(b.inProgress('b'), 0);
    assert.equal(b.keys, keys.length);
  });

  it('refuses a buffer mapped for another size', () => {
    const zone = new LimitConnZone('addr', KEY, SMALL);
    const attached = { memory: zone.share(), slice: 1 };
    assert.throws(() => new LimitConnZone('addr', KEY, 1 << 20, attached), RangeError);
    assert.throws(() => new LimitConnZone('addr', KEY, SMALL + 4096, attached), RangeError);
    // 9 pages: a budget of 31592 bytes, 493 slots as 32k's, the same buffer length, another size
    assert.equal(
      new LimitConnZone('addr', KEY, SMALL + 64).share().state.byteLength,
      attached.memory.state.byteLength,
    );
    assert.throws(() => new LimitConnZone('addr', KEY, SMALL + 64, attached), RangeError);
  });

  it('a key never takes more slots than the bytes nginx’s slab charges its node', () => {
    for (let length = 0; length <= 255; length++)
      assert.ok(slotsForKey(length) * 64 <= limitConnNodeBytes(length), `${length} bytes`);
  });

  it('any mix of key lengths, acquired and released at random, is counted as a Map counts it', () => {
    checkAgainstModel(SMALL, SMALL_BUDGET, 400, 300);
  });

  it('so is a zone of 15 slots, whose 32 index entries are probed past each other all the time', () => {
    // 2048 − 24 − 1024 = 1000 bytes
    checkAgainstModel(2048, 1000, 40, 20);
  });
});
