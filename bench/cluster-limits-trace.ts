/**
 * The arrival trace of the cluster-limits benchmark, and the two references every replica count is
 * held against: one nginx-exact zone fed the merged stream (the ideal) and N zones of their own (each
 * replica limiting alone, as without `sync`). Pure: the same trace gives the same figures.
 */
import { parseComplexValue } from '../src/engine/complex-value.ts';
import { type LimitReqPolicy, limitRequest, newOutcome } from '../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../src/engine/limit-req/limit-req-zone.ts';

export interface Trace {
  readonly rate: number;
  readonly burst: number;
  /** Key i's bytes (a client address). */
  readonly keys: readonly string[];
  /** [ms from the start, key index, replica index], in time order. */
  readonly arrivals: readonly (readonly [number, number, number])[];
}

export interface TraceShape {
  readonly replicas: number;
  readonly durationMs: number;
  readonly rate: number;
  readonly burst: number;
  /** Clients over the limit: each sends `hotFactor` × the rate. */
  readonly hotKeys: number;
  readonly hotFactor: number;
  /** Clients under it: each sends `coolFactor` × the rate. */
  readonly coolKeys: number;
  readonly coolFactor: number;
  readonly seed: number;
}

/** How a client's requests reach the replicas: round-robin, at random, or 80 % to one of them. */
const SPREADS = ['round-robin', 'random', '80/20'] as const;

export function makeTrace(shape: TraceShape): Trace {
  let x = shape.seed >>> 0 || 1;
  const random = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const keys: string[] = [];
  const arrivals: [number, number, number][] = [];
  const clients = shape.hotKeys + shape.coolKeys;
  for (let k = 0; k < clients; k++) {
    keys.push(String.fromCharCode(10, (k >> 16) & 255, (k >> 8) & 255, k & 255));
    const perSecond = shape.rate * (k < shape.hotKeys ? shape.hotFactor : shape.coolFactor);
    const spread = SPREADS[k % SPREADS.length]!;
    const home = Math.floor(random() * shape.replicas);
    let t = random() * (1000 / perSecond);
    for (let i = 0; t < shape.durationMs; i++) {
      let replica: number;
      if (spread === 'round-robin') replica = (home + i) % shape.replicas;
      else if (spread === 'random') replica = Math.floor(random() * shape.replicas);
      else replica = random() < 0.8 ? home : Math.floor(random() * shape.replicas);
      arrivals.push([Math.floor(t), k, replica]);
      t += -Math.log(1 - random()) * (1000 / perSecond); // Poisson arrivals
    }
  }
  arrivals.sort((a, b) => a[0] - b[0]);
  return { rate: shape.rate, burst: shape.burst, keys, arrivals };
}

function zone(trace: Trace, name: string): LimitReqZone {
  return new LimitReqZone(name, parseComplexValue('$key'), 32 << 20, trace.rate * 1000);
}

function admits(z: LimitReqZone, trace: Trace, key: string, nowMs: number): boolean {
  const policy: LimitReqPolicy<{ key: string }> = {
    rules: [
      {
        zone: z,
        keyOf: (c) => c.key,
        keyText: '$key',
        burstMilli: trace.burst * 1000,
        delayMilli: Number.MAX_SAFE_INTEGER,
      },
    ],
    status: 503,
    logLevel: 'error',
    dryRun: false,
  };
  return limitRequest(policy, { key }, nowMs, newOutcome()).status === 'PASSED';
}

/** Admitted by one zone fed every arrival (the ideal), and by one zone per replica (no `sync`). */
export function references(trace: Trace, replicas: number): { ideal: number; local: number } {
  const T0 = 1_700_000_000_000;
  const ideal = zone(trace, 'ideal');
  const locals = Array.from({ length: replicas }, (_, i) => zone(trace, `local${i}`));
  let idealAdmitted = 0;
  let localAdmitted = 0;
  for (const [atMs, key, replica] of trace.arrivals) {
    if (admits(ideal, trace, trace.keys[key]!, T0 + atMs)) idealAdmitted++;
    if (admits(locals[replica]!, trace, trace.keys[key]!, T0 + atMs)) localAdmitted++;
  }
  return { ideal: idealAdmitted, local: localAdmitted };
}
