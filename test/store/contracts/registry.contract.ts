/** The cluster registry port contract: zone declarations and replica heartbeats, on every backend. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReplicaInfo } from '../../../src/store/cluster-registry.ts';
import type { StoreHarness } from './store-harness.ts';

const INFO: ReplicaInfo = {
  id: 'r1',
  version: '0.1.0',
  configHash: 'abc',
  appliedRevision: 3,
  appliedCommit: 'c3',
  startedAtMs: 1000,
  keyvalZones: [{ name: 'z', type: 'prefix', timeoutMs: null, sizeBytes: null }],
  limitReqZones: ['one'],
};

export function registryContract(name: string, harness: StoreHarness): void {
  describe(`registry port contract: ${name}`, () => {
    it('zones: union by name, sorted, the last declaration wins', async () => {
      const { registry } = await harness.create();
      await registry.registerZones([{ name: 'b', type: 'ip', timeoutMs: 60_000, sizeBytes: null }]);
      await registry.registerZones([]);
      await registry.registerZones([
        { name: 'a', type: 'string', timeoutMs: null, sizeBytes: 65_536 },
        { name: 'b', type: 'ip', timeoutMs: 30_000, sizeBytes: null },
      ]);
      assert.deepEqual(await registry.zones(), [
        { name: 'a', type: 'string', timeoutMs: null, sizeBytes: 65_536 },
        { name: 'b', type: 'ip', timeoutMs: 30_000, sizeBytes: null },
      ]);
    });

    it('replicas: live until the TTL on the store clock; deregistered ones stay listed, not live', async () => {
      let nowMs = 1_700_000_000_000;
      const { registry } = await harness.create({ clock: { nowMs: () => nowMs } });
      await registry.heartbeat(INFO, 5000);
      nowMs += 10;
      await registry.heartbeat({ ...INFO, id: 'r2', appliedRevision: 4 }, 5000);
      const [r1, r2] = await registry.replicas();
      assert.deepEqual(r1, { ...INFO, lastHeartbeatMs: 1_700_000_000_000, live: true });
      assert.equal(r2?.appliedRevision, 4);
      nowMs = 1_700_000_005_000;
      assert.deepEqual(
        (await registry.replicas()).map((r) => [r.id, r.live]),
        [
          ['r1', false],
          ['r2', true],
        ],
      );
      nowMs = 1_700_000_000_010;
      await registry.deregister('r2');
      assert.deepEqual(
        (await registry.replicas()).map((r) => [r.id, r.live]),
        [
          ['r1', true],
          ['r2', false],
        ],
      );
    });

    it('a peer sees the same registry', async () => {
      const store = await harness.create();
      const peer = await harness.peer(store);
      await store.registry.heartbeat(INFO, 5000);
      await peer.registry.registerZones(INFO.keyvalZones);
      assert.deepEqual(
        (await peer.registry.replicas()).map((r) => r.id),
        ['r1'],
      );
      assert.deepEqual(await store.registry.zones(), INFO.keyvalZones);
    });
  });
}
