/**
 * Counters over time → rates. The page polls the cumulative counters (`/limit_reqs`, cluster-wide and
 * `?by=replica`); each pair of samples gives a rate per second for the time between them. Samples older
 * than the window are dropped. A counter that went down (a zone's counters were reset) starts afresh
 * instead of giving a negative rate.
 */

export const LIMIT_REQ_FIELDS = ['passed', 'delayed', 'rejected', 'delayed_dry_run', 'rejected_dry_run'];

/** `?minutes=N` on the page's URL (1–60) sets the window; 5 minutes otherwise. */
const minutes = Number(new URLSearchParams(globalThis.location?.search ?? '').get('minutes'));
export const WINDOW_MS = (Number.isInteger(minutes) && minutes >= 1 && minutes <= 60 ? minutes : 5) * 60_000;

export class CounterHistory {
  /** @type {{ atMs: number, counters: Record<string, Record<string, Record<string, number>>> }[]} */
  #samples = [];

  /**
   * Record one poll: `counters` is series name (`cluster`, or a replica id) → zone → field → total.
   */
  add(atMs, counters) {
    this.#samples.push({ atMs, counters });
    while (this.#samples.length > 2 && this.#samples[0].atMs < atMs - WINDOW_MS) this.#samples.shift();
  }

  /** Series names seen in the window (`cluster` first, then replica ids in order). */
  series() {
    const names = new Set();
    for (const sample of this.#samples) for (const name of Object.keys(sample.counters)) names.add(name);
    return [...names].sort((a, b) => (a === 'cluster' ? -1 : b === 'cluster' ? 1 : a.localeCompare(b)));
  }

  /** Zones seen in the window, by name. */
  zones() {
    const names = new Set();
    for (const sample of this.#samples) {
      for (const zones of Object.values(sample.counters))
        for (const zone of Object.keys(zones)) names.add(zone);
    }
    return [...names].sort();
  }

  /** The newest totals of a zone in a series, or `null`. */
  latest(series, zone) {
    const last = this.#samples.at(-1);
    return last?.counters[series]?.[zone] ?? null;
  }

  /**
   * Per field, the rate in requests per second between consecutive samples, as `{ atMs, perS }`
   * points (at the later sample's time).
   */
  rates(series, zone, fields = LIMIT_REQ_FIELDS) {
    const out = Object.fromEntries(fields.map((field) => [field, []]));
    for (let i = 1; i < this.#samples.length; i++) {
      const before = this.#samples[i - 1];
      const after = this.#samples[i];
      const spanS = (after.atMs - before.atMs) / 1000;
      if (spanS <= 0) continue;
      for (const field of fields) {
        const was = before.counters[series]?.[zone]?.[field] ?? 0;
        const now = after.counters[series]?.[zone]?.[field];
        if (now === undefined) continue;
        out[field].push({ atMs: after.atMs, perS: Math.max(0, now - was) / spanS });
      }
    }
    return out;
  }
}
