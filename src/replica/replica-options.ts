/**
 * What a replica is made from: its configuration, the store ports it uses, and the process's
 * choices (ports, state file, intervals, the callbacks of its logs and metrics).
 */
import type { Config } from '../config/model.ts';
import type { Clock } from '../shared/clock.ts';
import type { AuditTrail } from '../store/audit-trail.ts';
import type { RegistryReader, RegistryWriter } from '../store/cluster-registry.ts';
import type { CounterStore } from '../store/counter-store.ts';
import type { KeyvalFeed, KeyvalWriter } from '../store/keyval-store.ts';
import type { LeaseStore } from '../store/lease-store.ts';
import type { LimitSyncStore } from '../store/limit-sync-store.ts';
import type { StoreResetPolicy } from './cluster/store-reset.ts';
import type { CallbackKind } from './http/contract/fault-boundary.ts';
import type { LoggedRequest, ResponseFacts } from './logs/access-log.ts';
import type { ErrorLog } from './logs/error-log.ts';
import type { ProcessLog } from './logs/process-log.ts';

/**
 * The store ports a replica uses: it follows the switches (and writes them back after a store
 * reset), reports itself (and counts the live replicas for cluster-wide limits), adds its counters,
 * records a dropped reset once, and exchanges its synced zones' buckets.
 */
export interface ReplicaStore {
  readonly keyvals: KeyvalFeed & Pick<KeyvalWriter, 'restore'>;
  readonly registry: RegistryWriter & Pick<RegistryReader, 'replicas'>;
  readonly limitSync: Pick<LimitSyncStore, 'exchange'>;
  readonly counters: Pick<CounterStore, 'add' | 'resets'>;
  readonly audit: Pick<AuditTrail, 'append'>;
  readonly leases: Pick<LeaseStore, 'acquire'>;
}

export interface ReplicaOptions {
  readonly id: string;
  readonly config: Config;
  readonly store: ReplicaStore;
  /** Listen address for every port, instead of each `listen`'s own (default: the listen's, else all). */
  readonly host?: string;
  /** Replace the config's listen ports (tests, demo): config port → actual port (0 = any free one). */
  readonly portMap?: ReadonlyMap<number, number>;
  /** The state file: applied switches (fail-static start) and counter batches not yet flushed. */
  readonly stateFile?: string;
  /** What a store that came back empty does to the switches held here. Default `restore`. */
  readonly storeReset?: StoreResetPolicy;
  readonly errorLog?: ErrorLog;
  /** Wall clock of the engine, key expiry, heartbeats and the state file. Default the system's. */
  readonly clock?: Clock;
  readonly flushIntervalMs?: number;
  /** How often synced zones exchange with the store (default 100 ms). */
  readonly limitSyncIntervalMs?: number;
  readonly heartbeatIntervalMs?: number;
  readonly heartbeatTtlMs?: number;
  /** Called for every finished exchange (access log, latency metrics). */
  readonly onCompleted?: (req: LoggedRequest, outcome: ResponseFacts) => void;
  /** A client went away while held or forwarded (nginx 499). */
  readonly onClientClosed?: (phase: string) => void;
  /** A data path callback threw and its connection was ended (http/fault-boundary.ts). */
  readonly onDataPathFault?: (kind: CallbackKind) => void;
  /** Structured events (reload errors, store trouble) for the process log. */
  readonly log?: ProcessLog;
}
