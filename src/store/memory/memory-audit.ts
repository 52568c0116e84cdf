/** The audit port in memory: newest first, bounded. */
import type { AuditEntry, AuditTrail } from '../audit-trail.ts';
import type { MemoryBackend } from './memory-backend.ts';

export class MemoryAudit implements AuditTrail {
  readonly #backend: MemoryBackend;
  readonly #max: number;
  #entries: AuditEntry[] = [];

  /** `maxEntries`: how many are kept (default 1000). */
  constructor(backend: MemoryBackend, maxEntries = 1000) {
    this.#backend = backend;
    this.#max = maxEntries;
  }

  async append(entry: AuditEntry): Promise<void> {
    this.#backend.assertOpen();
    this.push(entry);
  }

  async recent(limit: number): Promise<AuditEntry[]> {
    this.#backend.assertOpen();
    return this.#entries.slice(0, Math.max(0, limit)).map((e) => ({ ...e }));
  }

  /** Record one entry now (also called by the keyvals port inside its mutations). */
  push(entry: AuditEntry): void {
    this.#entries.unshift({ ...entry });
    if (this.#entries.length > this.#max) this.#entries.length = this.#max;
  }
}
