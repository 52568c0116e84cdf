/**
 * The one factory for a store: `--redis URL` (standalone, Sentinel, Cluster) or, without a URL, the
 * embedded memory store (one process only).
 */
import { openMemoryStore } from './memory/open-memory-store.ts';
import type { KeySchemaOptions } from './redis/keys.ts';
import { openRedisStore } from './redis/open-redis-store.ts';
import type { Store } from './store.ts';

export interface StoreOptions extends KeySchemaOptions {
  /** A Redis URL; absent: the memory store. */
  readonly url?: string;
}

export function openStore(options: StoreOptions = {}): Store {
  return options.url ? openRedisStore({ ...options, url: options.url }) : openMemoryStore();
}
