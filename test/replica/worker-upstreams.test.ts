/**
 * An upstream group with a `zone` and `worker_processes 2`: its servers' `max_conns` counts, failures
 * and round robin are one state for the workers, as nginx's upstream zone is, so a server at its limit
 * is at it for every worker; each worker queues its own requests (`queue`), and a server one worker
 * frees is taken by a request queued in either. Where this Node.js cannot run workers, the one thread
 * gives the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import type { UpstreamInfo } from '../../src/engine/upstream/upstream-info.ts';
import type { Replica } from '../../src/replica/replica.ts';
import { reusePortSupported } from '../../src/replica/workers/worker-runtime.ts';
import { HoldingUpstream } from '../helpers/holding-upstream.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';
import { waitFor } from '../helpers/wait-for.ts';

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
    upstream queued {
        zone queued 64k;
        server 127.0.0.1:${upstream.port} max_conns=1;
        queue 20 timeout=10s;
    }
    server {
        listen 80;
        location / { proxy_pass http://one; }
        location /queued { proxy_pass http://queued; }
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
    assert.equal(group('one').peers[0]?.active, 1, 'the zone counts the one request');
    upstream.letGo();
    assert.equal((await Promise.all(all)).filter((s) => s === 200).length, 1);
    assert.equal(group('one').peers[0]?.active, 0);
  });

  test('queue with a zone: requests queued in either worker take the server as each one frees it', async () => {
    // Sixteen connections: the kernel spreads them over both workers (all on one: 1 in 32 768). A
    // worker that learnt only of its own frees would leave the other's requests to time out (502).
    const total = 16;
    let arrival = upstream.nextArrival();
    const all = Array.from({ length: total }, async () => {
      const res = await request(`http://127.0.0.1:${port}/queued`, { dispatcher: new Agent() });
      await res.body.dump();
      return res.statusCode;
    });
    const answered = Promise.all(all);
    // until every request is answered (a 502 ends the wait for the server)
    while ((await Promise.race([arrival.then(() => 'arrived'), answered])) === 'arrived') {
      assert.equal(upstream.holding, 1, 'max_conns=1: one request at the server at a time');
      assert.equal(group('queued').peers[0]?.active, 1);
      arrival = upstream.nextArrival();
      upstream.letGo();
    }
    assert.deepEqual(await answered, Array(total).fill(200));
    // each worker reports its queue with its load (every second): the sum, once both reported
    await waitFor(() => (group('queued').queue?.served ?? 0) > 0 && group('queued').queue?.size === 0, {
      message: 'the workers to report their queues',
    });
    const queue = group('queued').queue!;
    assert.equal(queue.queued, queue.served);
    assert.equal(queue.timedOut + queue.overflows + queue.left, 0);
  });

  function group(name: string): UpstreamInfo {
    const info = replica.upstreamInfo().find((u) => u.name === name);
    assert.ok(info !== undefined, name);
    return info;
  }
});
