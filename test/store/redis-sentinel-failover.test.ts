/**
 * Sentinel failover: the master dies, the Sentinel promotes the replica, and writers and replicas
 * (connected through the Sentinel URL) carry on with the promoted one, history and epoch intact.
 */
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { KeyvalSync } from '../../src/store/keyval-sync.ts';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import { RedisSentinelServers } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { converged } from './sync-fixtures.ts';

const never = (value: string) => ({ value, expireAtMs: null });
const cleanup: (() => Promise<void>)[] = [];
after(async () => {
  for (const step of cleanup.reverse()) await step();
});

it('writers and replicas follow a Sentinel failover', async (t) => {
  const servers = await RedisSentinelServers.start({ replica: true });
  cleanup.push(() => servers.stop());
  const writer = openRedisStore({ url: servers.url, commandTimeoutMs: 1000 });
  cleanup.push(() => writer.close());
  const syncs = [0, 1].map(() => {
    const store = openRedisStore({ url: servers.url, commandTimeoutMs: 1000 });
    const sync = new KeyvalSync({ store: store.keyvals });
    cleanup.push(
      () => store.close(),
      () => sync.stop(),
    );
    return sync;
  });
  await Promise.all(syncs.map((s) => s.start()));
  await writer.keyvals.add('z', { a: never('1') });
  const { epoch } = await writer.keyvals.head();
  // Replication is asynchronous: make sure the replica has the write before the master dies.
  await servers.replicated();

  await servers.master.kill();
  await servers.waitForMaster(servers.replica!.port);
  const failoverMs = await waitFor(
    () =>
      writer.keyvals.set('z', 'b', never('2')).then(
        () => true,
        () => false,
      ),
    {
      timeoutMs: 20_000,
      message: 'a write on the promoted master',
    },
  );
  t.diagnostic(`writes accepted again ${failoverMs.toFixed(0)} ms after the Sentinel named the new master`);
  await waitFor(
    async () => (await Promise.all(syncs.map((s) => converged(s, writer.keyvals)))).every(Boolean),
    {
      timeoutMs: 20_000,
      message: 'replicas equal to the promoted master',
    },
  );
  const head = await writer.keyvals.head();
  assert.deepEqual({ revision: head.revision, epoch: head.epoch }, { revision: 2, epoch });
  for (const sync of syncs) assert.deepEqual(sync.zone('z'), { a: never('1'), b: never('2') });
});
