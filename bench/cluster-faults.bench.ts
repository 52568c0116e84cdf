/**
 * A seeded, randomized fault run for cluster-wide limits (`limit_req_zone … sync`): three replica
 * processes on a real Redis (the last one reaching it through a proxy that can cut it off), their
 * clocks set apart at random (±5 s, a test-only offset), and one real nginx fed the same requests
 * (the ideal). Clients at twice `rate=10r/s burst=5`, round-robin over the replicas, for the whole
 * run, while faults strike one after another at random: Redis frozen (SIGSTOP) or killed and
 * restarted empty for 2–6 s, the last replica cut off for 3–15 s, or a replica replaced by a new one.
 *
 * The report: per fault, its window and the 3 s after it, the ideal's admissions, the fleet's, and
 * docs/cluster-limits.md's bound for the window; a window above its bound is a failure (exit 1).
 * `SEED=… FAULTS=…` (default 1, 8). Last line: JSON.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  admittedBetween,
  Fleet,
  type FleetReplica,
  perKeyBound,
  sendClients,
  startIdealNginx,
  type ZoneSpec,
} from '../test/cluster-limits/fleet.ts';
import { stopAll } from '../test/helpers/limitswitch-process.ts';
import { PartitionProxy } from '../test/helpers/partition-proxy.ts';
import { RedisServer } from '../test/helpers/redis-server.ts';
import { seededRandom } from '../test/helpers/seeded-random.ts';
import { waitFor } from '../test/helpers/wait-for.ts';

const SEED = Number(process.env.SEED ?? 1);
const FAULTS = Number(process.env.FAULTS ?? 8);
const ZONE: ZoneSpec = { rate: 10, burst: 5, sync: true };
const REPLICAS = 3;
const CLIENTS = 6;
const PER_CLIENT_RPS = 20;
const SETTLE_MS = 3000;

type FaultKind = 'freeze' | 'kill' | 'partition' | 'churn';

interface Fault {
  readonly kind: FaultKind;
  readonly lastsMs: number;
  /** When it is due, from the stream's start (each fault has its slot: it lasts, then 5 s of calm). */
  dueMs: number;
  fromMs: number;
  toMs: number;
}

/** A replica's replacement takes a second or two (a process starts): its slot. */
const CHURN_SLOT_MS = 3000;

const rand = seededRandom(SEED);
const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
const skewsMs = Array.from({ length: REPLICAS }, () => between(-5000, 5000));
const faults: Fault[] = Array.from({ length: FAULTS }, () => {
  const kind = (['freeze', 'kill', 'partition', 'churn'] as const)[between(0, 3)]!;
  const lastsMs = kind === 'partition' ? between(3000, 15_000) : kind === 'churn' ? 0 : between(2000, 6000);
  return { kind, lastsMs, dueMs: 0, fromMs: 0, toMs: 0 };
});
let slotMs = SETTLE_MS;
for (const fault of faults) {
  fault.dueMs = slotMs;
  slotMs += (fault.kind === 'churn' ? CHURN_SLOT_MS : fault.lastsMs) + SETTLE_MS + 2000;
}
const totalMs = slotMs;

async function main(): Promise<void> {
  const redis = await RedisServer.start();
  const proxy = await PartitionProxy.start(redis.port);
  const env = (i: number) => ({ LIMITSWITCH_TEST_CLOCK_OFFSET_MS: String(skewsMs[i % REPLICAS]) });
  const fleet = await Fleet.start(redis.url, ZONE, REPLICAS, {
    each: (i) => ({
      storeUrl: i === REPLICAS - 1 ? `redis://127.0.0.1:${proxy.port}` : undefined,
      env: env(i),
    }),
  });
  const nginx = await startIdealNginx(fleet.upstreamPort, ZONE);
  const allSynced = () =>
    waitFor(
      async () => {
        const views = await Promise.all(fleet.replicas.map((r) => fleet.zoneSync(r).catch(() => null)));
        return views.every((v) => v?.zones?.api?.mode === 'synced' && v.zones.api.live_replicas === REPLICAS);
      },
      { timeoutMs: 30_000, intervalMs: 50, message: 'every replica synced with all live' },
    );
  await allSynced();
  console.log(
    `cluster faults: seed ${SEED}, ${FAULTS} faults, clocks ${skewsMs.map((s) => `${s > 0 ? '+' : ''}${s} ms`).join(', ')}`,
  );

  const urls = fleet.replicas.map((r) => r.url);
  let startedMs = 0;
  let churned = 0;
  const elapsed = () => performance.now() - startedMs;
  const strike = async (fault: Fault) => {
    fault.fromMs = elapsed();
    if (fault.kind === 'freeze') {
      redis.pause();
      await sleep(fault.lastsMs);
      redis.resume();
    } else if (fault.kind === 'kill') {
      await redis.kill();
      await sleep(fault.lastsMs);
      await redis.restart();
    } else if (fault.kind === 'partition') {
      proxy.cut();
      await sleep(fault.lastsMs);
      proxy.heal();
    } else {
      // one of the replicas on the store directly, replaced: the old one stops gracefully
      const index = between(0, REPLICAS - 2);
      const old = fleet.replicas[index] as FleetReplica;
      const replacement = await fleet.add(`c${++churned}`, { env: env(index) });
      urls[urls.indexOf(old.url)] = replacement.url;
      await fleet.remove(old);
    }
    fault.toMs = elapsed();
  };
  const faultsDone = (async () => {
    while (startedMs === 0) await sleep(10);
    for (const fault of faults) {
      await sleep(Math.max(0, fault.dueMs - elapsed()));
      await strike(fault);
    }
  })();
  const [ideal, admitted] = await sendClients([[`http://127.0.0.1:${nginx.port}`], urls], {
    clients: CLIENTS,
    perClientRps: PER_CLIENT_RPS,
    durationMs: totalMs,
    net: 9,
    onStarted: (ms) => {
      startedMs = ms;
    },
  });
  await faultsDone;

  const rows: Record<string, unknown>[] = [];
  let aboveBound = 0;
  const report = (label: string, fromMs: number, toMs: number, cutOffShare: number) => {
    const i = admittedBetween(ideal!, fromMs, toMs);
    const f = admittedBetween(admitted!, fromMs, toMs);
    const bound = CLIENTS * perKeyBound(ZONE, REPLICAS, (toMs - fromMs) / 1000, cutOffShare);
    if (f > bound) aboveBound++;
    const errorPct = i === 0 ? 0 : ((f - i) / i) * 100;
    console.log(
      `${label.padEnd(28)} [${(fromMs / 1000).toFixed(1).padStart(6)} s, ${(toMs / 1000).toFixed(1).padStart(6)} s)  ideal ${String(i).padStart(4)}  fleet ${String(f).padStart(4)} (${errorPct >= 0 ? '+' : ''}${errorPct.toFixed(1)} %)  bound ${bound.toFixed(0).padStart(5)}${f > bound ? '  ABOVE' : ''}`,
    );
    rows.push({
      window: label,
      from_ms: Math.round(fromMs),
      to_ms: Math.round(toMs),
      ideal: i,
      fleet: f,
      bound: Math.round(bound),
    });
  };
  for (const fault of faults) {
    if (fault.kind === 'churn') {
      report('replica replaced', fault.fromMs, fault.toMs + 3000, 0);
      continue;
    }
    const share = fault.kind === 'partition' ? 1 / REPLICAS : 0;
    report(`${fault.kind} ${(fault.lastsMs / 1000).toFixed(1)} s`, fault.fromMs, fault.toMs, share);
    report('  the 3 s after', fault.toMs, fault.toMs + 3000, 0);
  }
  report('whole run', 0, totalMs, 1 / REPLICAS);
  console.log(aboveBound === 0 ? 'every window within its bound' : `${aboveBound} windows above their bound`);
  console.log(JSON.stringify({ seed: SEED, faults: FAULTS, clocks_ms: skewsMs, windows: rows }));

  await Promise.all([fleet.stop(), nginx.stop()]);
  await proxy.close();
  await redis.stop();
  await stopAll();
  process.exitCode = aboveBound === 0 ? 0 : 1;
}

await main();
