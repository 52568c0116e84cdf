/** The embedded store: every port in this process's memory (one process only). */
import { type Clock, systemClock } from '../../shared/clock.ts';
import type { Store } from '../store.ts';
import { MemoryAudit } from './memory-audit.ts';
import { MemoryBackend } from './memory-backend.ts';
import { MemoryCounters } from './memory-counters.ts';
import { MemoryKeyvals } from './memory-keyvals.ts';
import { MemoryLeases } from './memory-leases.ts';
import { MemoryLimitSync } from './memory-limit-sync.ts';
import { MemoryRegistry } from './memory-registry.ts';

export interface MemoryStoreOptions {
  /** Change log length. Default 10000. */
  readonly maxLogEntries?: number;
  /** Audit entries kept. Default 1000. */
  readonly maxAuditEntries?: number;
  /** The store's clock (preconditions, heartbeats, leases). Default the system's. */
  readonly clock?: Clock;
}

export function openMemoryStore(options: MemoryStoreOptions = {}): Store {
  const clock = options.clock ?? systemClock;
  const backend = new MemoryBackend(() => clock.nowMs());
  const audit = new MemoryAudit(backend, options.maxAuditEntries);
  const keyvals = new MemoryKeyvals(backend, audit, options);
  const registry = new MemoryRegistry(backend);
  return {
    description: 'memory',
    keyvals,
    registry,
    counters: new MemoryCounters(backend),
    audit,
    leases: new MemoryLeases(backend),
    limitSync: new MemoryLimitSync(backend, (id) => registry.liveUntilMs(id)),
    async close() {
      backend.close();
      keyvals.close();
    },
  };
}
