/**
 * Applies the store's keyval state to the engine's keyval zones, in place and without a reload:
 * a snapshot replaces every zone's content, a change touches one zone. Zones the config does not
 * declare are ignored (another replica's config may have them). What was applied is published to the
 * zones' readers in other threads at once.
 */
import type { KeyvalZone } from '../../engine/keyval/keyval-zone.ts';
import type { KeyvalChange, KeyvalEntry, KeyvalSnapshot } from '../../store/keyval-store.ts';

type Zones = ReadonlyMap<string, KeyvalZone>;

export function applySnapshot(zones: Zones, snapshot: KeyvalSnapshot): void {
  for (const [name, zone] of zones) {
    const entries = snapshot.zones[name] ?? {};
    zone.replaceAll(Object.entries(entries).map(([key, entry]) => [key, toRecord(entry)]));
    zone.publish();
  }
}

export function applyChange(zones: Zones, change: KeyvalChange): void {
  const zone = zones.get(change.zone);
  if (zone === undefined) return;
  applyToZone(zone, change);
  zone.publish();
}

function applyToZone(zone: KeyvalZone, change: KeyvalChange): void {
  switch (change.op) {
    case 'set':
      zone.set(change.key, { value: change.value, expireAtMs: change.expireAtMs });
      return;
    case 'set-many':
      for (const [key, entry] of Object.entries(change.entries)) zone.set(key, toRecord(entry));
      return;
    case 'delete':
      zone.delete(change.key);
      return;
    case 'expire':
      for (const key of change.keys) zone.delete(key);
      return;
    case 'empty':
      zone.clear();
      return;
  }
}

function toRecord(entry: KeyvalEntry): { value: string; expireAtMs: number | null } {
  return { value: entry.value, expireAtMs: entry.expireAtMs };
}
