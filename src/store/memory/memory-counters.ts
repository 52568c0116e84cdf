/** The counters port in memory: kind → replica → zone → field → total, batches applied once. */
import type { CounterBatch, CounterStore } from '../counter-store.ts';
import type { MemoryBackend } from './memory-backend.ts';

type Table = Map<string, Map<string, Record<string, number>>>;

export class MemoryCounters implements CounterStore {
  readonly #backend: MemoryBackend;
  readonly #kinds = new Map<string, Table>();
  /** `replica\0incarnation` → last accepted seq. */
  readonly #lastSeq = new Map<string, number>();
  /** `kind\0zone` → how many times it was reset. */
  readonly #resets = new Map<string, number>();

  constructor(backend: MemoryBackend) {
    this.#backend = backend;
  }

  async add(batch: CounterBatch): Promise<boolean> {
    this.#backend.assertOpen();
    const batchKey = `${batch.replicaId}\0${batch.incarnation}`;
    if ((this.#lastSeq.get(batchKey) ?? 0) >= batch.seq) return false;
    this.#lastSeq.set(batchKey, batch.seq);
    for (const [kind, zones] of Object.entries(batch.deltas)) {
      const table = this.#table(kind);
      let byZone = table.get(batch.replicaId);
      if (!byZone) {
        byZone = new Map();
        table.set(batch.replicaId, byZone);
      }
      for (const [zone, delta] of Object.entries(zones)) {
        const total = byZone.get(zone) ?? {};
        for (const [field, n] of Object.entries(delta)) total[field] = (total[field] ?? 0) + n;
        byZone.set(zone, total);
      }
    }
    return true;
  }

  async read(kind: string): Promise<Record<string, Record<string, Record<string, number>>>> {
    this.#backend.assertOpen();
    const out: Record<string, Record<string, Record<string, number>>> = {};
    for (const [replicaId, zones] of this.#kinds.get(kind) ?? []) {
      out[replicaId] = {};
      for (const [zone, total] of zones) out[replicaId][zone] = { ...total };
    }
    return out;
  }

  async resets(kind: string, zones: readonly string[]): Promise<Record<string, number>> {
    this.#backend.assertOpen();
    return Object.fromEntries(zones.map((zone) => [zone, this.#resets.get(`${kind}\0${zone}`) ?? 0]));
  }

  async reset(kind: string, zone: string): Promise<void> {
    this.#backend.assertOpen();
    this.#resets.set(`${kind}\0${zone}`, (this.#resets.get(`${kind}\0${zone}`) ?? 0) + 1);
    for (const zones of this.#kinds.get(kind)?.values() ?? []) {
      const total = zones.get(zone);
      if (total) for (const field of Object.keys(total)) total[field] = 0;
    }
  }

  #table(kind: string): Table {
    let table = this.#kinds.get(kind);
    if (!table) {
      table = new Map();
      this.#kinds.set(kind, table);
    }
    return table;
  }
}
