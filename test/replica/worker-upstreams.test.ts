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
import { HoldingUpstream } from '../helpers/holding-upstream.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';

describe('replica: an upstream zone across worker threads', () => {
  let upstream: HoldingUpstream;
  let replica: Replica;
  let port: number;

  before(async () => {
    upstream = await HoldingUpstream.start();
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
    upstream?.letGo();
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
        if (answers.length + upstream.holding === 8) resolve();
      };
    });
    upstream.onArrival(() => check());
    const all = Array.from({ length: 8 }, async () => {
      const res = await request(`http://127.0.0.1:${port}/`, { dispatcher: new Agent() });
      await res.body.dump();
      answers.push(res.statusCode);
      check();
      return res.statusCode;
    });
    await decided;
    assert.deepEqual(answers, Array(7).fill(502));
    assert.equal(upstream.holding, 1);
    assert.equal(replica.upstreamInfo()[0]?.peers[0]?.active, 1, 'the zone counts the one request');
    upstream.letGo();
    assert.equal((await Promise.all(all)).filter((s) => s === 200).length, 1);
    assert.equal(replica.upstreamInfo()[0]?.peers[0]?.active, 0);
  });
});
