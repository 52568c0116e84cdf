/**
 * The zone lock (zone-lock.ts) names its holder, so that a thread that died holding it can be found
 * and the lock forced open, as nginx's master forces a dead worker's zone mutex.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { LimitConnZone } from '../../src/engine/limit-conn/limit-conn-zone.ts';
import { LimitReqZone, LOOKUP_OK } from '../../src/engine/limit-req/limit-req-zone.ts';
import { forceUnlockZone, lockZone, unlockZone } from '../../src/engine/zone-lock.ts';
import { startTypeScriptWorker } from '../helpers/typescript-worker.ts';
import { waitFor } from '../helpers/wait-for.ts';

const KEY = parseComplexValue('$binary_remote_addr');
const SIZE = 64 * 1024;

/** In a worker: takes a limit_req zone's lock as slice 5, says so, and never gives it back. */
function holdForever(): void {
  const zone = new LimitReqZone('z', KEY, SIZE, 1000, false, { memory: workerData.memory, slice: 5 });
  zone.table.lock();
  parentPort!.postMessage('locked');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}

/** In a worker: takes the lock word as holder 9 (sleeping until it can), says so, gives it back. */
function takeWhenFree(): void {
  const words = new Int32Array(workerData.memory);
  lockZone(words, 0, 9);
  parentPort!.postMessage(Atomics.load(words, 0));
  unlockZone(words, 0);
}

if (!isMainThread && workerData?.test === 'zone-lock') holdForever();
else if (!isMainThread && workerData?.test === 'zone-lock-sleeper') takeWhenFree();
else
  describe('the zone lock', () => {
    it('holds its holder; only that holder is forced out, and the lock works after', () => {
      const words = new Int32Array(new SharedArrayBuffer(8));
      lockZone(words, 0, 3);
      assert.equal(Atomics.load(words, 0), 3);
      assert.equal(forceUnlockZone(words, 0, 2), false, 'another holder');
      assert.equal(Atomics.load(words, 0), 3);
      assert.equal(forceUnlockZone(words, 0, 3), true);
      lockZone(words, 0, 1);
      assert.equal(Atomics.load(words, 0), 1);
      unlockZone(words, 0);
      assert.equal(forceUnlockZone(words, 0, 1), false, 'not held');
    });

    it('a thread asleep on a lock its holder never gives back wakes when the lock is forced open', async () => {
      const memory = new SharedArrayBuffer(8);
      const words = new Int32Array(memory);
      lockZone(words, 0, 3);
      const worker = startTypeScriptWorker(new URL(import.meta.url), { test: 'zone-lock-sleeper', memory });
      const took = once(worker, 'message');
      // the sleeper marks the word before it sleeps (after its spin)
      await waitFor(() => Atomics.load(words, 0) !== 3, { message: 'the other thread to sleep on the lock' });
      assert.equal(forceUnlockZone(words, 0, 9), false, 'not the holder');
      assert.equal(forceUnlockZone(words, 0, 3), true);
      const [word] = await took;
      assert.equal(word & 0xff, 9, 'the sleeper took the lock');
      await once(worker, 'exit');
      assert.equal(Atomics.load(words, 0), 0, 'and gave it back');
    });

    it('a limit_conn zone whose attached thread died holding its lock is opened by its slice', () => {
      const zone = new LimitConnZone('c', KEY, SIZE);
      const memory = zone.share();
      const dead = new LimitConnZone('c', KEY, SIZE, { memory, slice: 7 });
      // what a thread ended inside the lock leaves: the lock word naming it
      lockZone(new Int32Array(memory.state, 0, 2), 0, 8);
      assert.equal(zone.forceUnlock(6), false);
      assert.equal(dead.forceUnlock(7), true);
      assert.notEqual(zone.acquire('\x0a\x00\x00\x01', 1), 'full');
    });

    it('a worker thread terminated holding a limit_req zone’s lock: forced open, the zone decides again', async () => {
      const zone = new LimitReqZone('z', KEY, SIZE, 1000);
      const memory = zone.share();
      const worker = startTypeScriptWorker(new URL(import.meta.url), { test: 'zone-lock', memory });
      const [message] = await once(worker, 'message');
      assert.equal(message, 'locked');
      await worker.terminate();
      assert.equal(zone.forceUnlock(4), false, 'not the dead thread’s slice');
      assert.equal(zone.forceUnlock(5), true);
      assert.equal(zone.lookup('\x0a\x00\x00\x01', 0, 0, true), LOOKUP_OK);
    });
  });
