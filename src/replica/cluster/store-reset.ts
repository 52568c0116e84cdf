/**
 * What a replica does when the store comes back empty under a new epoch (Redis restarted without
 * persistence, a wiped volume) while it holds switches: losing them because the store lost them is
 * never silent. `restore` (the default) writes this replica's live switches back — one atomic mutation
 * that only lands while the store is still empty, so the first replica wins and an operator's write
 * made after the reset is never overwritten; `follow` drops them, as the store says. Either way a
 * warning names the epochs and the count, a metric counts it, and the audit trail has an entry per
 * switch.
 */
import type { Clock } from '../../shared/clock.ts';
import { put } from '../../shared/dictionary.ts';
import type { AuditTrail } from '../../store/audit-trail.ts';
import type { KeyvalEntry, KeyvalWriter } from '../../store/keyval-store.ts';
import type { StoreReset } from '../../store/keyval-sync.ts';
import type { LeaseStore } from '../../store/lease-store.ts';

export type StoreResetPolicy = 'restore' | 'follow';

export const STORE_RESET_POLICIES: readonly StoreResetPolicy[] = ['restore', 'follow'];

/** Store resets this replica saw, by what came of them (the metric `limitswitch_store_resets_total`). */
export interface StoreResetCounts {
  /** This replica wrote its switches back. */
  restored: number;
  /** Another replica (or an operator's write) was first: this one follows the store. */
  restoredElsewhere: number;
  /** `follow`: the switches were dropped. */
  dropped: number;
}

export interface StoreResetDeps {
  readonly replicaId: string;
  readonly policy: StoreResetPolicy;
  readonly clock: Clock;
  readonly store: {
    readonly keyvals: Pick<KeyvalWriter, 'restore'>;
    readonly audit: Pick<AuditTrail, 'append'>;
    readonly leases: Pick<LeaseStore, 'acquire'>;
  };
  readonly counts: StoreResetCounts;
  log(level: 'warn', message: string, fields: Record<string, unknown>): void;
}

/** How long the lease that lets one replica record a dropped reset lives (one entry per reset). */
const RECORD_LEASE_MS = 24 * 3600_000;

export function storeResetHandler(deps: StoreResetDeps): (reset: StoreReset) => Promise<void> {
  return async (reset) => {
    const nowMs = deps.clock.nowMs();
    const live = liveSwitches(reset.zones, nowMs);
    const count = Object.values(live).reduce((n, keys) => n + Object.keys(keys).length, 0);
    const epochs = `epoch ${reset.fromEpoch ?? '(unknown)'} → ${reset.toEpoch}`;
    const fields = {
      fromEpoch: reset.fromEpoch,
      toEpoch: reset.toEpoch,
      switches: count,
      policy: deps.policy,
    };
    const note = { timeMs: nowMs, tokenId: null, client: `replica ${deps.replicaId}` };
    if (count === 0) {
      deps.log('warn', `keyval store came back empty (${epochs}); this replica held no live switch`, fields);
      return;
    }
    if (deps.policy === 'restore') {
      const reason = `store reset (${epochs}): restored from the state replica ${deps.replicaId} had applied`;
      const restored = await deps.store.keyvals.restore(live, { ...note, reason });
      if (restored) {
        deps.counts.restored++;
        deps.log(
          'warn',
          `keyval store came back empty (${epochs}): restored ${count} switches from this replica`,
          fields,
        );
      } else {
        deps.counts.restoredElsewhere++;
        deps.log(
          'warn',
          `keyval store came back empty (${epochs}): restored by another replica first; following the store`,
          fields,
        );
      }
      return;
    }
    deps.counts.dropped++;
    deps.log(
      'warn',
      `keyval store came back empty (${epochs}): ${count} switches dropped (--store-reset ${deps.policy})`,
      fields,
    );
    // One replica records the loss in the audit trail; the others only log it.
    if (!(await deps.store.leases.acquire(`store-reset/${reset.toEpoch}`, RECORD_LEASE_MS))) return;
    const reason = `store reset (${epochs}): dropped, as the empty store says (--store-reset follow)`;
    for (const [zone, keys] of Object.entries(live)) {
      for (const [key, entry] of Object.entries(keys)) {
        await deps.store.audit.append({
          ...note,
          reason,
          zone,
          key,
          old: entry.value,
          new: null,
          revision: 0,
        });
      }
    }
  };
}

function liveSwitches(
  zones: StoreReset['zones'],
  nowMs: number,
): Record<string, Record<string, KeyvalEntry>> {
  const out: Record<string, Record<string, KeyvalEntry>> = {};
  for (const [zone, entries] of Object.entries(zones)) {
    for (const [key, entry] of Object.entries(entries)) {
      if (entry.expireAtMs !== null && entry.expireAtMs <= nowMs) continue;
      out[zone] ??= {};
      put(out[zone]!, key, { value: entry.value, expireAtMs: entry.expireAtMs });
    }
  }
  return out;
}
