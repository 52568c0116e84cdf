/**
 * One worker thread of limit-req-threads.test.ts: its own zone object on the shared zone, deciding
 * requests through two locations (one with a non-last limit), and writing down every step it took
 * under the zone lock with the order number it took while holding the lock.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { type LimitReqPolicy, limitRequest, newOutcome } from '../../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../../src/engine/limit-req/limit-req-zone.ts';

export interface ThreadData {
  readonly sharedMemory: SharedArrayBuffer;
  readonly sizeBytes: number;
  readonly rateMilli: number;
  readonly keys: readonly string[];
  readonly requests: number;
  readonly seed: number;
  /** Word 0: the start gate (0 closed); word 1: the next order number; word 2: threads at the gate. */
  readonly order: SharedArrayBuffer;
}

/** A step under the lock: [order, 'lookup', key, nowMs, burstMilli, account, code, excess] or [order, 'commit' | 'release', nowMs, excess]. */
export type Step =
  | readonly [number, 'lookup', string, number, number, boolean, number, number]
  | readonly [number, 'commit', number, number]
  | readonly [number, 'release'];

type Ctx = { a: string; b: string };

const data = workerData as ThreadData;
const order = new Int32Array(data.order);
const zone = new LimitReqZone(
  'one',
  parseComplexValue('$a'),
  data.sizeBytes,
  data.rateMilli,
  false,
  data.sharedMemory,
);
const steps: Step[] = [];

// The order number is taken while the lock is still held: the zone unlocks through its table.
let taken = -1;
const table = zone.table;
const unlock = table.unlock.bind(table);
table.unlock = () => {
  taken = Atomics.add(order, 1, 1);
  unlock();
};
const lookup = zone.lookup.bind(zone);
zone.lookup = (key, nowMs, burstMilli, account) => {
  const code = lookup(key, nowMs, burstMilli, account);
  steps.push([taken, 'lookup', key, nowMs, burstMilli, account, code, zone.lastExcessMilli]);
  return code;
};
const commit = zone.commit.bind(zone);
zone.commit = (nowMs) => {
  const pending = zone.pending !== -1;
  const excess = commit(nowMs);
  if (pending) steps.push([taken, 'commit', nowMs, excess]);
  return excess;
};
const release = zone.release.bind(zone);
zone.release = () => {
  const pending = zone.pending !== -1;
  release();
  if (pending) steps.push([taken, 'release']);
};

const rule = (keyOf: (ctx: Ctx) => string, burst: number, delay: number) => ({
  zone,
  keyOf,
  keyText: '$a',
  burstMilli: burst * 1000,
  delayMilli: delay,
});
const policies: LimitReqPolicy<Ctx>[] = [
  // A non-last limit (pinned while the last one decides), then a nodelay one, both on the zone.
  {
    rules: [rule((c) => c.a, 5, 0), rule((c) => c.b, 2, Number.MAX_SAFE_INTEGER)],
    status: 503,
    logLevel: 'error',
    dryRun: false,
  },
  { rules: [rule((c) => c.a, 3, 1000)], status: 503, logLevel: 'error', dryRun: false },
];

let x = data.seed;
const random = (n: number): number => {
  x ^= x << 13;
  x ^= x >>> 17;
  x ^= x << 5;
  return (x >>> 0) % n;
};

/** Half the time one of 16 hot keys (some over their burst), else any key (the zone fills and evicts). */
const pickKey = (): string =>
  data.keys[random(2) === 0 ? (random(16) * 101) % data.keys.length : random(data.keys.length)]!;

Atomics.add(order, 2, 1);
while (Atomics.load(order, 0) === 0) Atomics.wait(order, 0, 0);
const out = newOutcome();
const ctx: Ctx = { a: '', b: '' };
let nowMs = 1_700_000_000_000;
for (let i = 0; i < data.requests; i++) {
  // Each thread's own clock, as each nginx worker caches its own: now and then a minute passes.
  nowMs += random(50) === 0 ? 61_000 : random(4);
  ctx.a = pickKey();
  ctx.b = pickKey();
  limitRequest(policies[random(2)]!, ctx, nowMs, out);
}
parentPort!.postMessage(steps);
