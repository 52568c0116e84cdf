/**
 * Replica-side sync: keeps a `KeyvalMirror` equal to the store and tells the replica about every
 * update (`onApply`) so it can swap engine state.
 *
 * - Start: subscribe, then snapshot, then apply the buffered changes newer than the snapshot, so no
 *   change can slip between.
 * - Changes apply strictly in revision order, each only on top of the commit it names as its parent.
 *   A gap (lost message, reconnect) → catch up with `changesSince`; if the log no longer reaches back,
 *   or the store's epoch changed (it restarted empty), reload the snapshot.
 * - A history that is not the continuation of the applied one — the store restored from an older
 *   snapshot, a failover that lost writes: the revision goes back, or the same revision has another
 *   commit — is answered with a reload, never kept.
 * - A store that came back empty under a new epoch while the mirror holds switches is a store
 *   reset: `onStoreReset` hears of it (and may write the switches back) before the mirror follows.
 * - Every `checkIntervalMs` (default 250) a revision check catches silent pub/sub loss and retries a
 *   lost subscription.
 * - Fail-static: while the store is unreachable the mirror keeps its last state; `state()` says so.
 *   The mirror is saved to `stateFile` (atomically) and loaded from it when the store is down at start.
 */

import { KeyvalMirror } from './keyval-mirror.ts';
import type { KeyvalChange, KeyvalEntry, KeyvalFeed, KeyvalSnapshot, Unsubscribe } from './keyval-store.ts';
import type { StateFile } from './state-file.ts';

/** The store restarted empty (a new epoch, revision 0) while the mirror held switches. */
export interface StoreReset {
  /** The epoch the mirror's state belongs to (`null`: a state file that did not record one). */
  readonly fromEpoch: string | null;
  readonly toEpoch: string;
  /** The mirror's switches (expired ones included: the handler knows the time). */
  readonly zones: Readonly<Record<string, Readonly<Record<string, KeyvalEntry>>>>;
}

/**
 * Why the mirror is replaced by a snapshot of a store it was following: another epoch (the store
 * started from nothing, or from another store's data), the revision gone back (restored from an
 * older snapshot), another change at the applied revision (a failover that lost writes), or a gap the
 * bounded change log no longer covers.
 */
export interface Reload {
  readonly reason: 'epoch' | 'went-back' | 'diverged' | 'log-trimmed';
  readonly fromEpoch: string | null;
  readonly toEpoch: string;
  readonly fromRevision: number;
  readonly toRevision: number;
}

/** What `onApply` hooks receive: a whole new state, or one change on top of the previous one. */
export type KeyvalSyncUpdate =
  | { readonly kind: 'snapshot'; readonly source: 'store' | 'state-file'; readonly snapshot: KeyvalSnapshot }
  | { readonly kind: 'change'; readonly change: KeyvalChange };

export interface KeyvalSyncState {
  /** The last contact with the store succeeded. */
  readonly connected: boolean;
  readonly appliedRevision: number;
  /** The commit id of `appliedRevision` (`''` at 0, or from an old state file). */
  readonly appliedCommit: string;
  readonly epoch: string | null;
  /** Where the current state came from: nowhere yet, the state file, or the store. */
  readonly source: 'none' | 'state-file' | 'store';
  /** The last failure (store, state file or hook), `null` after a successful check. */
  readonly lastError: string | null;
}

export interface KeyvalSyncOptions {
  readonly store: KeyvalFeed;
  /** Revision check period; ≤ 1000. Default 250. */
  readonly checkIntervalMs?: number;
  /** The local state file; none when absent. */
  readonly stateFile?: StateFile;
  /** Delay before saving after a change (changes in a burst are saved once). Default 100. */
  readonly stateWriteDelayMs?: number;
  /**
   * Called on a store reset before the mirror follows the empty store (which is then reloaded: what
   * the handler wrote back, if anything, is what the mirror gets). A failure is `lastError`.
   */
  readonly onStoreReset?: (reset: StoreReset) => Promise<void>;
  /** Hears each reload of a store the mirror was following (not the first load), and why. */
  readonly onReload?: (reload: Reload) => void;
}

export class KeyvalSync {
  readonly #store: KeyvalFeed;
  readonly #intervalMs: number;
  readonly #stateFile: StateFile | undefined;
  readonly #writeDelayMs: number;
  readonly #onStoreReset: ((reset: StoreReset) => Promise<void>) | null;
  readonly #onReload: ((reload: Reload) => void) | null;
  readonly #mirror = new KeyvalMirror();
  readonly #hooks = new Set<(update: KeyvalSyncUpdate) => void>();
  /** Changes that arrived ahead of the mirror, by revision (with their epoch). */
  readonly #pending = new Map<number, { change: KeyvalChange; epoch: string }>();
  #unsubscribe: Unsubscribe | null = null;
  #timer: NodeJS.Timeout | null = null;
  #syncing: Promise<void> | null = null;
  #syncAgain = false;
  #connected = false;
  #source: KeyvalSyncState['source'] = 'none';
  #lastError: string | null = null;
  #stopped = false;
  #saveTimer: NodeJS.Timeout | null = null;
  #saving: Promise<void> = Promise.resolve();

  constructor(options: KeyvalSyncOptions) {
    this.#store = options.store;
    this.#intervalMs = Math.min(options.checkIntervalMs ?? 250, 1000);
    this.#stateFile = options.stateFile;
    this.#writeDelayMs = options.stateWriteDelayMs ?? 100;
    this.#onStoreReset = options.onStoreReset ?? null;
    this.#onReload = options.onReload ?? null;
  }

  /** Call `hook` after every update of the mirror (synchronously, in order). Returns a remover. */
  onApply(hook: (update: KeyvalSyncUpdate) => void): () => void {
    this.#hooks.add(hook);
    return () => this.#hooks.delete(hook);
  }

  /**
   * First sync with the store; when it is unreachable, load the state file instead (fail-static) and
   * keep retrying in the background. Resolves either way; see `state()`.
   */
  async start(): Promise<void> {
    // A check still running covers the tick; queueing another behind it would, while the store is
    // down (each check waits out its timeout), keep the loop — and this start() — going forever.
    this.#timer = setInterval(() => {
      if (!this.#syncing) void this.#requestSync();
    }, this.#intervalMs);
    this.#timer.unref();
    await this.#requestSync();
    if (!this.#connected && this.#source === 'none' && this.#stateFile) {
      try {
        const saved = (await this.#stateFile.load()).keyvals;
        // The store may have answered meanwhile; its state wins.
        if (saved && this.#source === 'none') this.#load(saved, 'state-file');
      } catch (err) {
        this.#lastError = message(err);
      }
    }
  }

  /** Stop syncing; the last state is saved. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#syncing?.catch(() => {});
    await this.#unsubscribe?.().catch(() => {});
    this.#unsubscribe = null;
    if (this.#saveTimer) {
      clearTimeout(this.#saveTimer);
      this.#saveTimer = null;
      this.#save();
    }
    await this.#saving;
  }

  state(): KeyvalSyncState {
    return {
      connected: this.#connected,
      appliedRevision: this.#mirror.revision,
      appliedCommit: this.#mirror.commit,
      epoch: this.#mirror.epoch,
      source: this.#source,
      lastError: this.#lastError,
    };
  }

  /** One zone of the mirror (a copy). */
  zone(name: string): Record<string, KeyvalEntry> {
    return this.#mirror.zone(name);
  }

  /** The whole mirror (a copy). */
  snapshot(): KeyvalSnapshot {
    return this.#mirror.snapshot();
  }

  /** Drop keys past their expiry from the mirror (the store's expire change follows later). */
  pruneExpired(nowMs: number): Record<string, string[]> {
    return this.#mirror.pruneExpired(nowMs);
  }

  #onChange(change: KeyvalChange, epoch: string): void {
    if (this.#stopped) return;
    if (this.#source === 'store' && epoch === this.#mirror.epoch) {
      if (this.#continues(change)) {
        this.#apply(change);
        this.#drainPending();
        return;
      }
      // Already applied (the snapshot had it): old news.
      if (this.#mirror.passedThrough(change.revision, change.commit)) return;
    }
    // Ahead of the mirror, from another history or epoch, or before the first snapshot: keep it, and
    // sync (the head tells a gap from a history that is not ours).
    this.#pending.set(change.revision, { change, epoch });
    if (this.#source === 'store') void this.#requestSync();
  }

  /** Coalesce sync requests: at most one running, at most one more queued. */
  #requestSync(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#syncing) {
      this.#syncAgain = true;
      return this.#syncing;
    }
    this.#syncing = (async () => {
      try {
        do {
          this.#syncAgain = false;
          await this.#syncOnce();
        } while (this.#syncAgain && !this.#stopped);
      } finally {
        this.#syncing = null;
      }
    })();
    return this.#syncing;
  }

  async #syncOnce(): Promise<void> {
    try {
      if (!this.#unsubscribe) {
        this.#unsubscribe = await this.#store.subscribe((change, epoch) => this.#onChange(change, epoch));
        // A new subscription: what happened before it is only in the snapshot or the log.
      }
      // Pub/sub may apply changes while head() is in flight: compare with the revision from before.
      const appliedBefore = this.#mirror.revision;
      const head = await this.#store.head();
      const mirror = this.#mirror;
      if (this.#source === 'none') {
        await this.#reload();
      } else if (head.epoch !== mirror.epoch && head.revision === 0 && this.#holdsSwitches()) {
        await this.#storeReset(head.epoch);
        await this.#reload();
      } else if (head.epoch !== mirror.epoch) {
        await this.#reloadBecause('epoch', head);
      } else if (head.revision < appliedBefore) {
        await this.#reloadBecause('went-back', head);
      } else if (head.revision === mirror.revision && head.commit !== mirror.commit) {
        // The same revision, another change: the store's history is not the one applied here.
        await this.#reloadBecause('diverged', head);
      } else if (head.revision > mirror.revision) {
        const changes = await this.#store.changesSince(mirror.revision);
        if (changes === null) await this.#reloadBecause('log-trimmed', head);
        else if (!this.#applyRun(changes, head.epoch)) await this.#reloadBecause('diverged', head);
      }
      if (this.#source === 'state-file' && mirror.epoch === head.epoch) this.#source = 'store';
      this.#connected = true;
      this.#lastError = null;
    } catch (err) {
      this.#connected = false;
      this.#lastError = message(err);
    }
  }

  async #reloadBecause(reason: Reload['reason'], head: { epoch: string; revision: number }): Promise<void> {
    const mirror = this.#mirror;
    const reload = {
      reason,
      fromEpoch: mirror.epoch,
      toEpoch: head.epoch,
      fromRevision: mirror.revision,
      toRevision: head.revision,
    };
    try {
      this.#onReload?.(reload);
    } catch {
      // A listener's failure is its own.
    }
    await this.#reload();
  }

  #holdsSwitches(): boolean {
    return Object.keys(this.#mirror.snapshot().zones).length !== 0;
  }

  async #storeReset(toEpoch: string): Promise<void> {
    if (this.#onStoreReset === null) return;
    const snapshot = this.#mirror.snapshot();
    try {
      await this.#onStoreReset({ fromEpoch: snapshot.epoch ?? null, toEpoch, zones: snapshot.zones });
    } catch (err) {
      this.#lastError = `store reset: ${message(err)}`;
    }
  }

  async #reload(): Promise<void> {
    const snapshot = await this.#store.snapshot();
    if (this.#stopped) return;
    const mirror = this.#mirror;
    // Pub/sub may have carried the mirror past this snapshot meanwhile: a point it went through is
    // not one to go back to. Anything else (newer, another epoch, another history) is loaded.
    const behind =
      this.#source === 'store' &&
      snapshot.epoch === mirror.epoch &&
      snapshot.revision <= mirror.revision &&
      mirror.passedThrough(snapshot.revision, snapshot.commit ?? '');
    if (!behind) this.#load(snapshot, 'store');
    this.#drainPending();
  }

  /**
   * Apply changes in order, from `mirror.revision + 1`, as far as they are contiguous. False when the
   * first new one does not continue the applied history (a reload is due).
   */
  #applyRun(changes: readonly KeyvalChange[], epoch: string): boolean {
    if (epoch !== this.#mirror.epoch) return true;
    for (const change of changes) {
      if (change.revision <= this.#mirror.revision) continue;
      if (change.revision !== this.#mirror.revision + 1) {
        this.#syncAgain = true;
        return true;
      }
      if (!this.#continues(change)) return false;
      this.#apply(change);
    }
    this.#drainPending();
    return true;
  }

  /** The next change on top of the applied one (its parent is the applied commit). */
  #continues(change: KeyvalChange): boolean {
    const mirror = this.#mirror;
    return change.revision === mirror.revision + 1 && change.parent === mirror.commit;
  }

  #drainPending(): void {
    const epoch = this.#mirror.epoch;
    for (;;) {
      const next = this.#pending.get(this.#mirror.revision + 1);
      if (!next || next.epoch !== epoch || !this.#continues(next.change)) break;
      this.#pending.delete(next.change.revision);
      this.#apply(next.change);
    }
    // Older ones are applied already; other epochs are settled by a reload. What is left is ahead of
    // a gap, and the sync its arrival requested fills the gap.
    for (const [revision, { epoch: e }] of this.#pending) {
      if (revision <= this.#mirror.revision || e !== epoch) this.#pending.delete(revision);
    }
  }

  #load(snapshot: KeyvalSnapshot, source: 'store' | 'state-file'): void {
    this.#mirror.load(snapshot);
    this.#source = source;
    this.#notify({ kind: 'snapshot', source, snapshot: this.#mirror.snapshot() });
    if (source === 'store') this.#scheduleSave();
  }

  #apply(change: KeyvalChange): void {
    this.#mirror.apply(change);
    this.#notify({ kind: 'change', change });
    this.#scheduleSave();
  }

  #notify(update: KeyvalSyncUpdate): void {
    for (const hook of [...this.#hooks]) {
      try {
        hook(update);
      } catch (err) {
        this.#lastError = `onApply hook failed: ${message(err)}`;
      }
    }
  }

  #scheduleSave(): void {
    if (!this.#stateFile || this.#saveTimer || this.#stopped) return;
    this.#saveTimer = setTimeout(() => {
      this.#saveTimer = null;
      this.#save();
    }, this.#writeDelayMs);
    this.#saveTimer.unref();
  }

  /** Save after any save in flight (writes never overlap; the last one holds the newest state). */
  #save(): void {
    const file = this.#stateFile;
    if (!file) return;
    this.#saving = this.#saving
      .then(() => file.save({ keyvals: this.#mirror.snapshot() }))
      .catch((err) => {
        this.#lastError = `state file: ${message(err)}`;
      });
  }
}

function message(err: unknown): string {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
    return `${err.message}${cause}`;
  }
  return String(err);
}
