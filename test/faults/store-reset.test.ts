/**
 * Issue: Redis restarted empty (no persistence) and every switch silently disappeared from every
 * replica. Now a store reset is loud (warning with the epochs and the count, a metric, an audit
 * entry) and, by default, the replicas write their switches back; `--store-reset follow` drops them.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { FaultCluster } from './fault-cluster.ts';

interface AuditView {
  readonly zone: string;
  readonly key: string | null;
  readonly old: string | null;
  readonly new: string | null;
  readonly client: string;
  readonly reason: string | null;
}

async function audit(cluster: FaultCluster): Promise<AuditView[]> {
  return (await (await fetch(`${cluster.api}/audit?limit=50`)).json()) as AuditView[];
}

async function metric(cluster: FaultCluster, index: number, action: string): Promise<number> {
  const text = await (await fetch(`${cluster.replicas[index]!.run.statusUrl}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`limitswitch_store_resets_total{action="${action}"}`));
  return Number(line?.split(' ')[1] ?? 0);
}

/** Writes two switches everywhere, then restarts Redis empty. */
async function resetStore(cluster: FaultCluster, redis: RedisServer): Promise<void> {
  assert.equal((await cluster.write('POST', { '/coffee': '1', '/tea': '1' }, '?wait=applied')).status, 201);
  await cluster.everyReplicaShows({ '/coffee': '1', '/tea': '1' });
  const epoch = await redis.cli('get', 'limitswitch:{default}:epoch');
  await redis.kill();
  await redis.restart();
  // Empty: the replicas may already have written back by the time one could look, but the epoch (set
  // once, when absent) is a new one.
  await waitFor(async () => !['', epoch].includes(await redis.cli('get', 'limitswitch:{default}:epoch')), {
    message: 'a new epoch after the restart',
  });
}

describe('store comes back empty', () => {
  const stops: (() => Promise<void>)[] = [];
  after(async () => {
    for (const stop of stops.reverse()) await stop();
  });

  test('restore (default): the switches come back from the replicas, once, with a warning and an audit trail', async () => {
    const redis = await RedisServer.start();
    const cluster = await FaultCluster.start({ storeUrl: redis.url, replicas: 3 });
    stops.push(
      () => redis.stop(),
      () => cluster.stop(),
    );
    await resetStore(cluster, redis);
    await waitFor(
      async () => JSON.stringify(await cluster.switchesInStore()) === '{"/coffee":"1","/tea":"1"}',
      {
        message: 'the switches restored in the store',
      },
    );
    await cluster.everyReplicaShows({ '/coffee': '1', '/tea': '1' });
    // One replica restored (two keys, one zone: one revision), the others found it done.
    assert.equal(await redis.cli('get', 'limitswitch:{default}:revision'), '1');
    // Every replica says what happened: one restored, the others reloaded the restored store. They
    // show the switches throughout (fail-static), so the lines themselves are what is waited for.
    const saidNow = () =>
      cluster.replicas.map((r) =>
        r.run.process.lines
          .map((l) => String(l.msg))
          .filter(
            (m) =>
              m.startsWith('keyval store came back empty') ||
              m.startsWith('keyval store has another history'),
          ),
      );
    await waitFor(async () => saidNow().every((lines) => lines.length > 0), {
      message: 'every replica says the store came back empty',
    });
    const said = saidNow();
    const restorers = said.filter((m) => m.some((l) => l.endsWith('restored 2 switches from this replica')));
    assert.equal(restorers.length, 1, JSON.stringify(said));
    assert.match(restorers[0]![0]!, /^keyval store came back empty \(epoch [0-9a-f-]{36} → [0-9a-f-]{36}\)/);
    for (const lines of said) assert.equal(lines.length, 1, JSON.stringify(said));
    const restored = await Promise.all([0, 1, 2].map((i) => metric(cluster, i, 'restored')));
    assert.deepEqual([...restored].sort(), [0, 0, 1]);
    const entries = await audit(cluster);
    assert.deepEqual(
      entries.map((e) => [e.zone, e.key, e.old, e.new]),
      [
        ['limitreq_uri', '/tea', null, '1'],
        ['limitreq_uri', '/coffee', null, '1'],
      ],
    );
    assert.match(
      String(entries[0]!.reason),
      /^store reset \(epoch .+ → .+\): restored from the state replica replica-\d had applied$/,
    );
    assert.match(entries[0]!.client, /^replica replica-\d$/);
  });

  test('--store-reset follow: the switches are dropped, loudly, and the loss is audited once', async () => {
    const redis = await RedisServer.start();
    const cluster = await FaultCluster.start({
      storeUrl: redis.url,
      replicas: 2,
      replicaArgs: ['--store-reset', 'follow'],
    });
    stops.push(
      () => redis.stop(),
      () => cluster.stop(),
    );
    await resetStore(cluster, redis);
    await cluster.everyReplicaShows({});
    for (const replica of cluster.replicas) {
      await waitFor(
        () =>
          replica.run.process.lines.some((l) =>
            String(l.msg).endsWith(': 2 switches dropped (--store-reset follow)'),
          ),
        {
          message: `${replica.id} warns of the drop`,
        },
      );
    }
    await waitFor(async () => (await audit(cluster)).length === 2, {
      message: 'the audit entries of the drop',
    });
    const entries = await audit(cluster);
    assert.deepEqual(entries.map((e) => [e.key, e.old, e.new]).sort(), [
      ['/coffee', '1', null],
      ['/tea', '1', null],
    ]);
    assert.match(String(entries[0]!.reason), /dropped, as the empty store says \(--store-reset follow\)$/);
    assert.deepEqual(await Promise.all([0, 1].map((i) => metric(cluster, i, 'dropped'))), [1, 1]);
    assert.deepEqual(await cluster.switchesInStore(), {});
  });
});
