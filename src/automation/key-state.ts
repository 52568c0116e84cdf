/**
 * What alert automation knows about one switched key, and what each event does to it. Pure: the
 * caller reads the record and the key, calls one of `onFiring`/`onResolved`/`onDue`, and writes back
 * what the plan says. Time is an argument.
 *
 * The rules of the game:
 * - The key is held while at least one alert (rule + fingerprint) that set it is firing; re-sent
 *   notifications find their holder already there and only refresh the TTL.
 * - The first holder records the key's entry from before (for `restore`) and its value wins while
 *   several hold the key.
 * - When the last holder resolves, the key is reverted (deleted, or restored) — not before
 *   `min_hold` after it was first set; until then the revert is pending (the sweeper does it).
 * - A revert only undoes our own value: if someone changed or deleted the key meanwhile, it is left
 *   as they left it.
 */
import type { KeyvalEntry } from '../store/keyval-store.ts';

/** What a rule does to its key when the last alert holding it resolves. */
export type OnResolve = 'delete' | 'restore';

/** An alert holding the key. */
export interface Holder {
  readonly rule: string;
  readonly alertname: string;
  readonly fingerprint: string;
  readonly sinceMs: number;
}

/** A revert waiting for `min_hold` to pass. */
export interface PendingRevert {
  readonly atMs: number;
  readonly onResolve: OnResolve;
  readonly rule: string;
  readonly alertname: string;
  readonly fingerprint: string;
}

export interface KeyState {
  /** `rule/fingerprint` → holder. Empty only while a revert is pending. */
  readonly holders: Readonly<Record<string, Holder>>;
  /** The key's entry before the first holder set it (`null`: it was absent). */
  readonly previous: KeyvalEntry | null;
  /** The value the automation set. */
  readonly applied: string;
  readonly heldSinceMs: number;
  /** No revert before this. */
  readonly holdUntilMs: number;
  /** The key's expire (and this record's). */
  readonly expireAtMs: number;
  readonly revert: PendingRevert | null;
}

/** One alert's notification, as a rule sees it. */
export interface AlertEvent {
  readonly rule: string;
  readonly alertname: string;
  readonly fingerprint: string;
  /** The rule's value, rendered. */
  readonly value: string;
  readonly onResolve: OnResolve;
  readonly ttlMs: number;
  readonly minHoldMs: number;
}

/**
 * What happened to the key: `set` (value written), `refresh` (same value, TTL extended), `delete` /
 * `restore` (reverted), `hold` (revert pending), `left` (not reverted: changed by someone else),
 * `none` (nothing: already known, or other holders remain).
 */
export type PlanAction = 'set' | 'refresh' | 'delete' | 'restore' | 'hold' | 'left' | 'none';

export interface Plan {
  readonly action: PlanAction;
  /** The record to store; `null` removes it; `undefined` leaves it as it is. */
  readonly state: KeyState | null | undefined;
  /** What to do to the switched key. */
  readonly write: { readonly op: 'set'; readonly entry: KeyvalEntry } | { readonly op: 'delete' } | null;
  readonly old: string | null;
  readonly new: string | null;
}

const NOTHING: Plan = { action: 'none', state: undefined, write: null, old: null, new: null };

export function holderId(rule: string, fingerprint: string): string {
  return `${rule}/${fingerprint}`;
}

/** An alert fires (first time, or again). */
export function onFiring(
  state: KeyState | null,
  current: KeyvalEntry | null,
  event: AlertEvent,
  nowMs: number,
): Plan {
  const id = holderId(event.rule, event.fingerprint);
  const holder: Holder = {
    rule: event.rule,
    alertname: event.alertname,
    fingerprint: event.fingerprint,
    sinceMs: nowMs,
  };
  const expireAtMs = Math.max(state?.expireAtMs ?? 0, nowMs + event.ttlMs);
  const currentValue = current?.value ?? null;
  if (!state) {
    const next: KeyState = {
      holders: { [id]: holder },
      previous: current ? { value: current.value, expireAtMs: current.expireAtMs } : null,
      applied: event.value,
      heldSinceMs: nowMs,
      holdUntilMs: nowMs + event.minHoldMs,
      expireAtMs,
      revert: null,
    };
    const write = { op: 'set', entry: { value: event.value, expireAtMs } } as const;
    return { action: 'set', state: next, write, old: currentValue, new: event.value };
  }
  const holders = Object.hasOwn(state.holders, id) ? state.holders : { ...state.holders, [id]: holder };
  const next: KeyState = {
    ...state,
    holders,
    holdUntilMs: Math.max(state.holdUntilMs, state.heldSinceMs + event.minHoldMs),
    expireAtMs,
    revert: null,
  };
  const write = { op: 'set', entry: { value: state.applied, expireAtMs } } as const;
  // Someone changed or removed our value while the alert still fires: the alert wins again.
  const action = currentValue === state.applied ? 'refresh' : 'set';
  return { action, state: next, write, old: currentValue, new: state.applied };
}

/** An alert resolves. Unknown holders (already resolved, expired, never seen) change nothing. */
export function onResolved(
  state: KeyState | null,
  current: KeyvalEntry | null,
  event: AlertEvent,
  nowMs: number,
): Plan {
  const id = holderId(event.rule, event.fingerprint);
  if (!state || !Object.hasOwn(state.holders, id)) return NOTHING;
  const holders = { ...state.holders };
  delete holders[id];
  if (Object.keys(holders).length > 0) return { ...NOTHING, state: { ...state, holders } };
  const dueMs = Math.max(state.holdUntilMs, state.heldSinceMs + event.minHoldMs);
  if (nowMs < dueMs) {
    const revert: PendingRevert = {
      atMs: dueMs,
      onResolve: event.onResolve,
      rule: event.rule,
      alertname: event.alertname,
      fingerprint: event.fingerprint,
    };
    return { ...NOTHING, action: 'hold', state: { ...state, holders, revert } };
  }
  return revertPlan(state, current, event.onResolve, nowMs);
}

/** The sweeper's look at a record: a pending revert whose time has come is done now. */
export function onDue(state: KeyState, current: KeyvalEntry | null, nowMs: number): Plan {
  if (!state.revert || state.revert.atMs > nowMs || Object.keys(state.holders).length > 0) return NOTHING;
  return revertPlan(state, current, state.revert.onResolve, nowMs);
}

function revertPlan(state: KeyState, current: KeyvalEntry | null, onResolve: OnResolve, nowMs: number): Plan {
  if (!current || current.value !== state.applied) {
    return {
      action: 'left',
      state: null,
      write: null,
      old: current?.value ?? null,
      new: current?.value ?? null,
    };
  }
  const previous = state.previous;
  const restorable = previous && (previous.expireAtMs === null || previous.expireAtMs > nowMs);
  if (onResolve === 'restore' && restorable) {
    const write = { op: 'set', entry: previous } as const;
    return { action: 'restore', state: null, write, old: current.value, new: previous.value };
  }
  return { action: onResolve, state: null, write: { op: 'delete' }, old: current.value, new: null };
}

/** The record as stored (compact JSON). */
export function encodeKeyState(state: KeyState): string {
  return JSON.stringify(state);
}

/** A stored record, or `null` when it is not one (never trusted blindly: it came from the store). */
export function decodeKeyState(text: string): KeyState | null {
  try {
    const value = JSON.parse(text) as Partial<KeyState>;
    const ok =
      typeof value === 'object' &&
      value !== null &&
      typeof value.holders === 'object' &&
      value.holders !== null &&
      typeof value.applied === 'string' &&
      typeof value.heldSinceMs === 'number' &&
      typeof value.holdUntilMs === 'number' &&
      typeof value.expireAtMs === 'number' &&
      value.previous !== undefined &&
      value.revert !== undefined;
    return ok ? (value as KeyState) : null;
  } catch {
    return null;
  }
}
