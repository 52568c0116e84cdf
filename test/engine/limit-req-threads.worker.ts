/**
 * One worker thread of limit-req-threads.test.ts: its own zone objects on the two shared zones,
 * deciding requests through two locations (one with a non-last limit), and writing down every step it
 * took under a zone lock with the order number it took while holding the lock.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { type LimitReqPolicy, limitRequest, newOutcome } from '../../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../../src/engine/limit-req/limit-req-zone.ts';
import type { SharedZoneMemory } from '../../src/engine/shared-zone.ts';

export interface ThreadData {
  /** The two zones' state, by zone: 0 is `one`, 1 is `two`. */
  readonly sharedMemory: readonly SharedZoneMemory[];
  /** This thread's counter slice. */
  readonly slice: number;
  readonly sizeBytes: number;
  readonly rateMilli: number;
  readonly keys: readonly string[];
  readonly requests: number;
  readonly seed: number;
  /** Word 0: the start gate (0 closed); word 1: the next order number; word 2: threads at the gate. */
  readonly order: SharedArrayBuffer;
}

/**
 * A step under a zone's lock: [order, zone, 'lookup', key, nowMs, burstMilli, account, code, excess],
 * [order, zone, 'commit', nowMs, excess] or [order, zone, 'release'].
 */
export type Step =
  | readonly [number, number, 'lookup', string, number, number, boolean, number, number]
  | readonly [number, number, 'commit', number, number]
  | readonly [number, number, 'release'];

type Ctx = { a: string; b: string };

const data = workerData as ThreadData;
const order = new Int32Array(data.order);
const steps: Step[] = [];

/** The zone, its steps written down; the order number is taken while the lock is still held. */
function recordedZone(name: string, z: number): LimitReqZone {
  const zone = new LimitReqZone(name, parseComplexValue('$a'), data.sizeBytes, data.rateMilli, false, {
    memory: data.sharedMemory[z]!,
    slice: data.slice,
  });
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
    steps.push([taken, z, 'lookup', key, nowMs, burstMilli, account, code, zone.lastExcessMilli]);
    return code;
  };
  const commit = zone.commit.bind(zone);
  zone.commit = (nowMs) => {
    const pending = zone.pending !== -1;
    const excess = commit(nowMs);
    if (pending) steps.push([taken, z, 'commit', nowMs, excess]);
    return excess;
  };
  const release = zone.release.bind(zone);
  zone.release = () => {
    const pending = zone.pending !== -1;
    release();
    if (pending) steps.push([taken, z, 'release']);
  };
  return zone;
}

const one = recordedZone('one', 0);
const two = recordedZone('two', 1);
const rule = (zone: LimitReqZone, keyOf: (ctx: Ctx) => string, burst: number, delay: number) => ({
  zone,
  keyOf,
  keyText: '$a',
  burstMilli: burst * 1000,
  delayMilli: delay,
});
const policies: LimitReqPolicy<Ctx>[] = [
  // A non-last limit (its node pinned while the last one decides), then a nodelay one.
  {
    rules: [rule(one, (c) => c.a, 5, 0), rule(two, (c) => c.b, 2, Number.MAX_SAFE_INTEGER)],
    status: 503,
    logLevel: 'error',
    dryRun: false,
  },
  { rules: [rule(one, (c) => c.a, 3, 1000)], status: 503, logLevel: 'error', dryRun: false },
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
