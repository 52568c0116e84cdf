/**
 * An upstream group with a `zone` and `worker_processes 2`: its servers' `max_conns` counts, failures
 * and round robin are one state for the workers, as nginx's upstream zone is, so a server at its limit
 * is at it for every worker. Where this Node.js cannot run workers, the one thread gives the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import type { Replica } from '../../src/replica/replica.ts';
import { reusePortSupported } from '../../src/replica/workers/worker-runtime.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';
import { echo, startUpstream, type TestUpstream } from './http/harness.ts';

describe('replica: an upstream zone across worker threads', () => {
  let upstream: TestUpstream;
  let replica: Replica;
  let port: number;
  let holding: (() => void)[] = [];
  let arrived: (() => void) | null = null;

  before(async () => {
    upstream = await startUpstream((req, res, record) => {
      holding.push(() => echo(req, res, record));
      arrived?.();
    });
    const config = `worker_processes 2;
events {}
http {
    upstream one {
        zone one 64k;
        server 127.0.0.1:${upstream.port} max_conns=1;
    }
    server {
        listen 80;
        location / { proxy_pass http://one; }
    }
}
`;
    ({ replica, port } = await startInProcessReplica('upstream-zone', config));
  });

  after(async () => {
    for (const release of holding) release();
    await replica?.close();
    await upstream?.close();
  });

  test('max_conns=1 in a zone: one request of eight at the server, the other seven 502', async () => {
    assert.equal(replica.workerPool?.workers.length ?? 1, reusePortSupported() ? 2 : 1);
    // every request is decided once it is answered or at the upstream
    const answers: number[] = [];
    let check = () => {};
    const decided = new Promise<void>((resolve) => {
      check = () => {
        if (answers.length + holding.length === 8) resolve();
      };
    });
    arrived = () => check();
    const all = Array.from({ length: 8 }, async () => {
      const res = await request(`http://127.0.0.1:${port}/`, { dispatcher: new Agent() });
      await res.body.dump();
      answers.push(res.statusCode);
      check();
      return res.statusCode;
    });
    await decided;
    assert.deepEqual(answers, Array(7).fill(502));
    assert.equal(holding.length, 1);
    assert.equal(replica.upstreamInfo()[0]?.peers[0]?.active, 1, 'the zone counts the one request');
    for (const release of holding) release();
    holding = [];
    assert.equal((await Promise.all(all)).filter((s) => s === 200).length, 1);
    assert.equal(replica.upstreamInfo()[0]?.peers[0]?.active, 0);
  });
});
