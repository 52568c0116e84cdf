/**
 * A limit_conn zone shared by worker threads, as nginx's workers share a zone: threads acquire and
 * release keys at once on their own zone objects; no key ever has more than its limit in progress, and
 * when they are done the zone is empty.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import type { Worker } from 'node:worker_threads';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { LimitConnZone } from '../../src/engine/limit-conn/limit-conn-zone.ts';
import { startTypeScriptWorker } from '../helpers/typescript-worker.ts';
import type { ThreadData, ThreadReport } from './limit-conn-threads.worker.ts';

const THREADS = 3;
const LIMIT = 3;
/** 32k: a budget of 31552 bytes, less than all the keys' nodes, so some acquires find it full. */
const SIZE_BYTES = 32 * 1024;

/** 160 keys of 1 to 255 bytes: nodes of 64 to 512 bytes, about 38k if all were held. */
const KEYS = Array.from({ length: 160 }, (_, i) =>
  Array.from({ length: 1 + ((i * 97) % 255) }, (_, j) => String.fromCharCode((i + j * 13) & 0xff)).join(''),
);

/** What the thread reports when it is done; an error, or an exit without it, fails the test. */
function reportOf(worker: Worker): Promise<ThreadReport> {
  return new Promise((resolve, reject) => {
    worker.on('message', (message) => message !== 'ready' && resolve(message as ThreadReport));
    worker.on('error', reject);
    worker.on('exit', (code) => reject(new Error(`the thread exited (${code}) without its report`)));
  });
}

describe('limit_conn zone shared by worker threads', () => {
  it('never lets more than the limit in for a key, and ends empty', { timeout: 30_000 }, async (t) => {
    const zone = new LimitConnZone('addr', parseComplexValue('$addr'), SIZE_BYTES);
    const held = new SharedArrayBuffer(4 * (1 + KEYS.length));
    const maxSeen = new SharedArrayBuffer(4 * KEYS.length);
    const workers = Array.from({ length: THREADS }, (_, i) => {
      const workerData: ThreadData = {
        sharedMemory: zone.share(),
        slice: i + 1,
        sizeBytes: SIZE_BYTES,
        keys: KEYS,
        limit: LIMIT,
        steps: 150_000,
        seed: i + 1,
        held,
        maxSeen,
      };
      return startTypeScriptWorker(new URL('./limit-conn-threads.worker.ts', import.meta.url), workerData);
    });
    t.after(() => Promise.all(workers.map((w) => w.terminate())));
    const finished = workers.map((w) => reportOf(w));
    await Promise.all(workers.map((w) => once(w, 'message')));
    const gate = new Int32Array(held);
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    const reports = await Promise.all(finished);

    const seen = [...new Int32Array(maxSeen)];
    assert.ok(Math.max(...seen) <= LIMIT, `at most ${LIMIT} in progress per key: ${seen}`);
    assert.ok(seen.filter((n) => n === LIMIT).length > KEYS.length / 2, 'most keys reached the limit');
    const total = (field: keyof ThreadReport) => reports.reduce((sum, r) => sum + r[field], 0);
    assert.ok(total('busy') > 0 && total('full') > 0, JSON.stringify(reports));
    for (const key of KEYS) assert.equal(zone.inProgress(key), 0);
    assert.deepEqual([zone.keys, zone.requestsInProgress, zone.usedBytes], [0, 0, 0]);
    // every thread's counts, each in its own slice, are the zone's: none lost
    assert.deepEqual(
      { ...zone.counters },
      { passed: total('acquired'), rejected: total('busy') + total('full'), rejected_dry_run: 0 },
    );
  });
});
