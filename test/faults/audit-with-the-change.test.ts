/**
 * Issue: committed writes were missing from `/audit` when a control plane died between the change
 * and its audit entry (appended afterwards). The entry is now part of the same atomic mutation.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { FaultCluster } from './fault-cluster.ts';

let redis: RedisServer;
let cluster: FaultCluster;

before(async () => {
  redis = await RedisServer.start();
  cluster = await FaultCluster.start({ storeUrl: redis.url, replicas: 0 });
});

after(async () => {
  await cluster?.stop();
  await redis?.stop();
});

test('a control plane SIGKILLed mid-burst: every committed change has its audit entry', async () => {
  const plane = cluster.controlPlanes[0]!;
  let next = 0;
  let acknowledged = 0;
  // 16 writers at once; the control plane dies when 150 writes have been answered.
  const writer = async (): Promise<void> => {
    while (next < 400) {
      const i = next++;
      const res = await cluster.write('POST', { [`/k${i}`]: String(i) }).catch(() => null);
      if (res?.status === 201) acknowledged++;
      if (acknowledged === 150) plane.process.signal('SIGKILL');
      if (res === null) return;
    }
  };
  await Promise.all(Array.from({ length: 16 }, writer));
  await plane.process.exited;
  assert.ok(acknowledged >= 150 && acknowledged < 400, `${acknowledged} acknowledged`);

  const store = openRedisStore({ url: redis.url });
  try {
    const changes = (await store.keyvals.changesSince(0)) ?? [];
    assert.ok(changes.length >= acknowledged, `${changes.length} committed, ${acknowledged} acknowledged`);
    const audited = new Set((await store.audit.recent(1000)).map((e) => e.revision));
    const missing = changes.filter((c) => !audited.has(c.revision)).map((c) => c.revision);
    assert.deepEqual(
      missing,
      [],
      `${missing.length} of ${changes.length} committed changes have no audit entry`,
    );
  } finally {
    await store.close();
  }
});
