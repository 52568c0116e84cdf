/**
 * limit_req zones shared by worker threads, as nginx's workers share a zone: threads decide requests
 * at once on their own zone objects, and what they did under the zones' locks, replayed one step at a
 * time in the order they took the locks, on zones of one thread, gives the same decisions and the same
 * final state (nothing was lost or torn between threads).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { LimitReqZone } from '../../src/engine/limit-req/limit-req-zone.ts';
import type { StateTable } from '../../src/engine/limit-req/state-table.ts';
import { startTypeScriptWorker } from '../helpers/typescript-worker.ts';
import type { Step, ThreadData } from './limit-req-threads.worker.ts';

const THREADS = 3;
const REQUESTS = 30_000;
/** 32k: about 800 IPv4 states, fewer than the keys, so the zone is full and evicts all along. */
const SIZE_BYTES = 32 * 1024;
const RATE_MILLI = 10_000;

/** 1500 IPv4 addresses and 120 text keys of 1 to 400 bytes. */
const KEYS = [
  ...Array.from({ length: 1500 }, (_, i) => String.fromCharCode(10, 0, i >> 8, i & 255)),
  ...Array.from({ length: 120 }, (_, i) =>
    Array.from({ length: 1 + ((i * 211) % 400) }, (_, j) =>
      String.fromCharCode((i * 7 + j * 13) & 0xff),
    ).join(''),
  ),
];

function stepsOf(worker: Worker): Promise<Step[]> {
  return new Promise((resolve, reject) => {
    worker.on('message', (message) => resolve(message as Step[]));
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`the thread exited (${code}) without its steps`)));
  });
}

function stateOf(table: StateTable): unknown {
  const nodes: string[] = [];
  for (let node = table.head; node !== -1; node = table.nextOf(node)) {
    nodes.push(
      `${JSON.stringify(table.keyOf(node))}=${table.excessOf(node)}@${table.lastOf(node)}/${table.pinsOf(node)}`,
    );
  }
  return { nodes, count: table.count, usedBytes: table.usedBytes, allocatedBytes: table.allocatedBytes() };
}

const newZone = (name: string): LimitReqZone =>
  new LimitReqZone(name, parseComplexValue('$a'), SIZE_BYTES, RATE_MILLI);

describe('limit_req zones shared by worker threads', () => {
  it('decides as one thread would, taking the threads’ steps in the order they held the lock', {
    timeout: 60_000,
  }, async (t) => {
    const shared = [newZone('one'), newZone('two')];
    const order = new SharedArrayBuffer(12);
    const sharedMemory = shared.map((zone) => zone.share());
    const workers = Array.from({ length: THREADS }, (_, i) => {
      const workerData: ThreadData = {
        sharedMemory,
        slice: i + 1,
        sizeBytes: SIZE_BYTES,
        rateMilli: RATE_MILLI,
        keys: KEYS,
        requests: REQUESTS,
        seed: i + 1,
        order,
      };
      return startTypeScriptWorker(new URL('./limit-req-threads.worker.ts', import.meta.url), workerData);
    });
    t.after(() => Promise.all(workers.map((w) => w.terminate())));
    const finished = workers.map(stepsOf);
    const gate = new Int32Array(order);
    // Open the gate once every thread is at it, so that they run at once.
    while (Atomics.load(gate, 2) < THREADS) await new Promise((resolve) => setTimeout(resolve, 10));
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    const stepsByThread = await Promise.all(finished);

    const all = stepsByThread.flatMap((steps, thread) => steps.map((step) => ({ thread, step })));
    all.sort((a, b) => a.step[0] - b.step[0]);
    assert.equal(all.length, Atomics.load(gate, 1), 'one step for every time the lock was held');
    assert.deepEqual(
      all.map(({ step }) => step[0]),
      all.map((_, i) => i),
      'every order number once',
    );

    const alone = [newZone('one'), newZone('two')];
    // Each thread's zone objects hold their own pending node, as each nginx worker's context does.
    const pending = Array.from({ length: THREADS }, () => [-1, -1]);
    const kinds = { lookup: 0, commit: 0, release: 0, busy: 0, error: 0 };
    for (const { thread, step } of all) {
      const zone = alone[step[1]]!;
      zone.pending = pending[thread]![step[1]]!;
      if (step[2] === 'lookup') {
        const [, , , key, nowMs, burstMilli, account, code, excess] = step;
        const replayed = zone.lookup(key, nowMs, burstMilli, account);
        assert.deepEqual([replayed, zone.lastExcessMilli], [code, excess], `step ${step[0]}`);
        if (code === 2) kinds.busy++;
        if (code === 3) kinds.error++;
      } else if (step[2] === 'commit') {
        assert.equal(zone.commit(step[3]), step[4], `step ${step[0]}`);
      } else {
        zone.release();
      }
      kinds[step[2]]++;
      pending[thread]![step[1]] = zone.pending;
    }
    // Allocation failures come when a thread is descheduled holding a pin that reached the tail.
    assert.ok(kinds.commit > 1000 && kinds.release > 100 && kinds.busy > 1000, JSON.stringify(kinds));
    for (const [z, zone] of shared.entries()) assert.deepEqual(stateOf(zone.table), stateOf(alone[z]!.table));
    const interleaved = all.filter(({ thread }, i) => i > 0 && thread !== all[i - 1]!.thread).length;
    assert.ok(interleaved > 100, `the threads took turns (${interleaved} times)`);
    t.diagnostic(
      `${all.length} steps under the locks, threads alternating ${interleaved} times: ${JSON.stringify(kinds)}`,
    );
  });
});
