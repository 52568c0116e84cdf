/** The replica's sync loop for cluster-wide limits (src/replica/cluster/limit-sync.ts), round by round. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseComplexValue } from '../../../src/engine/complex-value.ts';
import { type LimitReqPolicy, limitRequest, newOutcome } from '../../../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../../../src/engine/limit-req/limit-req-zone.ts';
import { LimitSync } from '../../../src/replica/cluster/limit-sync.ts';
import type { ReplicaRecord } from '../../../src/store/cluster-registry.ts';
import type { LimitSyncBatch, LimitSyncStore } from '../../../src/store/limit-sync-store.ts';
import { openMemoryStore } from '../../../src/store/memory/open-memory-store.ts';

const T = 1_700_000_000_000;

function replicaRecord(id: string, live: boolean, synced: boolean): ReplicaRecord {
  return {
    id,
    version: 't',
    configHash: 'h',
    appliedRevision: 0,
    appliedCommit: '',
    startedAtMs: T,
    keyvalZones: [],
    limitReqZones: ['api'],
    zoneSync: synced ? { nodesOnline: 1, msgsIn: 0, msgsOut: 0, zones: { api: {} as never } } : null,
    lastHeartbeatMs: T,
    live,
  };
}

function setup() {
  let nowMs = T;
  const zone = new LimitReqZone('api', parseComplexValue('$key'), 1 << 20, 10_000, true);
  const local = new LimitReqZone('plain', parseComplexValue('$key'), 1 << 20, 10_000);
  const memory = openMemoryStore({ clock: { nowMs: () => nowMs } });
  const sent: LimitSyncBatch[] = [];
  let down = false;
  /** The store takes the batch but the answer never comes back (a timeout after the write). */
  let answerLost = false;
  const store: Pick<LimitSyncStore, 'exchange'> = {
    exchange: async (batch) => {
      if (down) throw new Error('store away');
      sent.push(batch);
      const buckets = await memory.limitSync.exchange(batch);
      if (answerLost) throw new Error('command timed out');
      return buckets;
    },
  };
  let heartbeatSentAtMs: number | null = T;
  let records: ReplicaRecord[] = [];
  let registryDown = false;
  const logs: string[] = [];
  const loop = new LimitSync({
    replicaId: 'me',
    store,
    registry: {
      replicas: async () => {
        if (registryDown) throw new Error('store away');
        return records;
      },
    },
    zones: () => [zone, local],
    clock: { nowMs: () => nowMs },
    heartbeat: () => ({ acknowledgedSentAtMs: heartbeatSentAtMs, ttlMs: 5000 }),
    log: (level, message) => logs.push(`${level}: ${message}`),
  });
  const policy: LimitReqPolicy<{ key: string }> = {
    rules: [
      { zone, keyOf: (c) => c.key, keyText: '$key', burstMilli: 5000, delayMilli: Number.MAX_SAFE_INTEGER },
    ],
    status: 503,
    logLevel: 'error',
    dryRun: false,
  };
  return {
    zone,
    loop,
    memory,
    sent,
    logs,
    request: (key: string) => limitRequest(policy, { key }, nowMs, newOutcome()).status,
    advance: (ms: number) => {
      nowMs += ms;
    },
    setDown: (value: boolean) => {
      down = value;
    },
    setAnswerLost: (value: boolean) => {
      answerLost = value;
    },
    setHeartbeat: (sentAtMs: number | null) => {
      heartbeatSentAtMs = sentAtMs;
    },
    setRegistry: (value: ReplicaRecord[], unreachable = false) => {
      records = value;
      registryDown = unreachable;
    },
  };
}

describe('LimitSync', () => {
  it('one exchange per synced zone with activity, with its charges and arrivals; local zones never', async () => {
    const t = setup();
    for (let i = 0; i < 4; i++) t.request('a');
    t.request('b');
    await t.loop.tick();
    assert.equal(t.sent.length, 1);
    assert.equal(t.sent[0]!.zone, 'api');
    assert.deepEqual(
      t.sent[0]!.entries.map((e) => [e.key, e.charged, e.seen]),
      [
        ['a', 4, 4],
        ['b', 1, 1],
      ],
    );
    // Nothing new and the store fine: no exchange until the idle probe is due (1 s).
    t.advance(100);
    await t.loop.tick();
    assert.equal(t.sent.length, 1);
    t.advance(1000);
    await t.loop.tick();
    assert.deepEqual(
      t.sent.map((b) => b.entries.length),
      [2, 0],
    );
  });

  it('store away: fallback, counts kept for the next exchange, a probe each interval; back: synced', async () => {
    const t = setup();
    t.request('a');
    await t.loop.tick();
    assert.equal(t.loop.info()!.zones.api!.mode, 'synced');
    t.setDown(true);
    t.request('a');
    t.request('a');
    await t.loop.tick();
    assert.equal(t.loop.info()!.zones.api!.mode, 'fallback');
    assert.equal(t.loop.info()!.zones.api!.recordsPending, 1);
    assert.match(t.logs.join('\n'), /warn: cluster-wide limits: the store cannot be reached/);
    t.setDown(false);
    t.advance(100);
    await t.loop.tick();
    assert.equal(t.loop.info()!.zones.api!.mode, 'synced');
    // The two requests of the outage went out with the first exchange after it, as the batch
    // that failed (its seq again).
    assert.deepEqual(
      t.sent.map((b) => [b.seq, b.entries.map((e) => [e.key, e.charged, e.seen])]),
      [
        [1, [['a', 1, 1]]],
        [2, [['a', 2, 2]]],
      ],
    );
    assert.match(t.logs.join('\n'), /info: cluster-wide limits: the store answers again/);
  });

  it('a batch whose answer was lost is sent again unchanged and applied once; what came meanwhile waits for the next', async () => {
    const t = setup();
    t.request('k');
    await t.loop.tick();
    t.setAnswerLost(true);
    for (let i = 0; i < 3; i++) t.request('k');
    await t.loop.tick();
    t.advance(50);
    t.request('k');
    await t.loop.tick(); // the same batch again, its answer lost again
    t.setAnswerLost(false);
    t.advance(50);
    await t.loop.tick(); // the same batch, answered
    t.advance(50);
    await t.loop.tick(); // the request that came meanwhile
    assert.deepEqual(
      t.sent.map((b) => [b.seq, b.entries.map((e) => [e.key, e.charged, e.seen])]),
      [
        [1, [['k', 1, 1]]],
        [2, [['k', 3, 3]]],
        [2, [['k', 3, 3]]],
        [2, [['k', 3, 3]]],
        [3, [['k', 1, 1]]],
      ],
    );
    // The bucket took 1 + 3 + 1 requests (the first free) and leaked 150 ms at 10 r/s: 2500, not
    // 3000 more for each copy.
    const [bucket] = await t.memory.limitSync.exchange({
      zone: 'api',
      rateMilli: 0,
      replicaId: 'reader',
      incarnation: 'x',
      seq: 1,
      entries: [{ key: 'k', charged: 0, seen: 0, ageMs: 0 }],
    });
    assert.equal(bucket!.excessMilli, -1000 + 5000 - 1500);
  });

  it('cut off from the store: the shares held, shrinking to none when the heartbeat may lapse', async () => {
    const t = setup();
    t.request('a');
    await t.loop.tick();
    t.loop.holdShares();
    assert.deepEqual([t.zone.sync!.lostSinceMs, t.zone.sync!.heldFraction], [null, 1]);
    t.setHeartbeat(T + 1000); // the last heartbeat acknowledged: the store may count us gone at T + 6000
    t.setDown(true);
    t.advance(2000);
    t.request('a');
    await t.loop.tick();
    assert.equal(t.zone.sync!.lostSinceMs, T, 'lost since the last answer');
    assert.equal(t.zone.sync!.heldFraction, 0.8);
    t.advance(2500);
    t.loop.holdShares();
    assert.equal(t.zone.sync!.heldFraction, 0.3);
    t.advance(1500);
    t.loop.holdShares();
    assert.equal(t.zone.sync!.heldFraction, 0);
    t.setDown(false);
    t.advance(100);
    await t.loop.tick();
    assert.deepEqual([t.zone.sync!.lostSinceMs, t.zone.sync!.heldFraction], [null, 1]);
  });

  it('the default share is 1 / the live replicas running the zone synced, at last sight', async () => {
    const t = setup();
    t.setRegistry([
      replicaRecord('me', true, true),
      replicaRecord('r2', true, true),
      replicaRecord('r3', true, true),
      replicaRecord('plain', true, false), // runs the zone, not synced: not counted
      replicaRecord('gone', false, true),
    ]);
    await t.loop.refreshLive();
    assert.equal(t.zone.sync!.defaultShare, 1 / 3);
    assert.equal(t.loop.info()!.nodesOnline, 5 - 1);
    // The store away: the count stands.
    t.setRegistry([], true);
    await t.loop.refreshLive();
    assert.equal(t.zone.sync!.defaultShare, 1 / 3);
    // A store that came back empty lists nobody yet: the others count for a heartbeat's TTL…
    t.setRegistry([]);
    await t.loop.refreshLive();
    t.advance(4000);
    await t.loop.refreshLive();
    assert.equal(t.zone.sync!.defaultShare, 1 / 3);
    // …then no more, unless they heartbeat again.
    t.advance(2000);
    await t.loop.refreshLive();
    assert.equal(t.zone.sync!.defaultShare, 1);
    // A deregistered replica stops counting at once.
    t.setRegistry([replicaRecord('r2', true, true), replicaRecord('r3', true, true)]);
    await t.loop.refreshLive();
    assert.equal(t.zone.sync!.defaultShare, 1 / 3);
    t.setRegistry([replicaRecord('r2', true, true), replicaRecord('r3', false, true)]);
    await t.loop.refreshLive();
    assert.equal(t.zone.sync!.defaultShare, 1 / 2);
  });

  it('stop sends what is left', async () => {
    const t = setup();
    t.loop.start();
    t.request('z');
    await t.loop.stop();
    assert.deepEqual(
      t.sent.map((b) => b.entries.map((e) => e.key)),
      [['z']],
    );
  });
});
