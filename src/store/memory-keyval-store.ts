/**
 * The embedded store: everything in this process's memory. The default when one process runs both
 * the control plane and the replica; also the reference the Redis store is tested against.
 */
import { randomUUID } from 'node:crypto';
import { put } from '../shared/dictionary.ts';
import {
  keyExistsError,
  keyNotFoundError,
  keyRequiredError,
  onlyOneKeyError,
  storeUnavailableError,
} from './keyval-errors.ts';
import {
  type AuditEntry,
  emptyCounters,
  type KeyvalChange,
  type KeyvalEntry,
  type KeyvalHead,
  type KeyvalSnapshot,
  type KeyvalStore,
  type KeyvalZoneInfo,
  type LimitReqCounters,
  type MutationResult,
  type ReplicaInfo,
  type ReplicaRecord,
  type Unsubscribe,
} from './keyval-store.ts';

export interface MemoryKeyvalStoreOptions {
  /** Change log length; `changesSince` further back answers `null`. Default 10000. */
  readonly maxLogEntries?: number;
  /** Audit entries kept. Default 1000. */
  readonly maxAuditEntries?: number;
  /** Wall clock for preconditions (is a key still live?) and heartbeats. Default `Date.now`. */
  readonly nowMs?: () => number;
}

type ChangeBody = KeyvalChange extends infer C
  ? C extends KeyvalChange
    ? Omit<C, 'revision'>
    : never
  : never;

interface ReplicaSlot {
  info: ReplicaInfo;
  lastHeartbeatMs: number;
  expiresAtMs: number;
}

/** `KeyvalStore` in memory; one process. */
export class MemoryKeyvalStore implements KeyvalStore {
  readonly #maxLog: number;
  readonly #maxAudit: number;
  readonly #now: () => number;
  readonly #epoch = randomUUID();
  readonly #zones = new Map<string, Map<string, KeyvalEntry>>();
  readonly #log: KeyvalChange[] = [];
  readonly #subscribers = new Set<(change: KeyvalChange, epoch: string) => void>();
  readonly #registry = new Map<string, KeyvalZoneInfo>();
  readonly #replicas = new Map<string, ReplicaSlot>();
  readonly #counters = new Map<string, Map<string, LimitReqCounters>>();
  #audit: AuditEntry[] = [];
  #revision = 0;
  #closed = false;

  constructor(options: MemoryKeyvalStoreOptions = {}) {
    this.#maxLog = options.maxLogEntries ?? 10_000;
    this.#maxAudit = options.maxAuditEntries ?? 1000;
    this.#now = options.nowMs ?? Date.now;
  }

  async add(zone: string, entries: Readonly<Record<string, KeyvalEntry>>): Promise<MutationResult> {
    this.#open();
    const keys = Object.keys(entries);
    if (keys.length === 0 || keys.includes('')) throw keyRequiredError();
    const nowMs = this.#now();
    const current = this.#zones.get(zone);
    const liveCount = current ? [...current.values()].filter((e) => isLive(e, nowMs)).length : 0;
    if (keys.length > 1 && liveCount > 0) throw onlyOneKeyError();
    for (const key of keys) {
      const existing = current?.get(key);
      if (existing && isLive(existing, nowMs)) throw keyExistsError(key);
    }
    const map = this.#zoneMap(zone);
    const previous: Record<string, string | null> = {};
    const copy: Record<string, KeyvalEntry> = {};
    for (const key of keys) {
      const entry = entries[key]!;
      const stored = { value: entry.value, expireAtMs: entry.expireAtMs };
      put(copy, key, stored);
      map.set(key, stored);
      put(previous, key, null);
    }
    const only = keys.length === 1 ? keys[0]! : null;
    const body: ChangeBody =
      only !== null
        ? { op: 'set', zone, key: only, value: copy[only]!.value, expireAtMs: copy[only]!.expireAtMs }
        : { op: 'set-many', zone, entries: copy };
    return { revision: this.#commit(body), previous };
  }

  async change(zone: string, key: string, entry: KeyvalEntry): Promise<MutationResult> {
    this.#open();
    const existing = this.#zones.get(zone)?.get(key);
    if (!existing || !isLive(existing, this.#now())) throw keyNotFoundError();
    return this.#write(zone, key, entry, existing.value);
  }

  async set(zone: string, key: string, entry: KeyvalEntry): Promise<MutationResult> {
    this.#open();
    if (key === '') throw keyRequiredError();
    const existing = this.#zones.get(zone)?.get(key);
    const previous = existing && isLive(existing, this.#now()) ? existing.value : null;
    return this.#write(zone, key, entry, previous);
  }

  async delete(zone: string, key: string): Promise<MutationResult> {
    this.#open();
    const map = this.#zones.get(zone);
    const existing = map?.get(key);
    if (!map || !existing || !isLive(existing, this.#now())) throw keyNotFoundError();
    map.delete(key);
    return { revision: this.#commit({ op: 'delete', zone, key }), previous: { [key]: existing.value } };
  }

  async empty(zone: string): Promise<MutationResult> {
    this.#open();
    const map = this.#zones.get(zone);
    const previous: Record<string, string | null> = {};
    for (const [key, entry] of map ?? []) put(previous, key, entry.value);
    this.#zones.delete(zone);
    return { revision: this.#commit({ op: 'empty', zone }), previous };
  }

  async expireDue(nowMs: number): Promise<MutationResult | null> {
    this.#open();
    const expired: Record<string, Record<string, string>> = {};
    let revision = -1;
    for (const [zone, map] of [...this.#zones].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      const due = [...map].filter(([, e]) => e.expireAtMs !== null && e.expireAtMs <= nowMs);
      if (due.length === 0) continue;
      expired[zone] = {};
      for (const [key, entry] of due) {
        put(expired[zone], key, entry.value);
        map.delete(key);
      }
      if (map.size === 0) this.#zones.delete(zone);
      revision = this.#commit({ op: 'expire', zone, keys: due.map(([key]) => key) });
    }
    return revision < 0 ? null : { revision, previous: {}, expired };
  }

  async getZone(zone: string, nowMs: number): Promise<Record<string, KeyvalEntry>> {
    this.#open();
    const out: Record<string, KeyvalEntry> = {};
    for (const [key, entry] of this.#zones.get(zone) ?? []) {
      if (isLive(entry, nowMs)) put(out, key, { ...entry });
    }
    return out;
  }

  async snapshot(): Promise<KeyvalSnapshot> {
    this.#open();
    const zones: Record<string, Record<string, KeyvalEntry>> = {};
    for (const [zone, map] of this.#zones) {
      if (map.size === 0) continue;
      zones[zone] = {};
      for (const [key, entry] of map) put(zones[zone], key, { ...entry });
    }
    return { revision: this.#revision, epoch: this.#epoch, zones };
  }

  async revision(): Promise<number> {
    this.#open();
    return this.#revision;
  }

  async head(): Promise<KeyvalHead> {
    this.#open();
    return { revision: this.#revision, epoch: this.#epoch };
  }

  async changesSince(afterRevision: number): Promise<KeyvalChange[] | null> {
    this.#open();
    if (afterRevision >= this.#revision) return afterRevision === this.#revision ? [] : null;
    const first = this.#log[0];
    if (!first || first.revision > afterRevision + 1) return null;
    return this.#log.slice(afterRevision + 1 - first.revision);
  }

  async subscribe(onChange: (change: KeyvalChange, epoch: string) => void): Promise<Unsubscribe> {
    this.#open();
    this.#subscribers.add(onChange);
    return async () => {
      this.#subscribers.delete(onChange);
    };
  }

  async registerZones(zones: readonly KeyvalZoneInfo[]): Promise<void> {
    this.#open();
    for (const zone of zones) this.#registry.set(zone.name, { ...zone });
  }

  async zones(): Promise<KeyvalZoneInfo[]> {
    this.#open();
    return [...this.#registry.values()].map((z) => ({ ...z })).sort((a, b) => compare(a.name, b.name));
  }

  async heartbeat(info: ReplicaInfo, ttlMs: number): Promise<void> {
    this.#open();
    const nowMs = this.#now();
    this.#replicas.set(info.id, {
      info: structuredClone(info),
      lastHeartbeatMs: nowMs,
      expiresAtMs: nowMs + ttlMs,
    });
  }

  async deregister(id: string): Promise<void> {
    this.#open();
    const slot = this.#replicas.get(id);
    if (slot) slot.expiresAtMs = Number.NEGATIVE_INFINITY;
  }

  async replicas(nowMs: number): Promise<ReplicaRecord[]> {
    this.#open();
    return [...this.#replicas.values()]
      .map((s) => ({
        ...structuredClone(s.info),
        lastHeartbeatMs: s.lastHeartbeatMs,
        live: nowMs < s.expiresAtMs,
      }))
      .sort((a, b) => compare(a.id, b.id));
  }

  async addCounters(replicaId: string, deltas: Readonly<Record<string, LimitReqCounters>>): Promise<void> {
    this.#open();
    let zones = this.#counters.get(replicaId);
    if (!zones) {
      zones = new Map();
      this.#counters.set(replicaId, zones);
    }
    for (const [zone, delta] of Object.entries(deltas)) {
      const total = zones.get(zone) ?? emptyCounters();
      for (const field of COUNTER_FIELDS) total[field] += delta[field];
      zones.set(zone, total);
    }
  }

  async counters(): Promise<Record<string, Record<string, LimitReqCounters>>> {
    this.#open();
    const out: Record<string, Record<string, LimitReqCounters>> = {};
    for (const [replicaId, zones] of this.#counters) {
      out[replicaId] = {};
      for (const [zone, total] of zones) out[replicaId][zone] = { ...total };
    }
    return out;
  }

  async resetCounters(zone: string): Promise<void> {
    this.#open();
    for (const zones of this.#counters.values()) {
      if (zones.has(zone)) zones.set(zone, emptyCounters());
    }
  }

  async appendAudit(entry: AuditEntry): Promise<void> {
    this.#open();
    this.#audit.unshift({ ...entry });
    if (this.#audit.length > this.#maxAudit) this.#audit = this.#audit.slice(0, this.#maxAudit);
  }

  async audit(limit: number): Promise<AuditEntry[]> {
    this.#open();
    return this.#audit.slice(0, Math.max(0, limit)).map((e) => ({ ...e }));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#subscribers.clear();
  }

  #write(zone: string, key: string, entry: KeyvalEntry, previous: string | null): MutationResult {
    const copy = { value: entry.value, expireAtMs: entry.expireAtMs };
    this.#zoneMap(zone).set(key, copy);
    const revision = this.#commit({ op: 'set', zone, key, value: copy.value, expireAtMs: copy.expireAtMs });
    return { revision, previous: { [key]: previous } };
  }

  /** Bump the revision, log the change and notify (asynchronously, in order, like pub/sub). */
  #commit(body: ChangeBody): number {
    this.#revision += 1;
    const change = { revision: this.#revision, ...body } as KeyvalChange;
    this.#log.push(change);
    if (this.#log.length > this.#maxLog) this.#log.splice(0, this.#log.length - this.#maxLog);
    const subscribers = [...this.#subscribers];
    queueMicrotask(() => {
      for (const notify of subscribers) {
        try {
          notify(structuredClone(change), this.#epoch);
        } catch {
          // A subscriber's failure is its own; the change is committed.
        }
      }
    });
    return this.#revision;
  }

  #zoneMap(zone: string): Map<string, KeyvalEntry> {
    let map = this.#zones.get(zone);
    if (!map) {
      map = new Map();
      this.#zones.set(zone, map);
    }
    return map;
  }

  #open(): void {
    if (this.#closed) throw storeUnavailableError(new Error('store closed'));
  }
}

const COUNTER_FIELDS = ['passed', 'delayed', 'rejected', 'delayed_dry_run', 'rejected_dry_run'] as const;

function isLive(entry: KeyvalEntry, nowMs: number): boolean {
  return entry.expireAtMs === null || entry.expireAtMs > nowMs;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
