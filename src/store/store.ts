/**
 * A store backend as the rest of limitswitch sees it: six narrow ports over one shared state, opened
 * together by `openStore` (memory or Redis) and closed together. Each consumer takes only the ports
 * (or the halves of them) it uses.
 */
import type { AuditTrail } from './audit-trail.ts';
import type { ClusterRegistry } from './cluster-registry.ts';
import type { CounterStore } from './counter-store.ts';
import type { KeyvalStore } from './keyval-store.ts';
import type { LeaseStore } from './lease-store.ts';
import type { LimitSyncStore } from './limit-sync-store.ts';

export interface StorePorts {
  readonly keyvals: KeyvalStore;
  readonly registry: ClusterRegistry;
  readonly counters: CounterStore;
  readonly audit: AuditTrail;
  readonly leases: LeaseStore;
  readonly limitSync: LimitSyncStore;
}

export interface Store extends StorePorts {
  /** What the store is, for logs and banners: `memory` or the URL without its password. */
  readonly description: string;
  close(): Promise<void>;
}
