/**
 * Where alert automation keeps its own state: records in a reserved keyval zone of the same store, so
 * any number of stateless control planes share it, every write is one ordinary atomic store mutation,
 * and nothing is added to the store interface. The zone name holds a `:`, which an nginx
 * `keyval_zone zone=NAME:SIZE` can never declare, so no configuration can collide with it; it is never
 * registered, so the API does not list it (replicas mirror it like any zone and ignore it).
 *
 * | key                         | value                      | expire                        |
 * |-----------------------------|----------------------------|-------------------------------|
 * | `state/<zone>/<key>`        | `KeyState` JSON            | the switched key's expire     |
 * | `dry-run/<zone>/<key>`      | `KeyState` JSON (dry runs) | the rule's ttl                |
 * | `lock/<zone>/<key>`         | owner id                   | the lease (30 s)              |
 *
 * `<zone>` and `<key>` are URI-encoded, so `/` separates them unambiguously.
 *
 * The lock is a lease taken with the store's `add` (which fails while the key is live): two control
 * planes handling duplicate notifications (Alertmanager in HA sends from every instance) must not both
 * read "no state" and record the alert's own value as the one to restore.
 */
import { randomUUID } from 'node:crypto';
import { isLimitswitchError, LimitswitchError } from '../shared/errors.ts';
import type { KeyvalStore } from '../store/keyval-store.ts';
import { decodeKeyState, encodeKeyState, type KeyState } from './key-state.ts';

export const AUTOMATION_ZONE = 'limitswitch:automation';

/** A store call, bounded and metered by the caller (the control plane's gateway). */
export type StoreCall = <T>(op: string, fn: (store: KeyvalStore) => Promise<T>) => Promise<T>;

/** The switched key a record belongs to. */
export interface SwitchedKey {
  readonly zone: string;
  readonly key: string;
  readonly dryRun: boolean;
}

export interface AutomationZoneOptions {
  /** How long a lock is held at most (a crashed holder's lock lapses then). Default 30000. */
  readonly leaseMs?: number;
  /** How long to wait for a lock before giving up (503; Alertmanager retries). Default 3000. */
  readonly lockWaitMs?: number;
  /** Wall clock of lock leases (the store's clock). Default `Date.now`. */
  readonly nowMs?: () => number;
}

export function stateKey(target: SwitchedKey): string {
  return `${target.dryRun ? 'dry-run' : 'state'}/${encodeURIComponent(target.zone)}/${encodeURIComponent(target.key)}`;
}

function lockKey(zone: string, key: string): string {
  return `lock/${encodeURIComponent(zone)}/${encodeURIComponent(key)}`;
}

/** Reads and writes automation records through `call`. */
export class AutomationZone {
  readonly #call: StoreCall;
  readonly #leaseMs: number;
  readonly #lockWaitMs: number;
  readonly #now: () => number;

  constructor(call: StoreCall, options: AutomationZoneOptions = {}) {
    this.#call = call;
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#lockWaitMs = options.lockWaitMs ?? 3000;
    this.#now = options.nowMs ?? Date.now;
  }

  /** Run `fn` holding the lease on `zone`/`key` (dry runs and real changes of one key share it). */
  async withLock<T>(zone: string, key: string, fn: () => Promise<T>): Promise<T> {
    const lock = lockKey(zone, key);
    const owner = randomUUID();
    const deadlineMs = performance.now() + this.#lockWaitMs;
    for (;;) {
      try {
        const entry = { value: owner, expireAtMs: this.#now() + this.#leaseMs };
        await this.#call('automationLock', (s) => s.add(AUTOMATION_ZONE, { [lock]: entry }));
        break;
      } catch (err) {
        if (!isLimitswitchError(err) || err.code !== 'KeyvalKeyExists') throw err;
        if (performance.now() > deadlineMs) {
          throw new LimitswitchError(
            'RL_ERR_STORE_UNAVAILABLE',
            `automation lock on ${zone}/${key} not acquired within ${this.#lockWaitMs} ms`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
      }
    }
    try {
      return await fn();
    } finally {
      await this.#release(lock, owner);
    }
  }

  /** Every live record (the sweeper looks for pending reverts). */
  async all(nowMs: number): Promise<{ target: SwitchedKey; state: KeyState }[]> {
    const entries = await this.#call('automationRead', (s) => s.getZone(AUTOMATION_ZONE, nowMs));
    const out: { target: SwitchedKey; state: KeyState }[] = [];
    for (const [name, entry] of Object.entries(entries)) {
      const match = /^(state|dry-run)\/([^/]*)\/([^/]*)$/.exec(name);
      const state = match ? decodeKeyState(entry.value) : null;
      if (!match || !state) continue;
      const target = {
        dryRun: match[1] === 'dry-run',
        zone: decodeURIComponent(match[2]!),
        key: decodeURIComponent(match[3]!),
      };
      out.push({ target, state });
    }
    return out;
  }

  async read(target: SwitchedKey, nowMs: number): Promise<KeyState | null> {
    const entries = await this.#call('automationRead', (s) => s.getZone(AUTOMATION_ZONE, nowMs));
    const entry = Object.hasOwn(entries, stateKey(target)) ? entries[stateKey(target)] : undefined;
    return entry ? decodeKeyState(entry.value) : null;
  }

  /** Store `state` (expiring with it), or remove the record when `null`. */
  async write(target: SwitchedKey, state: KeyState | null): Promise<void> {
    const name = stateKey(target);
    if (state) {
      const entry = { value: encodeKeyState(state), expireAtMs: state.expireAtMs };
      await this.#call('automationWrite', (s) => s.set(AUTOMATION_ZONE, name, entry));
      return;
    }
    await this.#deleteIfPresent(name);
  }

  async #release(lock: string, owner: string): Promise<void> {
    const entries = await this.#call('automationRead', (s) => s.getZone(AUTOMATION_ZONE, this.#now()));
    // Past its lease the lock may be someone else's now; theirs is not ours to remove.
    if (entries[lock]?.value === owner) await this.#deleteIfPresent(lock);
  }

  async #deleteIfPresent(name: string): Promise<void> {
    try {
      await this.#call('automationWrite', (s) => s.delete(AUTOMATION_ZONE, name));
    } catch (err) {
      if (!isLimitswitchError(err) || err.code !== 'KeyvalKeyNotFound') throw err;
    }
  }
}
