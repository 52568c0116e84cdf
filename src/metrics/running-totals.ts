/**
 * Prometheus counters read at scrape time from totals a replica keeps itself: how much each total
 * grew since the last scrape. A total that went back (a reload built its limiter again) counts on
 * from zero.
 */
export class RunningTotals {
  readonly #seen = new Map<string, number>();

  growth(key: string, total: number): number {
    const before = this.#seen.get(key);
    this.#seen.set(key, total);
    return before === undefined || total < before ? total : total - before;
  }
}
