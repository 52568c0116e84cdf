/**
 * Client load for the cafe cluster: every request is recorded (replica, path, client address, status,
 * when it was sent and answered), so the test can sum what clients saw and compare it with what the
 * cluster counted. The client address is chosen with X-Forwarded-For (the replicas trust loopback).
 */
import { Pool } from 'undici';
import { zeroCounters } from '../../src/engine/counters.ts';
import { LIMIT_REQ_COUNTERS, type LimitReqCounters } from '../../src/engine/limit-req/limit-req-zone.ts';

export interface Shot {
  /** Index into the replica list. */
  readonly replica: number;
  readonly path: string;
  readonly client: string;
  readonly status: number;
  /** performance.now() when the request was sent and when its response headers arrived. */
  readonly sentMs: number;
  readonly doneMs: number;
}

/** zone → counters, as `/limit_reqs` answers. */
export type ZoneCounters = Record<string, LimitReqCounters>;

export class CafeLoad {
  readonly #pools: Pool[];

  constructor(replicaUrls: readonly string[], connectionsPerReplica = 16) {
    this.#pools = replicaUrls.map((url) => new Pool(url, { connections: connectionsPerReplica }));
  }

  get replicaCount(): number {
    return this.#pools.length;
  }

  async get(replica: number, path: string, client: string): Promise<Shot> {
    const sentMs = performance.now();
    const res = await this.#pools[replica]!.request({
      method: 'GET',
      path,
      headers: { host: 'cafe.example.com', 'x-forwarded-for': client },
    });
    const doneMs = performance.now();
    await res.body.dump();
    return { replica, path, client, status: res.statusCode, sentMs, doneMs };
  }

  /** `perClient` requests at once from every client to every path of every replica. */
  burst(paths: readonly string[], clients: readonly string[], perClient: number): Promise<Shot[]> {
    const shots: Promise<Shot>[] = [];
    for (let replica = 0; replica < this.#pools.length; replica++) {
      for (const path of paths) {
        for (const client of clients) {
          for (let i = 0; i < perClient; i++) shots.push(this.get(replica, path, client));
        }
      }
    }
    return Promise.all(shots);
  }

  /**
   * `loops` back-to-back request loops per replica from one client until `stop()`. `firstRejectMs`
   * holds, per replica, when the first 503 arrived (null: none yet); `rejectedEverywhere` resolves
   * once every replica has answered one, or after `patienceMs` without (then some stay null).
   */
  hammer(path: string, client: string, loops: number, patienceMs = 15_000): Hammer {
    const shots: Shot[] = [];
    const firstRejectMs: (number | null)[] = this.#pools.map(() => null);
    let stopped = false;
    let onAll: () => void = () => {};
    const rejectedEverywhere = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, patienceMs);
      onAll = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    const loop = async (replica: number) => {
      while (!stopped) {
        const shot = await this.get(replica, path, client);
        shots.push(shot);
        if (shot.status === 503 && firstRejectMs[replica] === null) {
          firstRejectMs[replica] = shot.doneMs;
          if (firstRejectMs.every((t) => t !== null)) onAll();
        }
      }
    };
    const running: Promise<void>[] = [];
    for (let replica = 0; replica < this.#pools.length; replica++) {
      for (let i = 0; i < loops; i++) running.push(loop(replica));
    }
    return {
      shots,
      firstRejectMs,
      rejectedEverywhere,
      stop: async () => {
        stopped = true;
        await Promise.all(running);
        return shots;
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.#pools.map((p) => p.close()));
  }
}

export interface Hammer {
  readonly shots: readonly Shot[];
  readonly firstRejectMs: readonly (number | null)[];
  readonly rejectedEverywhere: Promise<void>;
  stop(): Promise<Shot[]>;
}

/**
 * Adds what clients saw to `into` (replica index → zone → counters): a 200 is `passed` and a 503
 * `rejected` in the zone `zoneOf` names; null means no zone accounts the request (its limit key is
 * empty), so the request must have been answered 200.
 */
export function tallyShots(
  into: ZoneCounters[],
  shots: readonly Shot[],
  zoneOf: (shot: Shot) => string | null,
): void {
  for (const shot of shots) {
    const zone = zoneOf(shot);
    if (shot.status !== 200 && shot.status !== 503) {
      throw new Error(`${shot.path} from ${shot.client} on replica ${shot.replica + 1}: ${shot.status}`);
    }
    if (zone === null) {
      if (shot.status !== 200) throw new Error(`${shot.path} was limited with no zone switched on`);
      continue;
    }
    const zones = into[shot.replica]!;
    zones[zone] ??= zeroCounters(LIMIT_REQ_COUNTERS);
    const counters = zones[zone];
    if (shot.status === 200) counters.passed++;
    else counters.rejected++;
  }
}

/** Zone-wise sum of several `zone → counters` records. */
export function sumZones(records: readonly ZoneCounters[]): ZoneCounters {
  const out: ZoneCounters = {};
  for (const record of records) {
    for (const [zone, counters] of Object.entries(record)) {
      out[zone] ??= zeroCounters(LIMIT_REQ_COUNTERS);
      const sum = out[zone];
      for (const field of Object.keys(sum) as (keyof LimitReqCounters)[]) sum[field] += counters[field];
    }
  }
  return out;
}

/** Counts of `status` per replica. */
export function countStatus(shots: readonly Shot[], status: number, replicas: number): number[] {
  const counts = new Array<number>(replicas).fill(0);
  for (const shot of shots) if (shot.status === status) counts[shot.replica]!++;
  return counts;
}

/** Per replica, when the earliest-sent request that was rejected was sent. */
export function earliestRejectSent(shots: readonly Shot[], replicas: number): number[] {
  const out = new Array<number>(replicas).fill(Number.POSITIVE_INFINITY);
  for (const s of shots) if (s.status === 503) out[s.replica] = Math.min(out[s.replica]!, s.sentMs);
  return out;
}

/** When the first request to `replica` sent at or after `fromMs` was sent (Infinity: none). */
export function firstSentAfter(shots: readonly Shot[], replica: number, fromMs: number): number {
  let first = Number.POSITIVE_INFINITY;
  for (const s of shots) if (s.replica === replica && s.sentMs >= fromMs) first = Math.min(first, s.sentMs);
  return first;
}

/** A replica's requests answered after `zeroMs`, as `status@sent→answered` (ms from it). */
export function timeline(shots: readonly Shot[], replica: number, zeroMs: number): string {
  return shots
    .filter((s) => s.replica === replica && s.doneMs >= zeroMs)
    .sort((a, b) => a.sentMs - b.sentMs)
    .slice(0, 24)
    .map((s) => `${s.status}@${(s.sentMs - zeroMs).toFixed(0)}→${(s.doneMs - zeroMs).toFixed(0)}`)
    .join(' ');
}

/** When the last of `shots` was answered. */
export function lastAnswer(shots: readonly Shot[]): number {
  return Math.max(...shots.map((s) => s.doneMs));
}
