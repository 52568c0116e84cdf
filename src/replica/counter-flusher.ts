/**
 * Moves the engine's per-zone counters to the store as deltas: every second, and once more on
 * shutdown, so cluster totals lose nothing on a graceful stop. A failed flush keeps its deltas for
 * the next one (counted exactly once: the baseline only advances after the store accepted them).
 */
import type { LimitReqZone } from '../engine/limit-req/limit-req-zone.ts';
import { emptyCounters, type KeyvalStore, type LimitReqCounters } from '../store/keyval-store.ts';

const FIELDS = ['passed', 'delayed', 'rejected', 'delayed_dry_run', 'rejected_dry_run'] as const;

export class CounterFlusher {
  readonly #store: KeyvalStore;
  readonly #replicaId: string;
  /** What the store already has, per zone object (a reload keeps zone objects it reuses). */
  readonly #flushed = new Map<LimitReqZone, LimitReqCounters>();
  #zones: () => Iterable<LimitReqZone>;
  /** Zones dropped by a reload with counts not yet flushed. */
  #retired: LimitReqZone[] = [];
  #running: Promise<void> | null = null;

  constructor(store: KeyvalStore, replicaId: string, zones: () => Iterable<LimitReqZone>) {
    this.#store = store;
    this.#replicaId = replicaId;
    this.#zones = zones;
  }

  /** Keeps counting zones that a reload is about to drop until their last deltas are flushed. */
  retire(zones: Iterable<LimitReqZone>): void {
    this.#retired.push(...zones);
  }

  /** One flush; concurrent calls share it. Rejects when the store is unreachable. */
  flush(): Promise<void> {
    this.#running ??= this.#flushOnce().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #flushOnce(): Promise<void> {
    const deltas: Record<string, LimitReqCounters> = {};
    const taken: [LimitReqZone, LimitReqCounters][] = [];
    for (const zone of [...this.#zones(), ...this.#retired]) {
      const base = this.#flushed.get(zone) ?? emptyCounters();
      const now = { ...zone.counters };
      const delta = emptyCounters();
      let any = false;
      for (const field of FIELDS) {
        delta[field] = now[field] - base[field];
        if (delta[field] !== 0) any = true;
      }
      if (!any) continue;
      const sum = deltas[zone.name] ?? emptyCounters();
      for (const field of FIELDS) sum[field] += delta[field];
      deltas[zone.name] = sum;
      taken.push([zone, now]);
    }
    if (taken.length !== 0) await this.#store.addCounters(this.#replicaId, deltas);
    for (const [zone, now] of taken) this.#flushed.set(zone, now);
    for (const zone of this.#retired) this.#flushed.delete(zone);
    this.#retired = [];
  }
}
