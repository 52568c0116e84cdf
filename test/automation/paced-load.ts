/**
 * Steady client load on one path of every replica, for the alert loop: every `tickMs`, each client
 * address sends `perTick` requests at once to each replica (X-Forwarded-For; the replicas trust
 * loopback). Sending several at once makes a per-client limit with a small burst reject some of them
 * whatever the timer jitter, so a switched-on limit shows as 503s quickly. Every answer is recorded with
 * wall-clock times, comparable with the control plane's audit times.
 */
import { Pool } from 'undici';

export interface PacedShot {
  /** Index into the replica list. */
  readonly replica: number;
  readonly client: string;
  /** HTTP status; 0 when the request failed without one. */
  readonly status: number;
  /** `Date.now()` when the request was sent and when its response headers arrived. */
  readonly sentAtMs: number;
  readonly answeredAtMs: number;
}

export interface PacedLoadOptions {
  readonly path: string;
  readonly clients: readonly string[];
  readonly perTick: number;
  readonly tickMs: number;
  /** Default `cafe.example.com`. */
  readonly host?: string;
}

/** Requests still unanswered above which a tick is skipped: a slow machine is not buried in a queue. */
const MAX_IN_FLIGHT = 256;

export class PacedLoad {
  readonly shots: PacedShot[] = [];
  readonly #pools: Pool[];
  readonly #options: PacedLoadOptions;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #watchers: { test: () => boolean; resolve: () => void }[] = [];
  /** status → per replica, when it was first answered. */
  readonly #first = new Map<number, (number | null)[]>();
  #timer: NodeJS.Timeout | null = null;

  constructor(replicaUrls: readonly string[], options: PacedLoadOptions) {
    this.#pools = replicaUrls.map((url) => new Pool(url, { connections: 32 }));
    this.#options = options;
  }

  /** Nominal requests per second over all replicas and clients. */
  get ratePerS(): number {
    const { clients, perTick, tickMs } = this.#options;
    return (this.#pools.length * clients.length * perTick * 1000) / tickMs;
  }

  start(): void {
    this.#tick();
    this.#timer = setInterval(() => this.#tick(), this.#options.tickMs);
  }

  /** Stops sending and waits for every answer; resolves with all shots. */
  async stop(): Promise<PacedShot[]> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await Promise.all(this.#inFlight);
    return this.shots;
  }

  /** When each replica first answered `status` (null: not yet). */
  firstAnswer(status: number): (number | null)[] {
    return [...(this.#first.get(status) ?? this.#pools.map(() => null))];
  }

  /** Resolves once every replica has answered `status`; rejects after `timeoutMs`. */
  answeredEverywhere(status: number, timeoutMs: number): Promise<void> {
    const test = () => this.firstAnswer(status).every((t) => t !== null);
    if (test()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        const counts = this.countByReplica(status).join(', ');
        reject(new Error(`not every replica answered ${status} within ${timeoutMs} ms (${counts})`));
      }, timeoutMs);
      this.#watchers.push({
        test,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  /** Answers with `status`, per replica. */
  countByReplica(status: number): number[] {
    const counts = this.#pools.map(() => 0);
    for (const shot of this.shots) if (shot.status === status) counts[shot.replica]!++;
    return counts;
  }

  async close(): Promise<void> {
    await this.stop();
    await Promise.all(this.#pools.map((p) => p.close()));
  }

  #tick(): void {
    if (this.#inFlight.size > MAX_IN_FLIGHT) return;
    const { clients, perTick } = this.#options;
    for (let replica = 0; replica < this.#pools.length; replica++) {
      for (const client of clients) {
        for (let i = 0; i < perTick; i++) {
          const sent = this.#send(replica, client);
          this.#inFlight.add(sent);
          void sent.finally(() => this.#inFlight.delete(sent));
        }
      }
    }
  }

  async #send(replica: number, client: string): Promise<void> {
    const sentAtMs = Date.now();
    let status = 0;
    let answeredAtMs = 0;
    try {
      const res = await this.#pools[replica]!.request({
        method: 'GET',
        path: this.#options.path,
        headers: { host: this.#options.host ?? 'cafe.example.com', 'x-forwarded-for': client },
      });
      answeredAtMs = Date.now();
      status = res.statusCode;
      await res.body.dump();
    } catch {
      // Recorded as status 0: the test asserts every answer was a 200 or a 503.
      answeredAtMs = Date.now();
    }
    this.shots.push({ replica, client, status, sentAtMs, answeredAtMs });
    const first = this.#first.get(status) ?? this.#pools.map(() => null);
    first[replica] ??= answeredAtMs;
    this.#first.set(status, first);
    for (let i = this.#watchers.length - 1; i >= 0; i--) {
      const watcher = this.#watchers[i]!;
      if (watcher.test()) {
        this.#watchers.splice(i, 1);
        watcher.resolve();
      }
    }
  }
}
