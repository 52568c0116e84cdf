/** The counters port on Redis: one hash per kind, batches applied once by a Lua script (see `keys.ts`). */
import type { CounterBatch, CounterStore } from '../counter-store.ts';
import type { RedisBackend } from './redis-backend.ts';

export class RedisCounters implements CounterStore {
  readonly #redis: RedisBackend;

  constructor(redis: RedisBackend) {
    this.#redis = redis;
  }

  async add(batch: CounterBatch): Promise<boolean> {
    const k = this.#redis.keys;
    const args: (string | number)[] = [k.counters(''), batch.replicaId, batch.incarnation, batch.seq];
    for (const [kind, zones] of Object.entries(batch.deltas)) {
      for (const [zone, delta] of Object.entries(zones)) {
        for (const [field, n] of Object.entries(delta)) args.push(kind, zone, field, n);
      }
    }
    return Number(await this.#redis.write('counters-add-1', [k.counterBatches], args)) === 1;
  }

  async read(kind: string): Promise<Record<string, Record<string, Record<string, number>>>> {
    const hash = await this.#redis.run((c) => c.hgetall(this.#redis.keys.counters(kind)));
    const out: Record<string, Record<string, Record<string, number>>> = {};
    for (const [name, value] of Object.entries(hash)) {
      const [replicaId = '', zone = '', field = ''] = name.split('\0');
      // `\0<zone>\0resets`: the reset count, not a replica's record.
      if (replicaId === '') continue;
      out[replicaId] ??= {};
      out[replicaId][zone] ??= {};
      out[replicaId][zone][field] = Number(value);
    }
    return out;
  }

  async reset(kind: string, zone: string): Promise<void> {
    await this.#redis.script('counters-reset-1', [this.#redis.keys.counters(kind)], [zone]);
  }

  async resets(kind: string, zones: readonly string[]): Promise<Record<string, number>> {
    if (zones.length === 0) return {};
    const fields = zones.map((zone) => `\0${zone}\0resets`);
    const values = await this.#redis.run((c) => c.hmget(this.#redis.keys.counters(kind), ...fields));
    return Object.fromEntries(zones.map((zone, i) => [zone, Number(values[i] ?? 0)]));
  }
}
