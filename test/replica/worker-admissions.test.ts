/**
 * A replica's API limiters and priority levels with `worker_processes 2`: one set of seats, queues and
 * rates for the replica, whichever worker a request's connection reaches (the main thread admits
 * every worker's requests), and a worker that dies gives back the seats its requests held. Where this
 * Node.js cannot run workers, the same outcomes come from the one thread that serves.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import type { Replica } from '../../src/replica/replica.ts';
import { reusePortSupported } from '../../src/replica/workers/worker-runtime.ts';
import { HoldingUpstream } from '../helpers/holding-upstream.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';

const WORKERS_RUN = reusePortSupported();

describe('replica: API limiters and priority levels across worker threads', () => {
  let upstream: HoldingUpstream;
  let replica: Replica;
  let port: number;

  before(async () => {
    upstream = await HoldingUpstream.start();
    const config = `worker_processes 2;
events {}
http {
    # two limited levels of one share each: 2 seats, 1 each
    priority_level_concurrency 2;
    priority_level_zone tight shares=1 limit_response=reject;
    priority_level_zone other shares=1 limit_response=reject;
    api_rate_limit_zone one parallel-requests=1 max-wait-duration=200ms;
    server {
        listen 80;
        location /apf { priority_level tight; proxy_pass http://127.0.0.1:${upstream.port}; }
        location /api { api_rate_limit one; proxy_pass http://127.0.0.1:${upstream.port}; }
    }
}
`;
    ({ replica, port } = await startInProcessReplica('admissions', config));
  });

  after(async () => {
    upstream?.letGo();
    await replica?.close();
    await upstream?.close();
  });

  /** `count` requests at once on connections of their own; resolves with their statuses. */
  function burst(path: string, count: number): Promise<number>[] {
    return Array.from({ length: count }, async () => {
      const res = await request(`http://127.0.0.1:${port}${path}`, { dispatcher: new Agent() });
      await res.body.dump();
      return res.statusCode;
    });
  }

  test(WORKERS_RUN ? 'served by two workers' : 'served by one thread (no workers here)', () => {
    assert.equal(replica.workerPool?.workers.length ?? 1, WORKERS_RUN ? 2 : 1);
  });

  /**
   * `count` requests at once; once `refusals` of them have their answer and one has reached the
   * upstream, those answers and how many the upstream holds.
   */
  async function held(path: string, count: number, refusals: number) {
    const arrival = upstream.nextArrival();
    const answers: number[] = [];
    let enough = () => {};
    const answered = new Promise<void>((resolve) => {
      enough = resolve;
    });
    const all = burst(path, count).map((status) =>
      status.then((code) => {
        answers.push(code);
        if (answers.length === refusals) enough();
        return code;
      }),
    );
    await Promise.all([answered, arrival]);
    return { refused: [...answers], holding: upstream.holding, all };
  }

  test('a priority level of one seat: one request in, the other five refused with 429', async () => {
    const { refused, holding: atUpstream, all } = await held('/apf', 6, 5);
    assert.deepEqual(refused, [429, 429, 429, 429, 429]);
    assert.equal(atUpstream, 1);
    upstream.letGo();
    assert.equal((await Promise.all(all)).filter((s) => s === 200).length, 1);
    assert.equal(replica.site.priorityLevels.get('tight')!.info().dispatched, 1);
  });

  test('an API limiter of one parallel request: one in, the others refused after max-wait-duration', async () => {
    const { refused, holding: atUpstream, all } = await held('/api', 3, 2);
    assert.deepEqual(refused, [429, 429]);
    assert.equal(atUpstream, 1);
    upstream.letGo();
    assert.equal((await Promise.all(all)).filter((s) => s === 200).length, 1);
  });

  if (WORKERS_RUN) {
    test('a worker that dies gives back the seat its request held', async () => {
      const pool = replica.workerPool!;
      const arrival = upstream.nextArrival();
      const lost = burst('/apf', 1)[0]!.catch(() => 'connection lost');
      await arrival;
      // whichever worker has it: both are replaced, one after the other
      for (const worker of [...pool.workers]) {
        await worker.terminate();
        await pool.settled();
      }
      assert.equal(await lost, 'connection lost');
      upstream.forget();
      const next = upstream.nextArrival().then(() => 'at the upstream');
      const status = burst('/apf', 1)[0]!;
      // a seat still held by the dead worker's request would make this one 429 at once
      assert.equal(await Promise.race([next, status]), 'at the upstream');
      upstream.letGo();
      assert.equal(await status, 200);
    });
  }
});
