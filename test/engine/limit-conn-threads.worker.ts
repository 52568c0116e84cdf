/**
 * One worker thread of limit-conn-threads.test.ts: its own zone object on the zone's shared memory,
 * acquiring and releasing keys at random, recording what it holds beside the zone.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import {
  type ConnNode,
  LimitConnZone,
  PASSED,
  REJECTED,
} from '../../src/engine/limit-conn/limit-conn-zone.ts';
import type { SharedZoneMemory } from '../../src/engine/shared-zone.ts';

export interface ThreadData {
  readonly sharedMemory: SharedZoneMemory;
  /** This thread's counter slice. */
  readonly slice: number;
  readonly sizeBytes: number;
  readonly keys: readonly string[];
  readonly limit: number;
  readonly steps: number;
  readonly seed: number;
  /** Word 0: the start gate (0: closed); then per key the requests held (after acquire, before release). */
  readonly held: SharedArrayBuffer;
  /** Per key: the most requests in progress seen at a successful acquire (the zone's and the held words'). */
  readonly maxSeen: SharedArrayBuffer;
}

export interface ThreadReport {
  readonly acquired: number;
  readonly busy: number;
  readonly full: number;
}

const data = workerData as ThreadData;
const zone = new LimitConnZone('addr', parseComplexValue('$addr'), data.sizeBytes, {
  memory: data.sharedMemory,
  slice: data.slice,
});
const held = new Int32Array(data.held);
const maxSeen = new Int32Array(data.maxSeen);

function raise(at: number, seen: number): void {
  for (let old = Atomics.load(maxSeen, at); seen > old; ) {
    const was = Atomics.compareExchange(maxSeen, at, old, seen);
    if (was === old) return;
    old = was;
  }
}

let seed = data.seed;
function next(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
}

const mine: [number, ConnNode][] = [];
const report = { acquired: 0, busy: 0, full: 0 };
function releaseOne(index: number): void {
  const [at, node] = mine[index]!;
  mine[index] = mine[mine.length - 1]!;
  mine.pop();
  Atomics.sub(held, 1 + at, 1);
  zone.release(node);
}

parentPort!.postMessage('ready');
Atomics.wait(held, 0, 0);
for (let step = 0; step < data.steps; step++) {
  // releases grow with what it holds: about 100 held, so the zone fills up now and then
  if (next() < mine.length / 200) {
    releaseOne(Math.floor(next() * mine.length));
    continue;
  }
  const at = Math.floor(next() * data.keys.length);
  const result = zone.acquire(data.keys[at]!, data.limit);
  // counted in the zone as limit_conn counts: what passed, and what was refused
  if (result === 'busy' || result === 'full') zone.counts[REJECTED]!++;
  else zone.counts[PASSED]!++;
  if (result === 'busy') report.busy++;
  else if (result === 'full') report.full++;
  else {
    report.acquired++;
    raise(at, Math.max(zone.inProgress(data.keys[at]!), Atomics.add(held, 1 + at, 1) + 1));
    mine.push([at, result]);
  }
}
while (mine.length > 0) releaseOne(mine.length - 1);
parentPort!.postMessage(report satisfies ThreadReport);
