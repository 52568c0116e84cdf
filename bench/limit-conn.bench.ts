/**
 * What one request costs a limit_conn zone: acquire and release of one key, in ns. A zone nobody
 * attached to (no lock), and a zone object attached to another's shared memory (as another worker
 * thread's is: it takes the zone's lock), beside the Map the zone kept before its state moved into
 * shared memory. Uncontended: one thread.
 *
 * Each case's loop runs until 20 ms have passed, rounds interleaved, the median of ROUNDS reported.
 *
 * Run: npm run bench:limit-conn   (last line: JSON)
 * Knobs: BENCH_ROUNDS (default 9).
 */
import { parseComplexValue } from '../src/engine/complex-value.ts';
import {
  type ConnNode,
  LimitConnZone,
  limitConnNodeBytes,
} from '../src/engine/limit-conn/limit-conn-zone.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const ROUND_MS = 20;
const KEY = '\x0a\x00\x00\x01';
const LIMIT = 10;

/** The zone as it was: a Map of per-key counts in the thread's own heap. */
class MapZone {
  readonly #conns = new Map<string, { count: number }>();
  readonly #budgetBytes = 1 << 20;
  #usedBytes = 0;
  #inProgress = 0;

  acquire(key: string, limit: number): { count: number } | 'busy' | 'full' {
    let node = this.#conns.get(key);
    if (node !== undefined) {
      if (node.count >= limit) return 'busy';
      node.count++;
      this.#inProgress++;
      return node;
    }
    const bytes = limitConnNodeBytes(key.length);
    if (this.#usedBytes + bytes > this.#budgetBytes) return 'full';
    this.#usedBytes += bytes;
    node = { count: 1 };
    this.#conns.set(key, node);
    this.#inProgress++;
    return node;
  }

  release(key: string, node: { count: number }): void {
    this.#inProgress--;
    if (--node.count > 0) return;
    this.#conns.delete(key);
    this.#usedBytes -= limitConnNodeBytes(key.length);
  }

  get requestsInProgress(): number {
    return this.#inProgress;
  }
}

/** ns per step (one acquire and its release) over one round. */
function round(step: () => void): number {
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < ROUND_MS) {
    for (let i = 0; i < 1000; i++) step();
    n += 1000;
    now = performance.now();
  }
  return ((now - start) * 1e6) / n;
}

const keyExpr = parseComplexValue('$binary_remote_addr');
const alone = new LimitConnZone('addr', keyExpr, 1 << 20);
const owner = new LimitConnZone('addr', keyExpr, 1 << 20);
const attached = new LimitConnZone('addr', keyExpr, 1 << 20, { memory: owner.share(), slice: 1 });
const map = new MapZone();

const cases: Record<string, () => void> = {
  'map (before)': () => map.release(KEY, map.acquire(KEY, LIMIT) as { count: number }),
  'alone (no lock)': () => alone.release(alone.acquire(KEY, LIMIT) as ConnNode),
  'attached (lock)': () => attached.release(attached.acquire(KEY, LIMIT) as ConnNode),
};

function measure(table: Record<string, () => void>): Record<string, number> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(table).map((name) => [name, []]));
  for (let r = 0; r < ROUNDS; r++)
    for (const [name, step] of Object.entries(table)) samples[name]!.push(round(step));
  return Object.fromEntries(
    Object.entries(samples).map(([name, ns]) => [name, ns.sort((a, b) => a - b)[ns.length >> 1]!]),
  );
}

// With no other request of the key in progress, each acquire makes its node and each release frees it.
const results: Record<string, number> = {};
for (const [name, ns] of Object.entries(measure(cases))) results[`${name}, node made and freed`] = ns;
// With another in progress (a busy client), the node stays: a lookup and a count.
const kept = [
  map.acquire(KEY, LIMIT) as { count: number },
  alone.acquire(KEY, LIMIT) as ConnNode,
  attached.acquire(KEY, LIMIT) as ConnNode,
] as const;
for (const [name, ns] of Object.entries(measure(cases))) results[`${name}, node kept`] = ns;
map.release(KEY, kept[0]);
alone.release(kept[1]);
attached.release(kept[2]);
if (alone.keys !== 0 || attached.keys !== 0 || map.requestsInProgress !== 0)
  throw new Error('the zones did not end empty');

for (const [name, ns] of Object.entries(results))
  console.log(`${name.padEnd(40)} ${ns.toFixed(0).padStart(5)} ns`);
console.log(
  JSON.stringify({
    node: process.versions.node,
    rounds: ROUNDS,
    ns: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Math.round(v)])),
  }),
);
