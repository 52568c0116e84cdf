/** Shared checks for the sync tests: a mirror equals its store; updates arrive strictly in order. */
import assert from 'node:assert/strict';
import type { KeyvalFeed, KeyvalSnapshot } from '../../src/store/keyval-store.ts';
import type { KeyvalSync, KeyvalSyncUpdate } from '../../src/store/keyval-sync.ts';

/** The mirror equals the store, revision and epoch included (false while the store is unreachable). */
export async function converged(sync: KeyvalSync, store: KeyvalFeed): Promise<boolean> {
  const truth = await store.snapshot().catch(() => null);
  return truth !== null && canonical(sync.snapshot()) === canonical(truth);
}

/** Each change update is the previous revision + 1 (a snapshot resets the count). */
export function assertInOrder(updates: readonly KeyvalSyncUpdate[]): void {
  let revision = -1;
  let epoch: string | undefined;
  for (const u of updates) {
    if (u.kind === 'snapshot') {
      revision = u.snapshot.revision;
      epoch = u.snapshot.epoch;
    } else {
      assert.equal(
        u.change.revision,
        revision + 1,
        `change ${u.change.revision} after ${revision} (${epoch})`,
      );
      revision = u.change.revision;
    }
  }
}

/** A snapshot as JSON with zones and keys sorted: order does not matter to equality. */
export function canonical(snapshot: KeyvalSnapshot): string {
  const zones: Record<string, Record<string, unknown>> = {};
  for (const zone of Object.keys(snapshot.zones).sort()) {
    const entries = snapshot.zones[zone]!;
    zones[zone] = {};
    for (const key of Object.keys(entries).sort()) zones[zone][key] = entries[key];
  }
  return JSON.stringify({ revision: snapshot.revision, epoch: snapshot.epoch ?? null, zones });
}
