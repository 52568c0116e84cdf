/**
 * `worker_processes 2`: one replica serving from two worker threads on the main thread's zones. On a
 * Node.js that can listen from several threads (22.12+), a client's limit is one limit whichever
 * worker its connections land on, a worker that dies is replaced with the zone's state intact and the
 * counters exact, and a reload starts new workers that keep the zones. On an older Node.js the replica
 * serves on its main thread and says once why `worker_processes` is not in force.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Agent, type Dispatcher, request } from 'undici';
import { loadConfigText } from '../../src/config/index.ts';
import type { Replica } from '../../src/replica/replica.ts';
import { reusePortSupported } from '../../src/replica/workers/worker-runtime.ts';
import { openStore } from '../../src/store/open-store.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';
import { echo, startUpstream, type TestUpstream } from './http/harness.ts';

const WORKERS_RUN = reusePortSupported();

function configText(upstreamPort: number, workers: number, extra = ''): string {
  return `worker_processes ${workers};
events {}
http {
    limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;
    limit_conn_zone $binary_remote_addr zone=addr:1m;
    upstream backend { server 127.0.0.1:${upstreamPort}; }
    server {
        listen 80;
        location /burst { limit_req zone=one burst=5 nodelay; proxy_pass http://backend; }
        location /conn { limit_conn addr 100; proxy_pass http://backend; }
        location /held { proxy_pass http://backend; }${extra}
    }
}
`;
}

describe('replica: worker_processes', () => {
  let upstream: TestUpstream;
  const warnings: string[] = [];
  let replica: Replica;
  let port: number;

  before(async () => {
    upstream = await startUpstream();
    ({ replica, port } = await startInProcessReplica('workers', configText(upstream.port, 2), {
      log: (level, message) => {
        if (level === 'warn') warnings.push(message);
      },
    }));
  });

  after(async () => {
    await replica?.close();
    await upstream?.close();
  });

  /** `count` requests at once, each on a connection of its own (spread over the workers). */
  async function burst(path: string, count: number): Promise<number[]> {
    const agents = Array.from({ length: count }, () => new Agent({ pipelining: 0 }));
    try {
      return await Promise.all(
        agents.map(async (dispatcher) => {
          const res = await request(`http://127.0.0.1:${port}${path}`, { dispatcher, reset: true });
          await res.body.dump();
          return res.statusCode;
        }),
      );
    } finally {
      await Promise.all(agents.map((agent) => agent.close()));
    }
  }

  test(
    WORKERS_RUN ? 'two worker threads serve; the main thread does not' : 'one worker, and a notice why',
    () => {
      if (WORKERS_RUN) {
        assert.equal(replica.workerPool?.workers.length, 2);
        assert.deepEqual(warnings, []);
      } else {
        assert.equal(replica.workerPool, null);
        assert.equal(warnings.length, 1);
        assert.match(warnings[0]!, /"worker_processes" 2 is not in force: Node\.js .*SO_REUSEPORT/);
      }
    },
  );

  test('one limit across workers: burst=5 nodelay lets 6 of 24 concurrent requests through', async () => {
    const statuses = await burst('/burst', 24);
    assert.equal(statuses.filter((s) => s === 200).length, 6);
    assert.equal(statuses.filter((s) => s === 503).length, 18);
    const counters = replica.site.limitReqZones.get('one')!.counters;
    assert.equal(counters.passed, 6);
    assert.equal(counters.rejected, 18);
  });
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

/** What only runs where the workers do (the Node 24 pass of CI). */
if (WORKERS_RUN) {
  describe('replica: worker_processes 2, a worker dies, a reload', () => {
    const held = deferred();
    const reachedHeld = deferred();
    let upstream: TestUpstream;
    let replica: Replica;
    let port: number;

    before(async () => {
      // `/held` is answered once the test lets it go
      upstream = await startUpstream((req, res, record) => {
        if (req.url !== '/held') return echo(req, res, record);
        void held.promise.then(() => echo(req, res, record));
        reachedHeld.resolve();
      });
      ({ replica, port } = await startInProcessReplica('workers-die', configText(upstream.port, 2)));
    });

    after(async () => {
      await replica?.close();
      await upstream?.close();
    });

    async function get(path: string, dispatcher?: Dispatcher): Promise<number> {
      const res = await request(`http://127.0.0.1:${port}${path}`, dispatcher ? { dispatcher } : {});
      await res.body.dump();
      return res.statusCode;
    }

    test('a worker killed under load: another takes its place, the zone still holds the client, counters exact', async () => {
      const pool = replica.workerPool!;
      // the client goes over its rate (1r/m, burst 5): 6 pass, the rest are refused from now on
      const first = await Promise.all(Array.from({ length: 8 }, () => get('/burst', new Agent())));
      assert.deepEqual(first.sort(), [200, 200, 200, 200, 200, 200, 503, 503]);
      let stop = false;
      const seen = { ok: 0, other: 0, failed: 0 };
      const loops = Array.from({ length: 4 }, async () => {
        while (!stop) {
          const agent = new Agent();
          try {
            while (!stop) (await get('/conn', agent)) === 200 ? seen.ok++ : seen.other++;
          } catch {
            seen.failed++;
          } finally {
            await agent.destroy();
          }
        }
      });
      const killed = pool.workers[0]!;
      const killedId = killed.threadId;
      await killed.terminate();
      await pool.settled();
      const okAtRestart = seen.ok;
      // served by both workers again for a while
      while (seen.ok < okAtRestart + 200) await get('/conn');
      stop = true;
      await Promise.all(loops);
      assert.equal(pool.restarts, 1);
      assert.equal(pool.workers.length, 2);
      assert.ok(!pool.workers.some((w) => w.threadId === killedId));
      assert.equal(seen.other, 0, 'no answer but 200 on /conn');
      // connections on the killed worker broke, no more than one per loop
      assert.ok(seen.failed <= 4, `failed ${seen.failed}`);
      const one = replica.site.limitReqZones.get('one')!;
      const rejected = one.counters.rejected;
      const after = await Promise.all(Array.from({ length: 10 }, () => get('/burst', new Agent())));
      assert.deepEqual(after, Array(10).fill(503), 'the client is still over its rate');
      assert.equal(one.counters.rejected, rejected + 10);
      assert.equal(one.counters.passed, 6);
    });

    test('a reload starts new workers on the new configuration; the old ones end; kept zones keep their state', async () => {
      const pool = replica.workerPool!;
      const before = pool.workers.map((w) => w.threadId);
      assert.equal(await get('/added'), 404);
      replica.reload(
        loadConfigText(
          configText(upstream.port, 2, '\n        location /added { proxy_pass http://backend; }'),
          'nginx.conf',
        ),
      );
      await pool.settled();
      const now = pool.workers.map((w) => w.threadId);
      assert.equal(now.length, 2);
      assert.ok(!now.some((id) => before.includes(id)), 'new workers');
      assert.equal(await get('/added'), 200);
      assert.equal(await get('/burst'), 503, 'zone "one" kept its state');
    });

    test('a reload that gives an upstream a zone and a queue: the new workers serve through them', async () => {
      const text = configText(upstream.port, 2).replace(
        `upstream backend { server 127.0.0.1:${upstream.port}; }`,
        `upstream backend {\n        server 127.0.0.1:${upstream.port} max_conns=10;\n        queue 10;\n        zone backend 64k;\n    }`,
      );
      replica.reload(loadConfigText(text, 'nginx.conf'));
      await replica.workerPool!.settled();
      assert.equal(await get('/conn'), 200);
      const backend = replica.upstreamInfo().find((u) => u.name === 'backend');
      assert.equal(backend?.peers[0]?.maxConns, 10);
      assert.equal(backend?.peers[0]?.active, 0, 'the zone counted the request until its end');
    });

    test('a graceful stop: the workers stop accepting and finish the request they hold, those of a reload too', async () => {
      const response = get('/held');
      await reachedHeld.promise;
      // a reload whose workers are still starting when the stop comes: they stop too
      replica.reload(loadConfigText(configText(upstream.port, 2), 'nginx.conf'));
      const closed = replica.close();
      held.resolve();
      assert.equal(await response, 200);
      await closed;
      assert.equal(replica.workerPool!.workers.length, 0);
      await assert.rejects(get('/conn'), /ECONNREFUSED/);
    });
  });
}

if (WORKERS_RUN) {
  describe('replica: worker_processes 2 with a sync zone', () => {
    let upstream: TestUpstream;
    const store = openStore();
    const replicas: Replica[] = [];

    const synced = (port: number, workers: number) => `worker_processes ${workers};
events {}
http {
    limit_req_zone $binary_remote_addr zone=fleet:1m rate=1r/m sync;
    server {
        listen 80;
        location / { limit_req zone=fleet burst=5 nodelay; proxy_pass http://127.0.0.1:${port}; }
    }
}
`;

    async function started(id: string, workers: number): Promise<{ replica: Replica; port: number }> {
      // sync rounds run when the test says (tick), not on a timer
      const run = await startInProcessReplica(id, synced(upstream.port, workers), {
        store,
        limitSyncIntervalMs: 3_600_000,
      });
      replicas.push(run.replica);
      return run;
    }

    before(async () => {
      upstream = await startUpstream();
    });

    after(async () => {
      for (const replica of replicas) await replica.close();
      await upstream?.close();
    });

    test('the workers’ decisions are one replica’s share: the sync loop carries them to the store', async () => {
      const a = await started('synced-a', 2);
      assert.equal(a.replica.workerPool?.workers.length, 2);
      const statuses = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const res = await request(`http://127.0.0.1:${a.port}/`, { dispatcher: new Agent() });
          await res.body.dump();
          return res.statusCode;
        }),
      );
      // alone in the cluster, the replica holds the whole bucket: as one nginx
      assert.equal(statuses.filter((s) => s === 200).length, 6);
      await a.replica.limitSync.tick();
      assert.equal(a.replica.limitSync.info()?.zones.fleet?.recordsPending, 0);
      // another replica: its first request for the key is free (the store has not answered it yet);
      // once it has, the cluster's bucket (the workers' 6 charges) is over the burst
      const b = await started('synced-b', 1);
      const get = async () => {
        const res = await request(`http://127.0.0.1:${b.port}/`);
        await res.body.dump();
        return res.statusCode;
      };
      assert.equal(await get(), 200);
      await b.replica.limitSync.tick();
      assert.deepEqual([await get(), await get()], [503, 503]);
    });
  });
}
