/** A store on Redis (standalone, Sentinel or Cluster): every port over one connection and key schema. */
import type { Store } from '../store.ts';
import { RedisAudit } from './redis-audit.ts';
import { RedisBackend, type RedisBackendOptions } from './redis-backend.ts';
import { redactUrl } from './redis-connection.ts';
import { RedisCounters } from './redis-counters.ts';
import { RedisKeyvals, type RedisKeyvalsOptions } from './redis-keyvals.ts';
import { RedisLeases } from './redis-leases.ts';
import { RedisLimitSync } from './redis-limit-sync.ts';
import { RedisRegistry } from './redis-registry.ts';

export interface RedisStoreOptions extends RedisBackendOptions, RedisKeyvalsOptions {}

/** Connects in the background; usable at once (commands wait for the connection, bounded). */
export function openRedisStore(options: RedisStoreOptions): Store & { readonly backend: RedisBackend } {
  const backend = new RedisBackend(options);
  return {
    description: redactUrl(options.url),
    backend,
    keyvals: new RedisKeyvals(backend, options),
    registry: new RedisRegistry(backend),
    counters: new RedisCounters(backend),
    audit: new RedisAudit(backend, options.maxAuditEntries),
    leases: new RedisLeases(backend),
    limitSync: new RedisLimitSync(backend),
    close: () => backend.close(),
  };
}
