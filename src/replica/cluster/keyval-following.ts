/**
 * The replica's keyval sync (store/keyval-sync.ts) wired to its engine: the store's state and each
 * change go into the running configuration's keyval zones at once, without a reload
 * (keyval-applier.ts); a store that came back empty is answered as the policy says (store-reset.ts);
 * reloads of the store's state, and a start on the state file, are said in the process log.
 */
import type { Site } from '../../engine/http/site.ts';
import type { Clock } from '../../shared/clock.ts';
import type { KeyvalFeed } from '../../store/keyval-store.ts';
import { KeyvalSync, type Reload } from '../../store/keyval-sync.ts';
import type { StateFile } from '../../store/state-file.ts';
import type { ProcessLog } from '../logs/process-log.ts';
import { applyChange, applySnapshot } from './keyval-applier.ts';
import {
  type StoreResetCounts,
  type StoreResetDeps,
  type StoreResetPolicy,
  storeResetHandler,
} from './store-reset.ts';

export interface KeyvalFollowingOptions {
  readonly replicaId: string;
  readonly store: StoreResetDeps['store'] & { readonly keyvals: KeyvalFeed };
  readonly stateFile: StateFile | null;
  readonly storeReset: StoreResetPolicy;
  /** Store resets seen, by what came of them (counted here, read by the metrics). */
  readonly storeResets: StoreResetCounts;
  readonly clock: Clock;
  /** The site running now (a reload swaps it). */
  site(): Site;
  /** After each applied snapshot or change (the heartbeat tells the store at once). */
  onApplied(): void;
  readonly log: ProcessLog;
}

export function followKeyvals(options: KeyvalFollowingOptions): KeyvalSync {
  const { log } = options;
  const sync = new KeyvalSync({
    store: options.store.keyvals,
    stateFile: options.stateFile ?? undefined,
    onStoreReset: storeResetHandler({
      replicaId: options.replicaId,
      policy: options.storeReset,
      clock: options.clock,
      store: options.store,
      counts: options.storeResets,
      log: (level, message, fields) => log(level, message, fields),
    }),
    onReload: (reload) =>
      log(reload.reason === 'log-trimmed' ? 'info' : 'warn', reloadText(reload), { ...reload }),
  });
  sync.onApply((update) => {
    if (update.kind === 'snapshot') applySnapshot(options.site().keyvalZones, update.snapshot);
    else applyChange(options.site().keyvalZones, update.change);
    options.onApplied();
  });
  return sync;
}

/** A start the store did not answer enforces the state file's switches: said once, with their count. */
export function warnIfStartedFromStateFile(
  sync: KeyvalSync,
  stateFile: StateFile | null,
  log: ProcessLog,
): void {
  const loaded = sync.state();
  if (loaded.source !== 'state-file' || !stateFile) return;
  const snapshot = sync.snapshot();
  const switches = Object.values(snapshot.zones).reduce((n, keys) => n + Object.keys(keys).length, 0);
  log(
    'warn',
    `keyval store unreachable at start: enforcing the state file ${stateFile.path} (revision ${loaded.appliedRevision}, ${switches} switches) until it answers`,
    {
      stateFile: stateFile.path,
      revision: loaded.appliedRevision,
      switches,
      err: loaded.lastError,
    },
  );
}

/** What a reload says in the log. */
function reloadText(reload: Reload): string {
  switch (reload.reason) {
    case 'epoch':
      return `keyval store has another history (epoch ${reload.fromEpoch ?? '(unknown)'} → ${reload.toEpoch}): reloading its state`;
    case 'went-back':
      return `keyval store went back from revision ${reload.fromRevision} to ${reload.toRevision} (restored from an older snapshot?): reloading its state`;
    case 'diverged':
      return `keyval store has another change at revision ${reload.fromRevision} than the one applied here (a failover lost writes?): reloading its state`;
    case 'log-trimmed':
      return `keyval change log no longer reaches revision ${reload.fromRevision + 1}: reloading the state at ${reload.toRevision}`;
  }
}
