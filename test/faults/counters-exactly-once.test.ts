/**
 * Issue: with Redis frozen (SIGSTOP) under load, a counter flush timed out client-side, Redis ran it
 * on waking, and the kept deltas were sent again: the cluster counted far more than clients saw. Now
 * each flush is a numbered batch the store applies once, so after a freeze the totals are exact.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RedisServer } from '../helpers/redis-server.ts';
import { FaultCluster } from './fault-cluster.ts';

let redis: RedisServer;
let cluster: FaultCluster;

before(async () => {
  redis = await RedisServer.start();
  cluster = await FaultCluster.start({ storeUrl: redis.url, replicas: 2 });
});

after(async () => {
  await cluster?.stop();
  await redis?.stop();
});

test('Redis SIGSTOP 10 s under load: /limit_reqs equals what the clients saw, exactly', async (t) => {
  assert.equal((await cluster.write('POST', { '/coffee': '1' }, '?wait=applied')).status, 201);
  const seen = new Map<number, number>();
  let sent = 0;
  let loading = true;
  // About 200 r/s over both replicas and ten client addresses: each address is over its 5 r/s.
  const load = (async () => {
    const inFlight = new Set<Promise<void>>();
    while (loading) {
      const i = sent++;
      const request = cluster
        .request(cluster.replicas[i % 2]!, `/coffee/${i}`, `10.0.0.${(i % 10) + 1}`)
        .then((status) => {
          seen.set(status, (seen.get(status) ?? 0) + 1);
        })
        .finally(() => inFlight.delete(request));
      inFlight.add(request);
      if (inFlight.size >= 20) await Promise.race(inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await Promise.all(inFlight);
  })();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  redis.pause();
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  redis.resume();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  loading = false;
  await load;
  t.diagnostic(`${sent} requests: ${JSON.stringify(Object.fromEntries(seen))}`);
  assert.deepEqual([...seen.keys()].sort(), [200, 503], 'every request answered: passed or limited');
  assert.ok(
    (seen.get(503) ?? 0) > 100 && (seen.get(200) ?? 0) > 100,
    JSON.stringify(Object.fromEntries(seen)),
  );

  // A graceful stop flushes the last deltas; then the store holds everything there is to count.
  for (const replica of cluster.replicas)
    assert.deepEqual(await replica.run.process.stop(), { code: 0, signal: null });
  const totals = (await cluster.clusterCounters()).coffee;
  assert.deepEqual(totals, {
    passed: seen.get(200),
    delayed: 0,
    rejected: seen.get(503),
    delayed_dry_run: 0,
    rejected_dry_run: 0,
  });
});
