/**
 * A keyval zone written in one thread and read in others (keyval-publication.ts): readers see what
 * the writer published, whole, from their next lookup; never a half-written state.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { KeyvalZone } from '../../src/engine/keyval/keyval-zone.ts';
import { startTypeScriptWorker } from '../helpers/typescript-worker.ts';

const forever = (value: string) => ({ value, expireAtMs: null });
const KEYS = 50;
const PUBLICATIONS = 400;

/** In a worker: reads the zone until it holds the last publication (10 s at most); reports what it saw. */
function readUntilLast(): void {
  const zone = new KeyvalZone('switches', 'prefix', null);
  zone.readFrom(workerData.memory);
  const torn: string[] = [];
  let reads = 0;
  const deadlineMs = Date.now() + 10_000;
  let last = '';
  while (last !== String(PUBLICATIONS) && Date.now() < deadlineMs) {
    const values = new Set([...zone.entries()].map(([, record]) => record.value));
    reads++;
    if (values.size > 1 && torn.length < 5) torn.push([...values].slice(0, 4).join(','));
    last = zone.lookup('/k0/x', 0);
  }
  parentPort!.postMessage({ torn, reads, size: zone.size, last });
}

if (!isMainThread && workerData?.test === 'keyval-publication') readUntilLast();
else
  describe('keyval zones read by other threads', () => {
    it('a reader holds the last publication: set, delete, clear, replaceAll; not what is unpublished', () => {
      const writer = new KeyvalZone('switches', 'prefix', null);
      const reader = new KeyvalZone('switches', 'prefix', null);
      writer.set('/coffee', forever('1'));
      const memory = writer.share();
      reader.readFrom(memory);
      assert.equal(reader.lookup('/coffee/latte', 0), '1');
      writer.set('/tea', { value: '0', expireAtMs: 5000 });
      assert.equal(reader.lookup('/tea', 0), '', 'not published yet');
      writer.publish();
      assert.equal(reader.lookup('/tea', 0), '0');
      assert.equal(reader.lookup('/tea', 5000), '', 'the expiry time travels with the record');
      writer.delete('/coffee');
      writer.publish();
      assert.equal(reader.lookup('/coffee/latte', 0), '');
      assert.deepEqual([...reader.entries()], [['/tea', { value: '0', expireAtMs: 5000 }]]);
      writer.replaceAll([['/juice', forever('é✓')]]);
      writer.publish();
      assert.equal(reader.lookup('/juice/orange', 0), 'é✓');
      assert.equal(reader.size, 1);
      writer.clear();
      writer.publish();
      assert.equal(reader.size, 0);
    });

    it('an ip zone is read as the writer matches it', () => {
      const writer = new KeyvalZone('allow', 'ip', null);
      const memory = writer.share();
      const reader = new KeyvalZone('allow', 'ip', null);
      reader.readFrom(memory);
      writer.set('10.0.0.0/8', forever('a'));
      writer.set('10.1.0.0/16', forever('b'));
      writer.publish();
      assert.equal(reader.lookup('10.1.2.3', 0), 'b');
      assert.equal(reader.lookup('10.2.2.3', 0), 'a');
      assert.equal(reader.lookup('192.168.0.1', 0), '');
    });

    it('a reader is not written, and leaves expiry to the writer', () => {
      const writer = new KeyvalZone('z', 'string', null);
      writer.set('a', { value: '1', expireAtMs: 10 });
      const memory = writer.share();
      const reader = new KeyvalZone('z', 'string', null);
      reader.readFrom(memory);
      assert.throws(() => reader.set('b', forever('2')), /written by another thread/);
      assert.throws(() => reader.delete('a'), /written by another thread/);
      assert.deepEqual(reader.expire(100), []);
      assert.deepEqual(writer.expire(100), ['a']);
      writer.publish();
      assert.equal(reader.size, 0);
    });

    it('a zone whose records outgrow the memory it started with still publishes them all', () => {
      const writer = new KeyvalZone('z', 'string', null);
      const memory = writer.share();
      for (let i = 0; i < 2000; i++) writer.set(`key-${i}`, forever('v'.repeat(i % 100)));
      writer.publish();
      const reader = new KeyvalZone('z', 'string', null);
      reader.readFrom(memory);
      assert.equal(reader.size, 2000);
      assert.equal(reader.lookup('key-1999', 0), 'v'.repeat(99));
    });

    it('worker threads reading while the writer publishes never see a publication half written', async () => {
      const writer = new KeyvalZone('switches', 'prefix', null);
      writer.replaceAll(Array.from({ length: KEYS }, (_, k) => [`/k${k}`, forever('0')]));
      const memory = writer.share();
      const workers = [0, 1].map(() =>
        startTypeScriptWorker(new URL(import.meta.url), { test: 'keyval-publication', memory }),
      );
      const reports = workers.map((w) => once(w, 'message'));
      for (let generation = 1; generation <= PUBLICATIONS; generation++) {
        // every key takes the publication's number: a reader that mixes two publications sees two values
        writer.replaceAll(Array.from({ length: KEYS }, (_, k) => [`/k${k}`, forever(String(generation))]));
        writer.publish();
        if (generation % 50 === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      for (const [report] of await Promise.all(reports)) {
        const { torn, reads, size, last } = report as {
          torn: string[];
          reads: number;
          size: number;
          last: string;
        };
        assert.deepEqual(torn, [], `torn reads among ${reads}`);
        assert.equal(last, String(PUBLICATIONS), 'the reader holds the last publication');
        assert.equal(size, KEYS);
      }
      await Promise.all(workers.map((w) => w.terminate()));
    });
  });
