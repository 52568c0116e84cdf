/**
 * An upstream that holds every request it gets until the test lets them go: what a limit on requests
 * in progress (max_conns, seats, parallel requests) is tested against.
 */
import { echo, startUpstream, type TestUpstream } from '../replica/http/harness.ts';

export class HoldingUpstream {
  readonly upstream: TestUpstream;
  #held: (() => void)[] = [];
  readonly #arrivalWatchers = new Set<() => void>();

  private constructor(upstream: TestUpstream) {
    this.upstream = upstream;
  }

  static async start(): Promise<HoldingUpstream> {
    let holding: HoldingUpstream | null = null;
    const upstream = await startUpstream((req, res, record) => {
      holding!.#held.push(() => echo(req, res, record));
      for (const watcher of [...holding!.#arrivalWatchers]) watcher();
    });
    holding = new HoldingUpstream(upstream);
    return holding;
  }

  get port(): number {
    return this.upstream.port;
  }

  /** Requests held now. */
  get holding(): number {
    return this.#held.length;
  }

  /** Calls `watch` at every request that arrives from now on. */
  onArrival(watch: () => void): void {
    this.#arrivalWatchers.add(watch);
  }

  /** Resolves when the next request arrives. */
  nextArrival(): Promise<void> {
    return new Promise((resolve) => {
      const once = () => {
        this.#arrivalWatchers.delete(once);
        resolve();
      };
      this.#arrivalWatchers.add(once);
    });
  }

  /** Answers every held request. */
  letGo(): void {
    const released = this.#held;
    this.#held = [];
    for (const release of released) release();
  }

  /** Forgets the held requests (their clients are gone). */
  forget(): void {
    this.#held = [];
  }

  async close(): Promise<void> {
    this.letGo();
    this.#arrivalWatchers.clear();
    await this.upstream.close();
  }
}
