/** The cluster registry port on Redis: zone declarations and replica heartbeats (see `keys.ts`). */
import { compareText } from '../../shared/dictionary.ts';
import type { ClusterRegistry, KeyvalZoneInfo, ReplicaInfo, ReplicaRecord } from '../cluster-registry.ts';
import type { RedisBackend } from './redis-backend.ts';

export class RedisRegistry implements ClusterRegistry {
  readonly #redis: RedisBackend;

  constructor(redis: RedisBackend) {
    this.#redis = redis;
  }

  async registerZones(zones: readonly KeyvalZoneInfo[]): Promise<void> {
    if (zones.length === 0) return;
    const fields = zones.flatMap((z) => [
      z.name,
      JSON.stringify({ name: z.name, type: z.type, timeoutMs: z.timeoutMs, sizeBytes: z.sizeBytes }),
    ]);
    await this.#redis.run((c) => c.hset(this.#redis.keys.registry, ...fields));
  }

  async zones(): Promise<KeyvalZoneInfo[]> {
    const hash = await this.#redis.run((c) => c.hgetall(this.#redis.keys.registry));
    return Object.values(hash)
      .map((json) => {
        // Declarations from before zone sizes were registered have none.
        const zone = JSON.parse(json) as Omit<KeyvalZoneInfo, 'sizeBytes'> & { sizeBytes?: number | null };
        return { ...zone, sizeBytes: zone.sizeBytes ?? null };
      })
      .sort((a, b) => compareText(a.name, b.name));
  }

  async heartbeat(info: ReplicaInfo, ttlMs: number): Promise<void> {
    const nowMs = this.#redis.nowMs();
    const k = this.#redis.keys;
    const record = { ...info, lastHeartbeatMs: nowMs };
    await this.#redis.exec((m) =>
      m.hset(k.replicas, info.id, JSON.stringify(record)).hset(k.replicasExpiry, info.id, nowMs + ttlMs),
    );
  }

  async deregister(id: string): Promise<void> {
    await this.#redis.run((c) => c.hset(this.#redis.keys.replicasExpiry, id, '0'));
  }

  async replicas(): Promise<ReplicaRecord[]> {
    const k = this.#redis.keys;
    const nowMs = this.#redis.nowMs();
    const [records, expiry] = await this.#redis.run((c) =>
      Promise.all([c.hgetall(k.replicas), c.hgetall(k.replicasExpiry)]),
    );
    return Object.entries(records)
      .map(([id, json]) => {
        const record = JSON.parse(json) as Omit<ReplicaRecord, 'live'>;
        return { ...record, live: nowMs < Number(expiry[id] ?? 0) };
      })
      .sort((a, b) => compareText(a.id, b.id));
  }
}
