/** The cluster-wide limits port on Redis: one Lua script per batch (`lua/limit-sync-2.lua`, keys.ts). */
import type { SyncedBucket } from '../../engine/limit-req/zone-sync.ts';
import {
  DRAINED,
  type LimitSyncBatch,
  type LimitSyncStore,
  SHARE_DECAY_MS,
  SYNC_IDLE_MS,
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
      batch.nowMs,
      SHARE_DECAY_MS,
      SYNC_IDLE_MS,
      DRAINED,
    ];
    for (const entry of batch.entries) args.push(entry.key, entry.charged, entry.seen);
    const reply = (await this.#redis.script(
      'limit-sync-2',
      [k.limitSync(batch.zone), k.limitSyncTouched(batch.zone)],
      args,
    )) as string[];
    const out: SyncedBucket[] = [];
    for (let i = 0; i < reply.length; i += 3) {
      out.push({ excessMilli: Number(reply[i]), lastMs: Number(reply[i + 1]), share: Number(reply[i + 2]) });
    }
    return out;
  }

  async keys(zone: string): Promise<number> {
    return this.#redis.run((c) => c.hlen(this.#redis.keys.limitSync(zone)));
  }
}
