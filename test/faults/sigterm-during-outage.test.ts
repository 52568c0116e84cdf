/**
 * Issue: a replica stopped (SIGTERM) while the store was down dropped every count not flushed yet.
 * Now the unacknowledged batches go to its state file, and the next start flushes them first.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { FaultCluster } from './fault-cluster.ts';

let redis: RedisServer;
let cluster: FaultCluster;

before(async () => {
  // AOF: what the store had before the outage is there after it.
  redis = await RedisServer.start({ persistence: true });
  cluster = await FaultCluster.start({ storeUrl: redis.url, replicas: 1 });
});

after(async () => {
  await cluster?.stop();
  await redis?.stop();
});

async function burst(count: number, seen: Map<number, number>): Promise<void> {
  const replica = cluster.replicas[0]!;
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const status = await cluster.request(replica, `/coffee/${i}`, `10.0.1.${i % 4}`);
      seen.set(status, (seen.get(status) ?? 0) + 1);
    }),
  );
}

test('SIGTERM while the store is down: the counts reach the store after it returns', async () => {
  assert.equal((await cluster.write('POST', { '/coffee': '1' }, '?wait=applied')).status, 201);
  const seen = new Map<number, number>();
  await burst(40, seen);
  await redis.kill();
  await burst(60, seen);
  const replica = cluster.replicas[0]!;
  assert.deepEqual(await replica.run.process.stop(), { code: 0, signal: null });
  const kept = replica.run.process.lines.find(
    (l) =>
      l.msg === 'store unreachable at shutdown: counter deltas kept in the state file for the next start',
  );
  assert.ok(kept, replica.run.process.output());

  await redis.restart();
  await cluster.restartReplica(replica);
  const expected = {
    passed: seen.get(200) ?? 0,
    delayed: 0,
    rejected: seen.get(503) ?? 0,
    delayed_dry_run: 0,
    rejected_dry_run: 0,
  };
  assert.equal(expected.passed + expected.rejected, 100);
  await waitFor(
    async () => JSON.stringify((await cluster.clusterCounters()).coffee) === JSON.stringify(expected),
    {
      message: `/limit_reqs equal to what the clients saw: ${JSON.stringify(expected)}`,
    },
  );
  // Flushed once: the state file no longer holds them, and a clean stop adds nothing.
  assert.deepEqual(await replica.run.process.stop(), { code: 0, signal: null });
  assert.deepEqual((await cluster.clusterCounters()).coffee, expected);
  const state = JSON.parse(cluster.dir.read(`${replica.id}.state.json`)) as { counters: unknown[] };
  assert.deepEqual(state.counters, []);
});
