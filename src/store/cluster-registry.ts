/**
 * The cluster registry port: which keyval zones exist (registered by replicas and control planes)
 * and which replicas run (their heartbeats). Every backend passes
 * `test/store/contracts/registry.contract.ts`.
 */
import type { KeyvalType } from '../engine/keyval/keyval-zone.ts';
import type { ZoneSyncInfo } from '../engine/limit-req/zone-sync-info.ts';
import type { PriorityLevelInfo } from '../engine/priority/priority-level.ts';
import type { UpstreamInfo } from '../engine/upstream/upstream-info.ts';

/** A zone as the config declares it; registered by replicas and control planes. */
export interface KeyvalZoneInfo {
  readonly name: string;
  readonly type: KeyvalType;
  /** `timeout=`; `null` when per-key `expire` is not allowed. */
  readonly timeoutMs: number | null;
  /** `zone=name:size`: what its entries may take; `null` when not known (no bound is enforced). */
  readonly sizeBytes: number | null;
}

/** What a replica reports about itself every heartbeat. */
export interface ReplicaInfo {
  readonly id: string;
  readonly version: string;
  readonly configHash: string;
  /**
   * The same hash with every server's listen addresses (host and port) and the file:line each
   * directive came from left out: replicas of one configuration that listen on other ports or read it
   * from other files report the same one (absent in records of replicas from before it).
   */
  readonly configHashWithoutListen?: string;
  readonly appliedRevision: number;
  /** The commit id of `appliedRevision`: tells the store's history from another at the same revision. */
  readonly appliedCommit: string;
  readonly startedAtMs: number;
  /** Zones of the config this replica runs (so the control plane knows zone names and types). */
  readonly keyvalZones: readonly KeyvalZoneInfo[];
  readonly limitReqZones: readonly string[];
  /** Its limit_conn zones (absent in records of replicas from before limit_conn). */
  readonly limitConnZones?: readonly string[];
  /** The replica's cluster-wide limits (`limit_req_zone … sync`), when it runs any. */
  readonly zoneSync?: ZoneSyncInfo | null;
  /** Its `upstream` blocks: servers' load and queues (absent in records of replicas from before). */
  readonly upstreams?: readonly UpstreamInfo[];
  /** Its priority levels (API Priority and Fairness), when it runs any. */
  readonly priorityLevels?: readonly PriorityLevelInfo[];
}

export interface ReplicaRecord extends ReplicaInfo {
  readonly lastHeartbeatMs: number;
  /** False once the heartbeat TTL has passed or the replica deregistered. */
  readonly live: boolean;
}

/** Reading the registry. */
export interface RegistryReader {
  /** Zones known to the cluster (union of what replicas and control planes registered), by name. */
  zones(): Promise<KeyvalZoneInfo[]>;
  /**
   * Every replica ever registered (gone ones too, so their counters stay attributable), by id; live
   * or not by the store's clock, as heartbeats are written, whatever the reader's clock says.
   */
  replicas(): Promise<ReplicaRecord[]>;
}

/** Writing to the registry. */
export interface RegistryWriter {
  registerZones(zones: readonly KeyvalZoneInfo[]): Promise<void>;
  /** This replica is live for `ttlMs` from now (the store's clock). */
  heartbeat(info: ReplicaInfo, ttlMs: number): Promise<void>;
  /** Not live any more; the record stays. */
  deregister(id: string): Promise<void>;
}

export interface ClusterRegistry extends RegistryReader, RegistryWriter {}
