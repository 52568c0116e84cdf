/** The audit port on Redis: a bounded list, newest first (see `keys.ts`). */
import type { AuditEntry, AuditTrail } from '../audit-trail.ts';
import type { RedisBackend } from './redis-backend.ts';

export class RedisAudit implements AuditTrail {
  readonly #redis: RedisBackend;
  readonly #max: number;

  /** `maxEntries`: how many are kept (default 1000). */
  constructor(redis: RedisBackend, maxEntries = 1000) {
    this.#redis = redis;
    this.#max = maxEntries;
  }

  async append(entry: AuditEntry): Promise<void> {
    const key = this.#redis.keys.audit;
    await this.#redis.exec((m) => m.lpush(key, JSON.stringify(entry)).ltrim(key, 0, this.#max - 1));
  }

  async recent(limit: number): Promise<AuditEntry[]> {
    if (limit <= 0) return [];
    const list = await this.#redis.run((c) => c.lrange(this.#redis.keys.audit, 0, limit - 1));
    return list.map((json) => JSON.parse(json) as AuditEntry);
  }
}
