/**
 * The keyvals port in this process's memory: the embedded default (`limitswitch demo`, one process
 * running control plane and replicas), and the reference the Redis backend is tested against.
 */
import { randomUUID } from 'node:crypto';
import { compareText, put } from '../../shared/dictionary.ts';
import { type AuditNote, auditEntries } from '../audit-trail.ts';
import { entryBytes, zoneBudgetBytes } from '../keyval-bytes.ts';
import { keyExistsError, keyNotFoundError, onlyOneKeyError, zoneFullError } from '../keyval-errors.ts';
import type {
  KeyvalChange,
  KeyvalChangeBody,
  KeyvalEntry,
  KeyvalHead,
  KeyvalSnapshot,
  KeyvalStore,
  MutationResult,
  Unsubscribe,
  WriteOptions,
} from '../keyval-store.ts';
import type { MemoryAudit } from './memory-audit.ts';
import type { MemoryBackend } from './memory-backend.ts';

export interface MemoryKeyvalsOptions {
  /** Change log length; `changesSince` further back answers `null`. Default 10000. */
  readonly maxLogEntries?: number;
}

type Changed = { key: string; old: string | null; new: string | null };

export class MemoryKeyvals implements KeyvalStore {
  readonly #backend: MemoryBackend;
  readonly #audit: MemoryAudit;
  readonly #maxLog: number;
  readonly #epoch = randomUUID();
  readonly #zones = new Map<string, Map<string, KeyvalEntry>>();
  readonly #log: KeyvalChange[] = [];
  readonly #subscribers = new Set<(change: KeyvalChange, epoch: string) => void>();
  #revision = 0;
  #commit = '';

  constructor(backend: MemoryBackend, audit: MemoryAudit, options: MemoryKeyvalsOptions = {}) {
    this.#backend = backend;
    this.#audit = audit;
    this.#maxLog = options.maxLogEntries ?? 10_000;
  }

  async add(
    zone: string,
    entries: Readonly<Record<string, KeyvalEntry>>,
    options: WriteOptions = {},
  ): Promise<MutationResult> {
    this.#backend.assertOpen();
    const keys = Object.keys(entries);
    const nowMs = this.#backend.nowMs();
    const current = this.#zones.get(zone);
    const liveCount = current ? [...current.values()].filter((e) => isLive(e, nowMs)).length : 0;
    if (keys.length > 1 && liveCount > 0) throw onlyOneKeyError(zone);
    for (const key of keys) {
      const existing = current?.get(key);
      if (existing && isLive(existing, nowMs)) throw keyExistsError(key);
    }
    this.#checkRoom(zone, entries, options.sizeBytes);
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
    const body: KeyvalChangeBody =
      only !== null
        ? { op: 'set', zone, key: only, value: copy[only]!.value, expireAtMs: copy[only]!.expireAtMs }
        : { op: 'set-many', zone, entries: copy };
    const changed = keys.map((key) => ({ key, old: null, new: copy[key]!.value }));
    const revision = this.#record(body, options.note, changed);
    return { revision, commit: this.#commit, previous };
  }

  async change(
    zone: string,
    key: string,
    entry: KeyvalEntry,
    options: WriteOptions = {},
  ): Promise<MutationResult> {
    this.#backend.assertOpen();
    const existing = this.#zones.get(zone)?.get(key);
    if (!existing || !isLive(existing, this.#backend.nowMs())) throw keyNotFoundError();
    return this.#write(zone, key, entry, existing.value, options);
  }

  async set(
    zone: string,
    key: string,
    entry: KeyvalEntry,
    options: WriteOptions = {},
  ): Promise<MutationResult> {
    this.#backend.assertOpen();
    const existing = this.#zones.get(zone)?.get(key);
    const previous = existing && isLive(existing, this.#backend.nowMs()) ? existing.value : null;
    return this.#write(zone, key, entry, previous, options);
  }

  async delete(zone: string, key: string, { note }: WriteOptions = {}): Promise<MutationResult> {
    this.#backend.assertOpen();
    const map = this.#zones.get(zone);
    const existing = map?.get(key);
    if (!map || !existing || !isLive(existing, this.#backend.nowMs())) throw keyNotFoundError();
    map.delete(key);
    const revision = this.#record({ op: 'delete', zone, key }, note, [
      { key, old: existing.value, new: null },
    ]);
    return { revision, commit: this.#commit, previous: { [key]: existing.value } };
  }

  async empty(zone: string, { note }: WriteOptions = {}): Promise<MutationResult> {
    this.#backend.assertOpen();
    const map = this.#zones.get(zone);
    const previous: Record<string, string | null> = {};
    const changed: Changed[] = [];
    for (const [key, entry] of map ?? []) {
      put(previous, key, entry.value);
      changed.push({ key, old: entry.value, new: null });
    }
    this.#zones.delete(zone);
    const revision = this.#record({ op: 'empty', zone }, note, changed);
    return { revision, commit: this.#commit, previous };
  }

  async expireDue(nowMs: number): Promise<MutationResult | null> {
    this.#backend.assertOpen();
    const expired: Record<string, Record<string, string>> = {};
    let revision = -1;
    for (const [zone, map] of [...this.#zones].sort(([a], [b]) => compareText(a, b))) {
      const due = [...map].filter(([, e]) => e.expireAtMs !== null && e.expireAtMs <= nowMs);
      if (due.length === 0) continue;
      expired[zone] = {};
      for (const [key, entry] of due) {
        put(expired[zone], key, entry.value);
        map.delete(key);
      }
      if (map.size === 0) this.#zones.delete(zone);
      revision = this.#record({ op: 'expire', zone, keys: due.map(([key]) => key) }, undefined, []);
    }
    return revision < 0 ? null : { revision, commit: this.#commit, previous: {}, expired };
  }

  async restore(
    zones: Readonly<Record<string, Readonly<Record<string, KeyvalEntry>>>>,
    note: AuditNote,
  ): Promise<MutationResult | null> {
    this.#backend.assertOpen();
    if (this.#revision !== 0) return null;
    let revision = 0;
    for (const zone of Object.keys(zones).sort(compareText)) {
      const entries = zones[zone]!;
      const keys = Object.keys(entries);
      if (keys.length === 0) continue;
      const map = this.#zoneMap(zone);
      const copy: Record<string, KeyvalEntry> = {};
      for (const key of keys) {
        const stored = { value: entries[key]!.value, expireAtMs: entries[key]!.expireAtMs };
        put(copy, key, stored);
        map.set(key, stored);
      }
      const changed = keys.map((key) => ({ key, old: null, new: copy[key]!.value }));
      revision = this.#record({ op: 'set-many', zone, entries: copy }, note, changed);
    }
    return revision === 0 ? null : { revision, commit: this.#commit, previous: {} };
  }

  async getZone(zone: string, nowMs: number): Promise<Record<string, KeyvalEntry>> {
    this.#backend.assertOpen();
    const out: Record<string, KeyvalEntry> = {};
    for (const [key, entry] of this.#zones.get(zone) ?? []) {
      if (isLive(entry, nowMs)) put(out, key, { ...entry });
    }
    return out;
  }

  async snapshot(): Promise<KeyvalSnapshot> {
    this.#backend.assertOpen();
    const zones: Record<string, Record<string, KeyvalEntry>> = {};
    for (const [zone, map] of this.#zones) {
      if (map.size === 0) continue;
      zones[zone] = {};
      for (const [key, entry] of map) put(zones[zone], key, { ...entry });
    }
    return { revision: this.#revision, commit: this.#commit, epoch: this.#epoch, zones };
  }

  async head(): Promise<KeyvalHead> {
    this.#backend.assertOpen();
    return { revision: this.#revision, epoch: this.#epoch, commit: this.#commit };
  }

  async commitAt(revision: number): Promise<string | null> {
    this.#backend.assertOpen();
    if (revision === 0) return '';
    const first = this.#log[0];
    if (!first || revision < first.revision || revision > this.#revision) return null;
    return this.#log[revision - first.revision]!.commit;
  }

  async changesSince(afterRevision: number): Promise<KeyvalChange[] | null> {
    this.#backend.assertOpen();
    if (afterRevision >= this.#revision) return afterRevision === this.#revision ? [] : null;
    const first = this.#log[0];
    if (!first || first.revision > afterRevision + 1) return null;
    return this.#log.slice(afterRevision + 1 - first.revision);
  }

  async subscribe(onChange: (change: KeyvalChange, epoch: string) => void): Promise<Unsubscribe> {
    this.#backend.assertOpen();
    this.#subscribers.add(onChange);
    return async () => {
      this.#subscribers.delete(onChange);
    };
  }

  /** Drop every subscriber (the store is closing). */
  close(): void {
    this.#subscribers.clear();
  }

  #write(
    zone: string,
    key: string,
    entry: KeyvalEntry,
    previous: string | null,
    options: WriteOptions,
  ): MutationResult {
    this.#checkRoom(zone, { [key]: entry }, options.sizeBytes);
    const note = options.note;
    const copy = { value: entry.value, expireAtMs: entry.expireAtMs };
    this.#zoneMap(zone).set(key, copy);
    const body: KeyvalChangeBody = { op: 'set', zone, key, value: copy.value, expireAtMs: copy.expireAtMs };
    const revision = this.#record(body, note, [{ key, old: previous, new: copy.value }]);
    return { revision, commit: this.#commit, previous: { [key]: previous } };
  }

  /**
   * Bump the revision, log the change with a new commit id, audit it, and notify (asynchronously, in
   * order, like pub/sub).
   */
  #record(body: KeyvalChangeBody, note: AuditNote | undefined, changed: readonly Changed[]): number {
    this.#revision += 1;
    const parent = this.#commit;
    this.#commit = randomUUID();
    const change: KeyvalChange = { revision: this.#revision, commit: this.#commit, parent, ...body };
    this.#log.push(change);
    if (this.#log.length > this.#maxLog) this.#log.splice(0, this.#log.length - this.#maxLog);
    if (note)
      for (const entry of auditEntries(note, body.zone, this.#revision, changed)) this.#audit.push(entry);
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

  /** `KeyvalZoneFull` unless the zone's entries, `entries` replacing any of the same keys, fit in `sizeBytes`. */
  #checkRoom(
    zone: string,
    entries: Readonly<Record<string, KeyvalEntry>>,
    sizeBytes: number | null | undefined,
  ): void {
    if (sizeBytes === null || sizeBytes === undefined) return;
    let used = 0;
    for (const [key, stored] of this.#zones.get(zone) ?? []) {
      if (!Object.hasOwn(entries, key)) used += entryBytes(key, stored.value);
    }
    for (const [key, entry] of Object.entries(entries)) used += entryBytes(key, entry.value);
    if (used > zoneBudgetBytes(sizeBytes)) throw zoneFullError(zone);
  }

  #zoneMap(zone: string): Map<string, KeyvalEntry> {
    let map = this.#zones.get(zone);
    if (!map) {
      map = new Map();
      this.#zones.set(zone, map);
    }
    return map;
  }
}

function isLive(entry: KeyvalEntry, nowMs: number): boolean {
  return entry.expireAtMs === null || entry.expireAtMs > nowMs;
}
