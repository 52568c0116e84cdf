/** The leases port in memory; lease times and record expiry on the backend's clock. */
import { randomUUID } from 'node:crypto';
import type { Lease, LeaseRecord, LeaseStore } from '../lease-store.ts';
import type { MemoryBackend } from './memory-backend.ts';

export class MemoryLeases implements LeaseStore {
  readonly #backend: MemoryBackend;
  readonly #leases = new Map<string, { token: string; untilMs: number }>();
  readonly #records = new Map<string, LeaseRecord>();

  constructor(backend: MemoryBackend) {
    this.#backend = backend;
  }

  async acquire(name: string, ttlMs: number): Promise<Lease | null> {
    this.#backend.assertOpen();
    const nowMs = this.#backend.nowMs();
    const held = this.#leases.get(name);
    if (held && held.untilMs > nowMs) return null;
    const token = randomUUID();
    this.#leases.set(name, { token, untilMs: nowMs + ttlMs });
    return { name, token };
  }

  async release(lease: Lease): Promise<boolean> {
    this.#backend.assertOpen();
    if (!this.#holds(lease)) return false;
    this.#leases.delete(lease.name);
    return true;
  }

  async records(prefix: string, nowMs: number): Promise<Record<string, LeaseRecord>> {
    this.#backend.assertOpen();
    const out: Record<string, LeaseRecord> = Object.create(null);
    for (const [name, record] of this.#records) {
      if (!name.startsWith(prefix)) continue;
      if (record.expireAtMs !== null && record.expireAtMs <= nowMs) this.#records.delete(name);
      else out[name] = { ...record };
    }
    return out;
  }

  async putRecord(lease: Lease, name: string, record: LeaseRecord | null): Promise<boolean> {
    this.#backend.assertOpen();
    if (!this.#holds(lease)) return false;
    if (record === null) this.#records.delete(name);
    else this.#records.set(name, { value: record.value, expireAtMs: record.expireAtMs });
    return true;
  }

  #holds(lease: Lease): boolean {
    const held = this.#leases.get(lease.name);
    return held !== undefined && held.token === lease.token && held.untilMs > this.#backend.nowMs();
  }
}
