/**
 * A replica's local copy of every keyval zone at one revision of one epoch, with the commit ids of
 * the revisions it went through lately (to tell its own history from another). Pure data: applying a
 * change, replacing everything with a snapshot, dropping expired keys. `KeyvalSync` decides what to
 * apply and when.
 */

import { put } from '../shared/dictionary.ts';
import type { KeyvalChange, KeyvalEntry, KeyvalSnapshot } from './keyval-store.ts';

/** How many revisions back the mirror remembers the commit ids of. */
const RECENT = 1024;

export class KeyvalMirror {
  #zones = new Map<string, Map<string, KeyvalEntry>>();
  #revision = 0;
  #commit = '';
  #epoch: string | null = null;
  /** revision → commit id of the last `RECENT` revisions applied (and the loaded one). */
  readonly #recent = new Map<number, string>();

  get revision(): number {
    return this.#revision;
  }

  /** The commit id of `revision` (`''` at 0, or when a state file did not record it). */
  get commit(): string {
    return this.#commit;
  }

  /** Whether (`revision`, `commit`) is a point of the history this mirror went through lately. */
  passedThrough(revision: number, commit: string): boolean {
    return this.#recent.get(revision) === commit;
  }

  /** `null` until a snapshot (from the store or the state file) was loaded. */
  get epoch(): string | null {
    return this.#epoch;
  }

  /** Replace everything. */
  load(snapshot: KeyvalSnapshot): void {
    this.#zones = new Map();
    for (const [zone, entries] of Object.entries(snapshot.zones)) {
      const map = new Map<string, KeyvalEntry>();
      for (const [key, entry] of Object.entries(entries)) map.set(key, { ...entry });
      if (map.size > 0) this.#zones.set(zone, map);
    }
    this.#revision = snapshot.revision;
    this.#commit = snapshot.commit ?? '';
    this.#epoch = snapshot.epoch ?? null;
    this.#recent.clear();
    this.#remember();
  }

  /** Apply the next change; the caller guarantees `change.revision === revision + 1`. */
  apply(change: KeyvalChange): void {
    switch (change.op) {
      case 'set':
        this.#zone(change.zone).set(change.key, { value: change.value, expireAtMs: change.expireAtMs });
        break;
      case 'set-many':
        for (const [key, entry] of Object.entries(change.entries))
          this.#zone(change.zone).set(key, { ...entry });
        break;
      case 'delete':
        this.#zones.get(change.zone)?.delete(change.key);
        break;
      case 'expire':
        for (const key of change.keys) this.#zones.get(change.zone)?.delete(key);
        break;
      case 'empty':
        this.#zones.delete(change.zone);
        break;
    }
    if (this.#zones.get(change.zone)?.size === 0) this.#zones.delete(change.zone);
    this.#revision = change.revision;
    this.#commit = change.commit;
    this.#remember();
  }

  /** Drop keys whose `expireAtMs <= nowMs`; zone → keys dropped. The revision stays. */
  pruneExpired(nowMs: number): Record<string, string[]> {
    const dropped: Record<string, string[]> = {};
    for (const [zone, map] of this.#zones) {
      for (const [key, entry] of map) {
        if (entry.expireAtMs !== null && entry.expireAtMs <= nowMs) {
          map.delete(key);
          dropped[zone] ??= [];
          dropped[zone].push(key);
        }
      }
      if (map.size === 0) this.#zones.delete(zone);
    }
    return dropped;
  }

  /** One zone's entries (a copy; expired ones included until pruned). */
  zone(name: string): Record<string, KeyvalEntry> {
    const out: Record<string, KeyvalEntry> = {};
    for (const [key, entry] of this.#zones.get(name) ?? []) put(out, key, { ...entry });
    return out;
  }

  /** Everything, as a snapshot (a copy). */
  snapshot(): KeyvalSnapshot {
    const zones: Record<string, Record<string, KeyvalEntry>> = {};
    for (const name of this.#zones.keys()) zones[name] = this.zone(name);
    const position = { revision: this.#revision, commit: this.#commit };
    return this.#epoch === null ? { ...position, zones } : { ...position, epoch: this.#epoch, zones };
  }

  #remember(): void {
    this.#recent.set(this.#revision, this.#commit);
    this.#recent.delete(this.#revision - RECENT);
  }

  #zone(name: string): Map<string, KeyvalEntry> {
    let map = this.#zones.get(name);
    if (!map) {
      map = new Map();
      this.#zones.set(name, map);
    }
    return map;
  }
}
