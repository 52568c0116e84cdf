/**
 * The keyvals port: the switches (keyval zones), their change feed, and the writes that change them.
 * Consumers take the half they use: replicas follow the `KeyvalFeed`, the control plane reads and
 * writes. Every backend passes `test/store/contracts/keyval.contract.ts`.
 *
 * Invariants:
 * - Every mutation is atomic: it checks its precondition, writes, bumps the one store-wide revision,
 *   appends one entry to the bounded change log, records its audit entries (when given a note) and
 *   notifies subscribers — or does nothing and throws.
 * - Revisions start at 0 (empty store) and increase by exactly 1 per successful mutation, so a
 *   subscriber that sees revision r+2 after r knows it missed one.
 * - Every change carries a random commit id and its parent's, so a history that is not the
 *   continuation of what a follower applied (a store restored from an older snapshot, a failover that
 *   lost writes) is told apart even where it reuses the same revisions.
 * - Times are wall-clock epoch milliseconds (the writer's clock); replicas expire keys locally by
 *   `expireAtMs`, and `expireDue` removes them from the store exactly once.
 *
 * Precondition failures throw `LimitswitchError` with the NGINX Plus code: `KeyvalKeyExists` (add),
 * `KeyvalKeyNotFound` (change/delete a missing key), `KeyvalFormatError` with text `only one key can be
 * added: …` (several keys into a non-empty zone; the rest of the text says what to do instead),
 * `KeyvalZoneFull` (the entries would not fit in `size`). The texts are built in `keyval-errors.ts`. An
 * unreachable store throws `StoreUnavailable` within the backend's command timeout.
 */
import type { AuditNote } from './audit-trail.ts';

export interface KeyvalEntry {
  readonly value: string;
  /** Absolute epoch ms; `null` never expires. */
  readonly expireAtMs: number | null;
}

/** Where a change sits in the store's history. */
export interface ChangeHeader {
  readonly revision: number;
  /** A random id of this change: two histories that reach the same revision differ by it. */
  readonly commit: string;
  /** The commit id of the change before (`''` for revision 1). */
  readonly parent: string;
}

/** A change before the store gave it its place in the history. */
export type KeyvalChangeBody =
  | {
      readonly op: 'set';
      readonly zone: string;
      readonly key: string;
      readonly value: string;
      readonly expireAtMs: number | null;
    }
  | { readonly op: 'delete'; readonly zone: string; readonly key: string }
  /** Several keys written at once (POST of many keys into an empty zone). */
  | {
      readonly op: 'set-many';
      readonly zone: string;
      readonly entries: Readonly<Record<string, KeyvalEntry>>;
    }
  | { readonly op: 'empty'; readonly zone: string }
  /** Keys removed by `expireDue` (their time had come). */
  | { readonly op: 'expire'; readonly zone: string; readonly keys: readonly string[] };

/** One change, as stored in the change log and published to subscribers. */
export type KeyvalChange = ChangeHeader & KeyvalChangeBody;

export interface KeyvalSnapshot {
  readonly revision: number;
  /** The commit id of `revision` (`''` at revision 0, or when not known: an old state file). */
  readonly commit?: string;
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
  /** The commit id of `revision`. */
  readonly commit: string;
  /** key → previous value (`null` = absent). Empty for `expireDue` (keys span zones: see `expired`). */
  readonly previous: Readonly<Record<string, string | null>>;
  /** `expireDue` only: zone → key → the value that expired. */
  readonly expired?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/** The store's current position: its revision and commit within its epoch (see `KeyvalSnapshot.epoch`). */
export interface KeyvalHead {
  readonly revision: number;
  readonly epoch: string;
  /** The commit id of `revision` (`''` at revision 0). */
  readonly commit: string;
}

export type Unsubscribe = () => Promise<void>;

/** Reading the switches. */
export interface KeyvalReader {
  /** One zone's live entries (keys past their expiry are left out). */
  getZone(zone: string, nowMs: number): Promise<Record<string, KeyvalEntry>>;
  /** Everything with its revision, read atomically. */
  snapshot(): Promise<KeyvalSnapshot>;
  /** Revision, epoch and commit, read together. */
  head(): Promise<KeyvalHead>;
  /**
   * The commit id of one revision, from the bounded change log (`''` for revision 0); `null` when the
   * log does not hold it (trimmed, or not reached yet).
   */
  commitAt(revision: number): Promise<string | null>;
}

/** What a replica follows: a snapshot, then changes in revision order. */
export interface KeyvalFeed extends Pick<KeyvalReader, 'snapshot' | 'head'> {
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
}

/** How a write is made. */
export interface WriteOptions {
  /** Who and why: the mutation records one audit entry per key it touched, in the same atomic step. */
  readonly note?: AuditNote;
  /**
   * The zone's `size` (`keyval_zone zone=name:size`): a write whose entries would not fit in it, as
   * `keyval-bytes.ts` charges them, fails with `KeyvalZoneFull` and changes nothing. Absent: unbounded.
   */
  readonly sizeBytes?: number | null;
}

/** Changing the switches. */
export interface KeyvalWriter {
  /** POST: add keys; several only into an empty zone; fails if any key exists. */
  add(
    zone: string,
    entries: Readonly<Record<string, KeyvalEntry>>,
    options?: WriteOptions,
  ): Promise<MutationResult>;
  /** PATCH: change an existing key's value/expiry. */
  change(zone: string, key: string, entry: KeyvalEntry, options?: WriteOptions): Promise<MutationResult>;
  /** Upsert (alert automation). */
  set(zone: string, key: string, entry: KeyvalEntry, options?: WriteOptions): Promise<MutationResult>;
  /** PATCH with `null`: delete an existing key. */
  delete(zone: string, key: string, options?: WriteOptions): Promise<MutationResult>;
  /** DELETE: empty the zone (succeeds on an empty zone, still bumps the revision). */
  empty(zone: string, options?: WriteOptions): Promise<MutationResult>;
  /**
   * Remove every key with `expireAtMs <= nowMs`, exactly once across concurrent callers. One `expire`
   * change (one revision) per zone that had due keys; the result carries the last revision, or `null`
   * when nothing was due.
   */
  expireDue(nowMs: number): Promise<MutationResult | null>;
  /**
   * Write `zones` back into a store that has had no change at all in its epoch (revision 0: it
   * restarted empty), as one `set-many` change per zone (zones in name order), audited with `note`;
   * `null`, writing nothing, once the store has any revision — whoever restores first wins, and an
   * operator's write after the reset is never overwritten.
   */
  restore(
    zones: Readonly<Record<string, Readonly<Record<string, KeyvalEntry>>>>,
    note: AuditNote,
  ): Promise<MutationResult | null>;
}

export interface KeyvalStore extends KeyvalReader, KeyvalFeed, KeyvalWriter {}
