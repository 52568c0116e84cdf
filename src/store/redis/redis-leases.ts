/**
 * The leases port on Redis: `SET lease:<name> <token> NX PX <ttl>` to take a lease, compare-and-delete
 * in Lua to give it back, records written by a Lua script that first checks the lease (see `keys.ts`).
 */
import { randomUUID } from 'node:crypto';
import type { Lease, LeaseRecord, LeaseStore } from '../lease-store.ts';
import type { RedisBackend } from './redis-backend.ts';
import { decodeEntry } from './redis-replies.ts';

export class RedisLeases implements LeaseStore {
  readonly #redis: RedisBackend;

  constructor(redis: RedisBackend) {
    this.#redis = redis;
  }

  async acquire(name: string, ttlMs: number): Promise<Lease | null> {
    const token = randomUUID();
    const reply = await this.#redis.run((c) => c.set(this.#redis.keys.lease(name), token, 'PX', ttlMs, 'NX'));
    return reply === 'OK' ? { name, token } : null;
  }

  async release(lease: Lease): Promise<boolean> {
    const reply = await this.#redis.script(
      'lease-release-1',
      [this.#redis.keys.lease(lease.name)],
      [lease.token],
    );
    return Number(reply) === 1;
  }

  async records(prefix: string, nowMs: number): Promise<Record<string, LeaseRecord>> {
    const hash = await this.#redis.run((c) => c.hgetall(this.#redis.keys.leaseRecords));
    const out: Record<string, LeaseRecord> = Object.create(null);
    for (const [name, json] of Object.entries(hash)) {
      if (!name.startsWith(prefix)) continue;
      const record = decodeEntry(json);
      if (record.expireAtMs === null || record.expireAtMs > nowMs) out[name] = record;
    }
    return out;
  }

  async putRecord(lease: Lease, name: string, record: LeaseRecord | null): Promise<boolean> {
    const k = this.#redis.keys;
    const json =
      record === null ? '' : JSON.stringify({ value: record.value, expireAtMs: record.expireAtMs });
    const reply = await this.#redis.script(
      'record-put-3',
      [k.lease(lease.name), k.leaseRecords, k.leaseRecordsExpiry],
      [lease.token, name, json, record?.expireAtMs ?? '', this.#redis.nowMs()],
    );
    return Number(reply) === 1;
  }
}
