/**
 * The one narrow store interface. Two implementations: `MemoryKeyvalStore` (the embedded default, one
 * process) and `RedisKeyvalStore` (ioredis: standalone, Sentinel, Cluster). Both pass
 * `test/store/keyval-store.contract.ts`.
 *
 * Invariants:
 * - Every mutation is atomic: it checks its precondition, writes, bumps the one store-wide revision,
 *   appends one entry to the bounded change log and notifies subscribers — or does nothing and throws.
 * - Revisions start at 0 (empty store) and increase by exactly 1 per successful mutation, so a
 *   subscriber that sees revision r+2 after r knows it missed one.
 * - Times are wall-clock epoch milliseconds (`Date.now()` of the writer); replicas expire keys locally
 *   by `expireAtMs`, and `expireDue` removes them from the store exactly once.
 */
import type { KeyvalZoneType } from '../config/model.ts';

export type { KeyvalZoneType };

/** A zone as the config declares it; registered by replicas and control planes. */
export interface KeyvalZoneInfo {
  readonly name: string;
  readonly type: KeyvalZoneType;
  /** `timeout=`; `null` when per-key `expire` is not allowed. */
  readonly timeoutMs: number | null;
}

export interface KeyvalEntry {
  readonly value: string;
  /** Absolute epoch ms; `null` never expires. */
  readonly expireAtMs: number | null;
}

/** One change, as stored in the change log and published to subscribers. */
export type KeyvalChange =
  | {
      readonly revision: number;
      readonly op: 'set';
      readonly zone: string;
      readonly key: string;
      readonly value: string;
      readonly expireAtMs: number | null;
    }
  | { readonly revision: number; readonly op: 'delete'; readonly zone: string; readonly key: string }
  /** Several keys written at once (POST of many keys into an empty zone). */
  | {
      readonly revision: number;
      readonly op: 'set-many';
      readonly zone: string;
      readonly entries: Readonly<Record<string, KeyvalEntry>>;
    }
  | { readonly revision: number; readonly op: 'empty'; readonly zone: string }
  /** Keys removed by `expireDue` (their time had come). */
  | {
      readonly revision: number;
      readonly op: 'expire';
      readonly zone: string;
      readonly keys: readonly string[];
    };

export interface KeyvalSnapshot {
  readonly revision: number;
  /**
   * The store's identity: a new random id whenever the store starts from nothing (e.g. Redis restarted
   * without persistence), so a replica never mixes revisions of two histories.
   */
  readonly epoch?: string;
  /** zone → key → entry. Zones with no keys may be absent. */
  readonly zones: Readonly<Record<string, Readonly<Record<string, KeyvalEntry>>>>;
}

/** The outcome of a mutation: the new revision and what the key(s) held before (for the audit trail). */
export interface MutationResult {
  readonly revision: number;
  /** key → previous value (`null` = absent). Empty for `expireDue` (keys span zones: see `expired`). */
  readonly previous: Readonly<Record<string, string | null>>;
  /** `expireDue` only: zone → key → the value that expired. */
  readonly expired?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** The store's current position: its revision within its epoch (see `KeyvalSnapshot.epoch`). */
export interface KeyvalHead {
  readonly revision: number;
  readonly epoch: string;
}

/** The five NGINX Plus limit_req counters. */
export interface LimitReqCounters {
  passed: number;
  delayed: number;
  rejected: number;
  delayed_dry_run: number;
  rejected_dry_run: number;
}

/** What a replica reports about itself every heartbeat. */
export interface ReplicaInfo {
  readonly id: string;
  readonly version: string;
  readonly configHash: string;
  readonly appliedRevision: number;
  readonly startedAtMs: number;
  /** Zones of the config this replica runs (so the control plane knows zone names and types). */
  readonly keyvalZones: readonly KeyvalZoneInfo[];
  readonly limitReqZones: readonly string[];
}

export interface ReplicaRecord extends ReplicaInfo {
  readonly lastHeartbeatMs: number;
  /** False once the heartbeat TTL has passed or the replica deregistered. */
  readonly live: boolean;
}

export interface AuditEntry {
  readonly timeMs: number;
  readonly tokenId: string | null;
  readonly client: string;
  readonly zone: string;
  readonly key: string | null;
  readonly old: string | null;
  readonly new: string | null;
  readonly revision: number;
  readonly reason: string | null;
}

export type Unsubscribe = () => Promise<void>;

/**
 * Precondition failures throw `LimitswitchError` with the NGINX Plus code:
 * `KeyvalKeyExists` (add), `KeyvalKeyNotFound` (change/delete a missing key),
 * `KeyvalFormatError` with text `only one key can be added` (several keys into a non-empty zone).
 * An unreachable store throws `RL_ERR_STORE_UNAVAILABLE` within `commandTimeoutMs`.
 */
export interface KeyvalStore {
  // ---- keyvals -------------------------------------------------------------------------------
  /** POST: add keys; several only into an empty zone; fails if any key exists. */
  add(zone: string, entries: Readonly<Record<string, KeyvalEntry>>): Promise<MutationResult>;
  /** PATCH: change an existing key's value/expiry. */
  change(zone: string, key: string, entry: KeyvalEntry): Promise<MutationResult>;
  /** Upsert (alert automation). */
  set(zone: string, key: string, entry: KeyvalEntry): Promise<MutationResult>;
  /** PATCH with `null`: delete an existing key. */
  delete(zone: string, key: string): Promise<MutationResult>;
  /** DELETE: empty the zone (succeeds on an empty zone, still bumps the revision). */
  empty(zone: string): Promise<MutationResult>;
  /**
   * Remove every key with `expireAtMs <= nowMs`, exactly once across concurrent callers. One `expire`
   * change (one revision) per zone that had due keys; the result carries the last revision, or `null`
   * when nothing was due.
   */
  expireDue(nowMs: number): Promise<MutationResult | null>;

  /** One zone's live entries (keys past their expiry are left out). */
  getZone(zone: string, nowMs: number): Promise<Record<string, KeyvalEntry>>;
  /** Everything with its revision, read atomically. */
  snapshot(): Promise<KeyvalSnapshot>;
  revision(): Promise<number>;
  /** Revision and epoch, read together (the replica's periodic check). */
  head(): Promise<KeyvalHead>;
  /**
   * Changes with revision > `afterRevision`, in order; `null` when the bounded log no longer reaches
   * back that far (the caller must reload the snapshot).
   */
  changesSince(afterRevision: number): Promise<KeyvalChange[] | null>;
  /**
   * Live notifications. Resolves once the subscription is active, so a snapshot read afterwards
   * cannot miss a change. Delivery is best effort; gaps are detected by revision. `epoch` tells which
   * history the change belongs to (see `KeyvalSnapshot.epoch`).
   */
  subscribe(onChange: (change: KeyvalChange, epoch: string) => void): Promise<Unsubscribe>;

  // ---- zones registry --------------------------------------------------------------------------
  /** Zones known to the cluster (union of what replicas and control planes registered). */
  registerZones(zones: readonly KeyvalZoneInfo[]): Promise<void>;
  zones(): Promise<KeyvalZoneInfo[]>;

  // ---- replicas --------------------------------------------------------------------------------
  heartbeat(info: ReplicaInfo, ttlMs: number): Promise<void>;
  deregister(id: string): Promise<void>;
  /** Every replica ever registered (gone ones too, so their counters stay attributable). */
  replicas(nowMs: number): Promise<ReplicaRecord[]>;

  // ---- counters --------------------------------------------------------------------------------
  /** Add one replica's counter deltas (zone → deltas), atomically. */
  addCounters(replicaId: string, deltas: Readonly<Record<string, LimitReqCounters>>): Promise<void>;
  /** replica id → zone → totals. */
  counters(): Promise<Record<string, Record<string, LimitReqCounters>>>;
  /** DELETE /limit_reqs/{zone}: reset one zone's counters on every replica record. */
  resetCounters(zone: string): Promise<void>;

  // ---- audit -----------------------------------------------------------------------------------
  appendAudit(entry: AuditEntry): Promise<void>;
  /** Newest first. */
  audit(limit: number): Promise<AuditEntry[]>;

  close(): Promise<void>;
}

export function emptyCounters(): LimitReqCounters {
  return { passed: 0, delayed: 0, rejected: 0, delayed_dry_run: 0, rejected_dry_run: 0 };
}
