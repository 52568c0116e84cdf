/**
 * Cluster-wide limits (`limit_req_zone … sync`): one arrival trace — clients over and under the rate,
 * each spread over the replicas round-robin, at random or 80/20, Poisson arrivals — through
 * (a) one nginx-exact zone fed the merged stream (the ideal), (b) one zone per replica (no `sync`:
 * today), (c) N replica processes with a synced zone and their real sync loop on a real Redis.
 * For 3 and 10 replicas, at three loads; store commands counted by Redis itself (those a script
 * runs included). Then the
 * engine's decision cost on a synced zone against a local one, in one process.
 *
 * Run: npm run bench:cluster-limits   (last line: JSON, the 10-replica run at the peak rate)
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseComplexValue } from '../src/engine/complex-value.ts';
import { type LimitReqPolicy, limitRequest, newOutcome } from '../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../src/engine/limit-req/limit-req-zone.ts';
import { RedisServer } from '../test/helpers/redis-server.ts';
import { makeTrace, references, type TraceShape } from './cluster-limits-trace.ts';

const DURATION_MS = Number(process.env.DURATION_MS ?? 10_000);
const LOADS = [
  // 200 clients at 3 × rate=10r/s and 800 at a fifth of it: about 7 600 r/s offered.
  { name: 'base', hotKeys: 200, hotFactor: 3, coolKeys: 800 },
  // The same clients, the busy ones 10 × faster: about 61 000 r/s — the store's work stays.
  { name: 'peak', hotKeys: 200, hotFactor: 30, coolKeys: 800 },
  // Four times the clients at the base rates: about 30 000 r/s — the store's work grows with keys.
  { name: 'keys', hotKeys: 800, hotFactor: 3, coolKeys: 3200 },
];

interface RunResult {
  replicas: number;
  load: string;
  ideal_admitted: number;
  local_admitted: number;
  synced_admitted: number;
  error_pct: number;
  local_error_pct: number;
  requests_per_s: number;
  store_cmds_per_s: number;
  store_cmds_per_request: number;
  replica_lag_ms_p99: number;
}

async function commandsProcessed(redis: RedisServer): Promise<number> {
  const info = await redis.cli('info', 'stats');
  return Number(/total_commands_processed:(\d+)/.exec(info)![1]);
}

async function runFleet(redis: RedisServer, shape: TraceShape, load: string): Promise<RunResult> {
  const trace = makeTrace(shape);
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-bench-'));
  const traceFile = join(dir, 'trace.json');
  writeFileSync(traceFile, JSON.stringify(trace));
  const cluster = `bench-${randomUUID()}`;
  const children: ChildProcess[] = [];
  try {
    const results: Promise<{ admitted: number; decisions: number; lagMsP99: number }>[] = [];
    const ready: Promise<void>[] = [];
    for (let i = 0; i < shape.replicas; i++) {
      const child = fork(
        new URL('./cluster-limits-replica.ts', import.meta.url),
        [redis.url, cluster, `replica-${i + 1}`, traceFile, String(i)],
        { execArgv: ['--import', 'tsx'] },
      );
      children.push(child);
      ready.push(new Promise((resolve) => child.once('message', () => resolve())));
      results.push(
        new Promise((resolve, reject) => {
          child.on('message', (m: { admitted?: number; decisions: number; lagMsP99: number }) => {
            if (m.admitted !== undefined)
              resolve(m as { admitted: number; decisions: number; lagMsP99: number });
          });
          child.once('exit', (code) => code !== 0 && reject(new Error(`replica ${i} exited with ${code}`)));
        }),
      );
    }
    await Promise.all(ready);
    const startMs = Date.now() + 1500;
    for (const child of children) child.send({ start: startMs });
    await new Promise((resolve) => setTimeout(resolve, startMs - Date.now()));
    const commandsBefore = await commandsProcessed(redis);
    const done = await Promise.all(results);
    const elapsedS = (Date.now() - startMs) / 1000;
    // The two INFO calls are commands too.
    const commands = (await commandsProcessed(redis)) - commandsBefore - 1;
    const reference = references(trace, shape.replicas);
    const synced = done.reduce((sum, r) => sum + r.admitted, 0);
    const pct = (value: number) => Math.round(((value - reference.ideal) / reference.ideal) * 10_000) / 100;
    return {
      replicas: shape.replicas,
      load,
      ideal_admitted: reference.ideal,
      local_admitted: reference.local,
      synced_admitted: synced,
      error_pct: pct(synced),
      local_error_pct: pct(reference.local),
      requests_per_s: Math.round(trace.arrivals.length / (shape.durationMs / 1000)),
      store_cmds_per_s: Math.round(commands / elapsedS),
      store_cmds_per_request: Math.round((commands / trace.arrivals.length) * 10_000) / 10_000,
      replica_lag_ms_p99: Math.max(...done.map((r) => r.lagMsP99)),
    };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * ns per decision on the allow path, 1e5 keys visited in a shuffled order (as `bench:engine`'s
 * `_shuffled` case), local vs synced zone; the fastest of three passes.
 */
function decisionCost(sync: boolean): number {
  const KEYS = 100_000;
  const OPS = 1_000_000;
  const zone = new LimitReqZone('z', parseComplexValue('$key'), 64 << 20, 1_000_000_000, sync);
  const policy: LimitReqPolicy<{ key: string }> = {
    rules: [
      {
        zone,
        keyOf: (c) => c.key,
        keyText: '$key',
        burstMilli: 1000_000,
        delayMilli: Number.MAX_SAFE_INTEGER,
      },
    ],
    status: 503,
    logLevel: 'error',
    dryRun: false,
  };
  const keys = Array.from({ length: KEYS }, (_, i) => ({
    key: String.fromCharCode(10, (i >> 16) & 255, (i >> 8) & 255, i & 255),
  }));
  let x = 1;
  const order = Int32Array.from({ length: OPS }, () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % KEYS;
  });
  const T0 = 1_700_000_000_000;
  for (const ctx of keys) limitRequest(policy, ctx, T0, newOutcome());
  if (zone.sync) {
    // Steady state: every key heard of from the store, a third of its traffic here.
    const entries = zone.sync.collect(zone.table);
    for (const entry of entries) zone.sync.apply(zone.table, entry, { excessMilli: 0, share: 1 / 3 }, T0);
    zone.sync.freshMs = Number.POSITIVE_INFINITY;
  }
  // The fastest of three passes, the first of them warming the code up.
  let best = Number.POSITIVE_INFINITY;
  for (let pass = 0; pass < 3; pass++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++)
      limitRequest(policy, keys[order[i]!]!, T0 + pass * 2000 + (i >> 10), newOutcome());
    best = Math.min(best, Number(process.hrtime.bigint() - started) / OPS);
  }
  if (zone.counters.passed !== KEYS + 3 * OPS) throw new Error('the allow path refused');
  return best;
}

const redis = await RedisServer.start();
const runs: RunResult[] = [];
try {
  for (const replicas of [3, 10]) {
    for (const load of LOADS) {
      const shape: TraceShape = {
        replicas,
        durationMs: DURATION_MS,
        rate: 10,
        burst: 20,
        hotKeys: load.hotKeys,
        hotFactor: load.hotFactor,
        coolKeys: load.coolKeys,
        coolFactor: 0.2,
        seed: 7 + replicas,
      };
      const result = await runFleet(redis, shape, load.name);
      runs.push(result);
      console.log(
        `${String(replicas).padStart(2)} replicas, ${load.name.padEnd(4)}: ${result.requests_per_s} r/s offered; ` +
          `ideal ${result.ideal_admitted}, local ${result.local_admitted} (${result.local_error_pct} %), ` +
          `synced ${result.synced_admitted} (${result.error_pct} %); store ${result.store_cmds_per_s} cmd/s = ` +
          `${result.store_cmds_per_request} per request; replica lag p99 ${result.replica_lag_ms_p99} ms`,
      );
    }
  }
} finally {
  await redis.stop();
}

const costs = { local: [] as number[], synced: [] as number[] };
for (let round = 0; round < 5; round++) {
  costs.local.push(decisionCost(false));
  costs.synced.push(decisionCost(true));
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const nsLocal = Math.round(median(costs.local));
const nsSynced = Math.round(median(costs.synced));
console.log(
  `engine: ${nsLocal} ns per decision on a local zone, ${nsSynced} ns on a synced one (${(nsSynced / nsLocal).toFixed(2)} ×)`,
);

const last = runs.find((r) => r.replicas === 10 && r.load === 'peak')!;
console.log(
  JSON.stringify({
    ...last,
    ns_per_decision_local: nsLocal,
    ns_per_decision_synced: nsSynced,
    runs,
  }),
);
