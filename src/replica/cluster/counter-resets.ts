/**
 * A cluster `DELETE /limit_reqs/{zone}` (or `/limit_conns/{zone}`) zeroes the zone's counters in the
 * store: this replica's own status API starts from zero too. Its engine keeps counting; the view
 * subtracts what the zone had when the reset was seen.
 */
import type { Site } from '../../engine/http/site.ts';
import { LIMIT_CONN } from '../../engine/limit-conn/limit-conn-zone.ts';
import { LIMIT_REQ } from '../../engine/limit-req/limit-req-zone.ts';
import type { CounterStore } from '../../store/counter-store.ts';

export class CounterResets {
  readonly #store: Pick<CounterStore, 'resets'>;
  readonly #site: () => Site;
  /** Cluster counter resets seen, by `kind\0zone`. */
  readonly #seen = new Map<string, number>();
  /** Each zone's counters when the last reset came. */
  readonly #base = new WeakMap<object, Readonly<Record<string, number>>>();

  constructor(store: Pick<CounterStore, 'resets'>, site: () => Site) {
    this.#store = store;
    this.#site = site;
  }

  /** Asks the store for its reset counts; a zone whose count grew starts its view from now. */
  async follow(): Promise<void> {
    const site = this.#site();
    const families = [
      { kind: LIMIT_REQ.kind, zones: [...site.limitReqZones.values()] },
      { kind: LIMIT_CONN.kind, zones: [...site.limitConnZones.values()] },
    ];
    for (const { kind, zones } of families) {
      let resets: Record<string, number>;
      try {
        resets = await this.#store.resets(
          kind,
          zones.map((z) => z.name),
        );
      } catch {
        return; // the next flush asks again
      }
      for (const zone of zones) {
        const key = `${kind}\0${zone.name}`;
        const count = resets[zone.name] ?? 0;
        const seen = this.#seen.get(key);
        this.#seen.set(key, count);
        // The first look only learns the count: resets before this process are not its to follow.
        if (seen !== undefined && count > seen) this.#base.set(zone, { ...zone.counters });
      }
    }
  }

  /** This replica's counters of `zone` as its status API shows them: since the last cluster reset. */
  statusCounters(zone: { readonly counters: Readonly<Record<string, number>> }): Record<string, number> {
    const base = this.#base.get(zone);
    const out: Record<string, number> = { ...zone.counters };
    if (base) for (const field of Object.keys(out)) out[field] = out[field]! - (base[field] ?? 0);
    return out;
  }
}
