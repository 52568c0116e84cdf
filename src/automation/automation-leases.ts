/**
 * Where alert automation keeps its own state: in the store's leases port, never in the keyval feed, so
 * replicas see only the switched keys themselves. Any number of stateless control planes share it.
 *
 * | lease / record                        | holds                       | expires                      |
 * |---------------------------------------|-----------------------------|------------------------------|
 * | lease `automation/<zone>/<key>`       | who handles the key now     | the lease (30 s)             |
 * | record `automation/state/<zone>/<key>`   | `KeyState` JSON          | the switched key's expire    |
 * | record `automation/dry-run/<zone>/<key>` | `KeyState` JSON (dry runs) | the rule's ttl             |
 *
 * `<zone>` and `<key>` are URI-encoded, so `/` separates them unambiguously.
 *
 * The lease serialises two control planes handling duplicate notifications (Alertmanager in HA sends
 * from every instance): both must not read "no state" and record the alert's own value as the one to
 * restore. Records are written only while the writer's lease is held (the store checks the token), so
 * a control plane whose lease lapsed meanwhile cannot overwrite what the next holder wrote.
 */
import { LimitswitchError } from '../shared/errors.ts';
import type { AuditTrail } from '../store/audit-trail.ts';
import type { KeyvalReader, KeyvalWriter } from '../store/keyval-store.ts';
import type { Lease, LeaseStore } from '../store/lease-store.ts';
import { decodeKeyState, encodeKeyState, type KeyState } from './key-state.ts';

/** The store ports automation uses. */
export interface AutomationStore {
  readonly keyvals: KeyvalReader & KeyvalWriter;
  readonly leases: LeaseStore;
  readonly audit: AuditTrail;
}

/** A store call, bounded and metered by the caller (the control plane's gateway). */
export type StoreCall = <T>(op: string, fn: (store: AutomationStore) => Promise<T>) => Promise<T>;

/** The switched key a record belongs to. */
export interface SwitchedKey {
  readonly zone: string;
  readonly key: string;
  readonly dryRun: boolean;
}

export interface AutomationLeasesOptions {
  /** How long a lease is held at most (a crashed holder's lease lapses then). Default 30000. */
  readonly leaseMs?: number;
  /** How long to wait for a lease before giving up (503; Alertmanager retries). Default 3000. */
  readonly lockWaitMs?: number;
}

const RECORDS = 'automation/';

function recordName(target: SwitchedKey): string {
  const kind = target.dryRun ? 'dry-run' : 'state';
  return `${RECORDS}${kind}/${encodeURIComponent(target.zone)}/${encodeURIComponent(target.key)}`;
}

function leaseName(zone: string, key: string): string {
  return `automation/${encodeURIComponent(zone)}/${encodeURIComponent(key)}`;
}

/** Reads and writes automation records through `call`, under per-key leases. */
export class AutomationLeases {
  readonly #call: StoreCall;
  readonly #leaseMs: number;
  readonly #lockWaitMs: number;

  constructor(call: StoreCall, options: AutomationLeasesOptions = {}) {
    this.#call = call;
    this.#leaseMs = options.leaseMs ?? 30_000;
    this.#lockWaitMs = options.lockWaitMs ?? 3000;
  }

  /** Run `fn` holding the lease on `zone`/`key` (dry runs and real changes of one key share it). */
  async withLease<T>(zone: string, key: string, fn: (lease: Lease) => Promise<T>): Promise<T> {
    const name = leaseName(zone, key);
    const deadlineMs = performance.now() + this.#lockWaitMs;
    let lease: Lease | null;
    for (;;) {
      lease = await this.#call('automationLease', (s) => s.leases.acquire(name, this.#leaseMs));
      if (lease) break;
      if (performance.now() > deadlineMs) {
        throw new LimitswitchError(
          'StoreUnavailable',
          `automation lease on ${zone}/${key} not acquired within ${this.#lockWaitMs} ms`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
    }
    const held = lease;
    try {
      return await fn(held);
    } finally {
      // Past its time the lease may be someone else's now; the store gives back only ours.
      await this.#call('automationRelease', (s) => s.leases.release(held));
    }
  }

  /** Every live record (the sweeper looks for pending reverts). */
  async all(nowMs: number): Promise<{ target: SwitchedKey; state: KeyState }[]> {
    const records = await this.#call('automationRead', (s) => s.leases.records(RECORDS, nowMs));
    const out: { target: SwitchedKey; state: KeyState }[] = [];
    for (const [name, record] of Object.entries(records)) {
      const match = /^automation\/(state|dry-run)\/([^/]*)\/([^/]*)$/.exec(name);
      const state = match ? decodeKeyState(record.value) : null;
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
    const name = recordName(target);
    const records = await this.#call('automationRead', (s) => s.leases.records(name, nowMs));
    const record = Object.hasOwn(records, name) ? records[name] : undefined;
    return record ? decodeKeyState(record.value) : null;
  }

  /** Store `state` (expiring with it), or remove the record when `null`; only under `lease`. */
  async write(lease: Lease, target: SwitchedKey, state: KeyState | null): Promise<void> {
    const record = state ? { value: encodeKeyState(state), expireAtMs: state.expireAtMs } : null;
    const written = await this.#call('automationWrite', (s) =>
      s.leases.putRecord(lease, recordName(target), record),
    );
    if (!written) {
      throw new LimitswitchError(
        'StoreUnavailable',
        `automation lease on ${target.zone}/${target.key} lapsed before its record was written`,
      );
    }
  }
}
