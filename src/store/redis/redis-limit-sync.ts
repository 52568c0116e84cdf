/** The cluster-wide limits port on Redis: one Lua script per batch (`lua/limit-sync-5.lua`, keys.ts). */
import type { SyncedBucket } from '../../engine/limit-req/zone-sync.ts';
import {
  DRAINED,
  type LimitSyncBatch,
  type LimitSyncStore,
  SHARE_DECAY_MS,
  SYNC_IDLE_MS,
  SYNC_LOST_AFTER_MS,
  SYNC_SENDER_FORGET_MS,
} from '../limit-sync-store.ts';
import type { RedisBackend } from './redis-backend.ts';

export class RedisLimitSync implements LimitSyncStore {
  readonly #redis: RedisBackend;

  constructor(redis: RedisBackend) {
    this.#redis = redis;
  }

  async exchange(batch: LimitSyncBatch): Promise<SyncedBucket[]> {
    const k = this.#redis.keys;
    const args: (string | number)[] = [
      batch.rateMilli,
      batch.replicaId,
      batch.incarnation,
      batch.seq,
      SHARE_DECAY_MS,
      SYNC_IDLE_MS,
      DRAINED,
      SYNC_LOST_AFTER_MS,
      SYNC_SENDER_FORGET_MS,
    ];
    // Ages become times on the store's clock as this host reads it: a copy the store runs late (it
    // was frozen) still counts its requests from when they came.
    const sentMs = this.#redis.nowMs();
    for (const entry of batch.entries) {
      args.push(entry.key, entry.charged, entry.seen, Math.round(sentMs - Math.max(0, entry.ageMs)));
    }
    const reply = (await this.#redis.script(
      'limit-sync-5',
      [
        k.limitSync(batch.zone),
        k.limitSyncTouched(batch.zone),
        k.limitSyncSenders(batch.zone),
        k.limitSyncHeard(batch.zone),
        k.replicasExpiry,
      ],
      args,
    )) as string[];
    const out: SyncedBucket[] = [];
    for (let i = 0; i < reply.length; i += 2) {
      out.push({ excessMilli: Number(reply[i]), share: Number(reply[i + 1]) });
    }
    return out;
  }

  async keys(zone: string): Promise<number> {
    return this.#redis.run((c) => c.hlen(this.#redis.keys.limitSync(zone)));
  }
}
