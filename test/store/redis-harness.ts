/**
 * A `StoreHarness` over the Redis store: each `create()` is a fresh cluster name (so a fresh, empty
 * keyspace) on the same Redis; `peer()` another client of the same cluster name.
 */
import { randomUUID } from 'node:crypto';
import { openRedisStore, type RedisStoreOptions } from '../../src/store/redis/open-redis-store.ts';
import type { Store } from '../../src/store/store.ts';
import type { StoreHarness } from './contracts/store-harness.ts';

export function redisHarness(url: () => Promise<string>, stop: () => Promise<void>): StoreHarness {
  const opened: Store[] = [];
  const optionsOf = new WeakMap<object, RedisStoreOptions>();
  const open = (options: RedisStoreOptions) => {
    const store = openRedisStore(options);
    optionsOf.set(store, options);
    opened.push(store);
    return store;
  };
  return {
    async create(options) {
      return open({ url: await url(), cluster: `t-${randomUUID()}`, ...options });
    },
    async peer(store) {
      const options = optionsOf.get(store);
      if (!options) throw new Error('not a store of this harness');
      return open(options);
    },
    async close() {
      await Promise.all(opened.map((s) => s.close()));
      await stop();
    },
  };
}
