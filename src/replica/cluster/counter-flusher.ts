/**
 * Moves the engine's per-zone counters to the store as deltas: every second, and once more on
 * shutdown, so cluster totals lose nothing on a graceful stop. Exactly once: the deltas taken are one
 * numbered batch, resent unchanged until the store accepts it (the store ignores a batch it applied
 * before, e.g. when its answer was lost to a timeout); new counts wait for the next batch. Batches the
 * store never acknowledged can be handed over (`unsent`, to the state file) and taken back by the
 * next process (`resend`), which sends them first under their own incarnation.
 */
import { randomUUID } from 'node:crypto';
import { type CounterFamily, type Counters, counterDelta } from '../../engine/counters.ts';
import type { CounterBatch, CounterStore } from '../../store/counter-store.ts';

/** A zone whose counters only grow (the engine's). */
export interface CountedZone {
  readonly name: string;
  readonly counters: Readonly<Counters>;
}

/** One limiter's zones, as the replica runs them now. */
export interface CounterSource {
  readonly family: CounterFamily;
  zones(): Iterable<CountedZone>;
}

export class CounterFlusher {
  readonly #store: Pick<CounterStore, 'add'>;
  readonly #replicaId: string;
  readonly #incarnation: string;
  readonly #sources: readonly CounterSource[];
  /** What was taken into a batch already, per zone object (a reload keeps zone objects it reuses). */
  readonly #taken = new Map<CountedZone, Counters>();
  /** Zones dropped by a reload whose last counts are not taken yet. */
  #retired: { family: CounterFamily; zone: CountedZone }[] = [];
  #seq = 0;
  /** Batches the store has not acknowledged yet, oldest first. */
  #pending: CounterBatch[] = [];
  #running: Promise<void> | null = null;

  constructor(
    store: Pick<CounterStore, 'add'>,
    replicaId: string,
    sources: readonly CounterSource[],
    incarnation: string = randomUUID(),
  ) {
    this.#store = store;
    this.#replicaId = replicaId;
    this.#sources = sources;
    this.#incarnation = incarnation;
  }

  /** Batches of an earlier process (its state file), sent before anything of this one. */
  resend(batches: readonly CounterBatch[]): void {
    this.#pending.unshift(...batches.filter((b) => b.replicaId === this.#replicaId));
  }

  /**
   * Everything the store has not acknowledged: the pending batches and the counts not taken yet (as
   * one more batch). What a shutdown during an outage keeps in the state file.
   */
  unsent(): CounterBatch[] {
    const batch = this.#take();
    if (batch) this.#pending.push(batch);
    return [...this.#pending];
  }

  /** Keeps counting zones that a reload is about to drop until their last deltas are taken. */
  retire(family: CounterFamily, zones: Iterable<CountedZone>): void {
    for (const zone of zones) this.#retired.push({ family, zone });
  }

  /** One flush; concurrent calls share it. Rejects when the store is unreachable. */
  flush(): Promise<void> {
    this.#running ??= this.#flushOnce().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  /**
   * Unacknowledged batches first, in order; only then are new counts taken (so this process has at
   * most one batch out at a time, and an outage grows the engine's counts, not a queue).
   */
  async #flushOnce(): Promise<void> {
    while (this.#pending.length !== 0) await this.#acknowledge();
    const batch = this.#take();
    if (batch === null) return;
    this.#pending.push(batch);
    await this.#acknowledge();
  }

  async #acknowledge(): Promise<void> {
    await this.#store.add(this.#pending[0]!);
    this.#pending.shift();
  }

  /** The deltas since the last batch, as the next batch (and the baseline advanced), or null. */
  #take(): CounterBatch | null {
    const deltas: Record<string, Record<string, Counters>> = {};
    let any = false;
    const visit = (family: CounterFamily, zone: CountedZone) => {
      const now = { ...zone.counters };
      const delta = counterDelta(now, this.#taken.get(zone), family.fields);
      if (delta === null) return;
      deltas[family.kind] ??= {};
      const zones = deltas[family.kind]!;
      const sum = zones[zone.name];
      if (sum) for (const field of family.fields) sum[field]! += delta[field]!;
      else zones[zone.name] = delta;
      this.#taken.set(zone, now);
      any = true;
    };
    for (const source of this.#sources) for (const zone of source.zones()) visit(source.family, zone);
    for (const { family, zone } of this.#retired) {
      visit(family, zone);
      this.#taken.delete(zone);
    }
    this.#retired = [];
    if (!any) return null;
    this.#seq += 1;
    return { replicaId: this.#replicaId, incarnation: this.#incarnation, seq: this.#seq, deltas };
  }
}
