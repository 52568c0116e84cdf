/**
 * Issue: a planned Sentinel failover (`SENTINEL FAILOVER`) lost most of a steady writer's acknowledged
 * writes: the control plane kept writing to the old master, which Sentinel demotes only ~10 s later
 * and which then resyncs from the new one, dropping them. Now clients follow `+switch-master` at once,
 * and with durable acknowledgement (`?wait=1` on the store URL) no acknowledged write can be lost; the
 * loss without it is measured here and documented in docs/operations.md. Either way the replicas end
 * equal to the store.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import { RedisSentinelServers } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { FaultCluster, ZONE } from './fault-cluster.ts';

/** An acknowledged write: its key and when the answer came (monotonic ms). */
interface Ack {
  readonly key: string;
  readonly atMs: number;
}

/** 20 writes a second for `ms`, a new key each; the ones the API acknowledged (201). */
async function steadyWriter(cluster: FaultCluster, from: number, ms: number): Promise<Ack[]> {
  const acknowledged: Ack[] = [];
  const end = performance.now() + ms;
  const inFlight: Promise<void>[] = [];
  for (let i = from; performance.now() < end; i++) {
    const key = `/w${i}`;
    inFlight.push(
      cluster.write('POST', { [key]: String(i) }).then(
        (res) => {
          if (res.status === 201) acknowledged.push({ key, atMs: performance.now() });
        },
        () => {},
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await Promise.all(inFlight);
  return acknowledged;
}

interface Outcome {
  readonly acknowledged: number;
  readonly lost: readonly string[];
  /** The longest time between two acknowledged writes: the failover as the writer saw it. */
  readonly unavailableMs: number;
}

async function plannedFailover(durable: boolean): Promise<Outcome> {
  const servers = await RedisSentinelServers.start({ replicas: 2 });
  const storeUrl = durable ? `${servers.url}?wait=2&waitTimeoutMs=500` : servers.url;
  const cluster = await FaultCluster.start({ storeUrl, replicas: 2 });
  try {
    const writing = steadyWriter(cluster, 0, 8000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    // Sentinel needs to have heard of the replicas' state before it accepts a failover.
    await waitFor(async () => (await servers.sentinel.cli('sentinel', 'failover', 'mymaster')) === 'OK', {
      message: 'Sentinel starting the failover',
      intervalMs: 100,
    });
    const oldMaster = servers.master;
    await waitFor(async () => (await servers.currentMaster()) !== oldMaster, { message: 'a new master' });
    const acknowledged = await writing;
    let probe = 0;
    await waitFor(async () => (await cluster.write('POST', { [`/probe${probe++}`]: '1' })).status === 201, {
      timeoutMs: 40_000,
      intervalMs: 50,
      message: 'a write acknowledged after the failover',
    });
    const resumedAt = performance.now();
    // two seconds of writes (about 40 at 20/s; fewer go out on a busy machine, whose timers run late)
    const during = await steadyWriter(cluster, 10_000, 2000);
    assert.ok(during.length >= 15, `${during.length} writes acknowledged after the failover`);
    const times = [...acknowledged.map((a) => a.atMs), resumedAt, ...during.map((a) => a.atMs)].sort(
      (a, b) => a - b,
    );
    const unavailableMs = Math.max(...times.slice(1).map((t, i) => t - times[i]!));
    // The truth once the old master is a replica again, read afresh from the new master.
    await servers.waitForReplica(oldMaster);
    const truth = openRedisStore({ url: servers.url });
    const zone = await truth.keyvals.getZone(ZONE, Date.now()).finally(() => truth.close());
    const lost = [...acknowledged, ...during].map((a) => a.key).filter((key) => !(key in zone));
    const store = Object.fromEntries(Object.entries(zone).map(([k, e]) => [k, e.value]));
    await cluster.everyReplicaShows(store, 15_000);
    return { acknowledged: acknowledged.length + during.length, lost, unavailableMs };
  } finally {
    await cluster.stop();
    await servers.stop();
  }
}

describe('planned Sentinel failover under a steady writer (20 writes/s)', () => {
  test('durable acknowledgement (?wait=2, every replica): no acknowledged write lost', async (t) => {
    const { acknowledged, lost, unavailableMs } = await plannedFailover(true);
    t.diagnostic(
      `${acknowledged} writes acknowledged, ${lost.length} lost; ${unavailableMs.toFixed(0)} ms without acknowledged writes`,
    );
    assert.ok(acknowledged >= 30, `${acknowledged} acknowledged`);
    assert.deepEqual(lost, []);
  });

  test('without it: the loss is measured, and the replicas end equal to the store', async (t) => {
    const { acknowledged, lost, unavailableMs } = await plannedFailover(false);
    t.diagnostic(
      `${acknowledged} writes acknowledged, ${lost.length} lost (${lost.join(' ')}); ${unavailableMs.toFixed(0)} ms without acknowledged writes`,
    );
    assert.ok(acknowledged > 80, `${acknowledged} acknowledged`);
    // Writes are held back from the failover's first step: only one in flight then can be lost.
    assert.ok(lost.length <= 2, `${lost.length} lost`);
    // Writes reach the promoted master about a second after Sentinel promotes it.
    assert.ok(unavailableMs < 5000, `${unavailableMs} ms`);
  });
});
