/**
 * Body chunks in recycled slabs (body-buffers.ts): a slab carries another chunk only after its chunk
 * was written, once, however often it is released; and through the proxy, many large bodies at once
 * (each of its own bytes, read by slow and fast clients) arrive intact while the slabs go round.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { get } from 'node:http';
import { describe, test } from 'node:test';
import { PASS } from '../../../src/replica/http/contract/decision.ts';
import {
  copyBodyChunk,
  idleBodySlabs,
  isPooledBodyChunk,
  releaseBodyChunk,
  SLAB_BYTES,
} from '../../../src/replica/http/wire/body-buffers.ts';
import { startProxy, startUpstream } from './harness.ts';

describe('body chunks in recycled slabs', () => {
  test('a copy of 4 KiB or more is pooled; a smaller one is not; both hold the bytes', () => {
    const large = Buffer.alloc(8 * 1024, 'L');
    const small = Buffer.from('{"hello":"world"}');
    const pooledCopy = copyBodyChunk(large);
    const plainCopy = copyBodyChunk(small);
    assert.equal(isPooledBodyChunk(pooledCopy), true);
    assert.equal(isPooledBodyChunk(plainCopy), false);
    assert.deepEqual(pooledCopy, large);
    assert.deepEqual(plainCopy, small);
    large.fill('x');
    assert.equal(pooledCopy.toString('latin1', 0, 4), 'LLLL', 'a copy, not a view of the read buffer');
    releaseBodyChunk(pooledCopy);
  });

  test('a slab is used again only after its chunk is released, and a second release does nothing', () => {
    const first = copyBodyChunk(Buffer.alloc(SLAB_BYTES, 'a'));
    const second = copyBodyChunk(Buffer.alloc(SLAB_BYTES, 'b'));
    assert.notEqual(first.buffer, second.buffer, 'two chunks out at once never share a slab');
    const idleBefore = idleBodySlabs();
    releaseBodyChunk(first);
    assert.equal(idleBodySlabs(), idleBefore + 1);
    releaseBodyChunk(first);
    assert.equal(idleBodySlabs(), idleBefore + 1, 'released twice, pooled once');
    const third = copyBodyChunk(Buffer.alloc(4096, 'c'));
    assert.equal(third.buffer, first.buffer, 'the released slab carries the next chunk');
    const fourth = copyBodyChunk(Buffer.alloc(4096, 'd'));
    assert.notEqual(fourth.buffer, first.buffer, 'and only that one');
    assert.equal(second.toString('latin1', 0, 1), 'b', 'a chunk not released keeps its bytes');
    for (const chunk of [second, third, fourth]) releaseBodyChunk(chunk);
  });

  test('many large bodies at once, to slow and fast clients, arrive intact and the slabs come back', async () => {
    const BODY_BYTES = 4 * 1024 * 1024;
    const CLIENTS = 8;
    // each request's body is its own: a slab reused too early shows as another body's bytes
    const bodyFor = (id: number) => {
      const body = Buffer.allocUnsafe(BODY_BYTES);
      for (let i = 0; i < BODY_BYTES; i += 4) body.writeUInt32LE((id * 2654435761 + i) >>> 0, i);
      return body;
    };
    const digest = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const upstream = await startUpstream((req, res) => {
      const body = bodyFor(Number(req.url!.slice(1)));
      res.writeHead(200, { 'content-length': String(body.length) });
      res.end(body);
    });
    const proxy = await startProxy([{ port: upstream.port }], { decide: () => PASS });
    try {
      // the slow half reads nothing until the fast half is done: their answers wait in the proxy
      let fastDone: () => void = () => {};
      const fastAllDone = new Promise<void>((resolve) => {
        fastDone = resolve;
      });
      const fetchOne = (id: number) =>
        new Promise<string>((resolve, reject) => {
          get({ port: proxy.port, path: `/${id}`, agent: false }, (res) => {
            const chunks: Buffer[] = [];
            if (id % 2 === 1) {
              res.pause();
              void fastAllDone.then(() => res.resume());
            }
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () => resolve(digest(Buffer.concat(chunks))));
            res.on('error', reject);
          }).on('error', reject);
        });
      const ids = Array.from({ length: CLIENTS }, (_, i) => i + 1);
      const fast = Promise.all(ids.filter((id) => id % 2 === 0).map(fetchOne));
      const slow = Promise.all(ids.filter((id) => id % 2 === 1).map(fetchOne));
      const fastDigests = await fast;
      fastDone();
      const slowDigests = await slow;
      assert.deepEqual(
        fastDigests,
        ids.filter((id) => id % 2 === 0).map((id) => digest(bodyFor(id))),
      );
      assert.deepEqual(
        slowDigests,
        ids.filter((id) => id % 2 === 1).map((id) => digest(bodyFor(id))),
      );
      assert.ok(idleBodySlabs() > 0, 'written chunks gave their slabs back');
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });
});
