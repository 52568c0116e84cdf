/**
 * Issue: a store restored from an older snapshot (Redis with RDB only, Debian's stock setting, killed
 * and restarted) reuses revisions with other changes. Replicas that applied the lost history must
 * notice and reload — never stay on it while reporting themselves current.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { RedisServer } from '../helpers/redis-server.ts';
import { FaultCluster } from './fault-cluster.ts';

let redis: RedisServer;
let cluster: FaultCluster;

before(async () => {
  redis = await RedisServer.start();
  cluster = await FaultCluster.start({ storeUrl: redis.url, replicas: 3 });
});

after(async () => {
  await cluster?.stop();
  await redis?.stop();
});

test('RDB rollback: replicas converge to the store within 1 s, and ?wait=applied waits for them', async (t) => {
  assert.equal((await cluster.write('POST', { '/coffee': '0' })).status, 201);
  assert.equal(await redis.cli('save'), 'OK');
  const on = await cluster.write('PATCH', { '/coffee': '1' }, '?wait=applied');
  assert.equal(on.status, 204);
  assert.equal(on.headers.get('x-limitswitch-revision'), '2');
  await cluster.everyReplicaShows({ '/coffee': '1' });

  // Redis dies and comes back from the snapshot: revision 1, "/coffee" = "0", same epoch.
  await redis.kill();
  await redis.restart();
  assert.equal(await redis.cli('get', 'limitswitch:{default}:revision'), '1');

  // The same revision 2 again, with another change.
  const started = performance.now();
  const off = await cluster.write('PATCH', { '/coffee': '0' }, '?wait=applied&timeout=5s');
  assert.equal(off.headers.get('x-limitswitch-revision'), '2');
  assert.equal(off.status, 204, await off.text());
  // ?wait=applied answered only once every replica is on the store's history.
  const views = await Promise.all(cluster.replicas.map((r) => cluster.switchesOn(r)));
  assert.deepEqual(
    views,
    cluster.replicas.map(() => ({ '/coffee': '0' })),
  );
  const convergedMs = performance.now() - started;
  t.diagnostic(`every replica on the store's history ${convergedMs.toFixed(0)} ms after the write`);
  assert.ok(convergedMs < 1000, `${convergedMs} ms`);
  assert.deepEqual(await cluster.switchesInStore(), { '/coffee': '0' });

  const replicas = (await (await fetch(`${cluster.api}/cluster/replicas`)).json()) as {
    revision: number;
    replicas: { id: string; state: string; applied_revision: number }[];
  };
  assert.deepEqual(
    replicas.replicas.map((r) => [r.id, r.state, r.applied_revision]),
    cluster.replicas.map((r) => [r.id, 'live', 2]),
  );
});
