/**
 * A `StoreHarness` over `RedisKeyvalStore`: each `create()` is a fresh cluster name (so a fresh, empty
 * keyspace) on the same Redis; `peer()` another client of the same cluster name.
 */
import { randomUUID } from 'node:crypto';
import { RedisKeyvalStore, type RedisKeyvalStoreOptions } from '../../src/store/redis-keyval-store.ts';
import type { StoreHarness } from './keyval-store.contract.ts';

export function redisHarness(url: () => Promise<string>, stop: () => Promise<void>): StoreHarness {
  const opened: RedisKeyvalStore[] = [];
  const optionsOf = new WeakMap<object, RedisKeyvalStoreOptions>();
  const open = (options: RedisKeyvalStoreOptions) => {
    const store = new RedisKeyvalStore(options);
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
