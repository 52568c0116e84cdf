/**
 * One replica of the cluster-limits benchmark, run as a child process: a `limit_req_zone … sync`
 * engine zone with the replica's real sync loop (`LimitSync`) and heartbeat on the benchmark's Redis.
 * It replays its part of the arrival trace in real time (each arrival decided at its scheduled time)
 * and reports over IPC how many requests it admitted.
 *
 * argv: <redis url> <cluster> <replica id> <trace file> <replica index>; IPC: {start: epochMs} in,
 * {ready} and {admitted, decisions, lagMsP99} out.
 */
import { readFileSync } from 'node:fs';
import { parseComplexValue } from '../src/engine/complex-value.ts';
import { type LimitReqPolicy, limitRequest, newOutcome } from '../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../src/engine/limit-req/limit-req-zone.ts';
import { LimitSync } from '../src/replica/cluster/limit-sync.ts';
import { systemClock } from '../src/shared/clock.ts';
import { openRedisStore } from '../src/store/redis/open-redis-store.ts';
import type { Trace } from './cluster-limits-trace.ts';

const [url, cluster, id, traceFile, indexText] = process.argv.slice(2);
if (!url || !cluster || !id || !traceFile || !indexText || !process.send) {
  throw new Error('usage: cluster-limits-replica.ts <redis url> <cluster> <id> <trace> <index> (with IPC)');
}
const send = process.send.bind(process);
const index = Number(indexText);
const trace = JSON.parse(readFileSync(traceFile, 'utf8')) as Trace;
const mine = trace.arrivals.filter((a) => a[2] === index);

const store = openRedisStore({ url, cluster });
const zone = new LimitReqZone('api', parseComplexValue('$key'), 32 << 20, trace.rate * 1000, true);
const policy: LimitReqPolicy<{ key: string }> = {
  rules: [
    {
      zone,
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
const sync = new LimitSync({
  replicaId: id,
  store: store.limitSync,
  registry: store.registry,
  zones: () => [zone],
  clock: systemClock,
  heartbeat: () => ({ acknowledgedSentAtMs, ttlMs: 5000 }),
});
const info = () => ({
  id,
  version: 'bench',
  configHash: 'bench',
  appliedRevision: 0,
  appliedCommit: '',
  startedAtMs: systemClock.nowMs(),
  keyvalZones: [],
  limitReqZones: ['api'],
  zoneSync: sync.info(),
});
let acknowledgedSentAtMs: number | null = null;
const heartbeat = async () => {
  const sentAtMs = systemClock.nowMs();
  await store.registry.heartbeat(info(), 5000).then(
    () => {
      acknowledgedSentAtMs = sentAtMs;
    },
    () => {},
  );
};
await heartbeat();
const heartbeats = setInterval(() => void heartbeat(), 1000);

process.on('message', (message: { start?: number }) => {
  if (message.start === undefined) return;
  void replay(message.start);
});
send({ ready: true });

async function replay(startMs: number): Promise<void> {
  // Every replica has heartbeated before the start: the first share is 1 / N, as in a fleet.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, startMs - 500 - systemClock.nowMs())));
  await sync.refreshLive();
  sync.start();
  let admitted = 0;
  let next = 0;
  const lags: number[] = [];
  const keys = trace.keys;
  await new Promise<void>((resolve) => {
    const step = () => {
      const nowMs = systemClock.nowMs();
      while (next < mine.length && startMs + mine[next]![0] <= nowMs) {
        const [atMs, key] = mine[next]!;
        const scheduledMs = startMs + atMs;
        lags.push(nowMs - scheduledMs);
        if (limitRequest(policy, { key: keys[key]! }, scheduledMs, newOutcome()).status === 'PASSED') {
          admitted++;
        }
        next++;
      }
      if (next === mine.length) resolve();
      else setTimeout(step, 1);
    };
    setTimeout(step, Math.max(0, startMs - systemClock.nowMs()));
  });
  clearInterval(heartbeats);
  await sync.stop();
  lags.sort((a, b) => a - b);
  send({ admitted, decisions: mine.length, lagMsP99: lags[Math.floor(lags.length * 0.99)] ?? 0 });
  await store.close();
  process.disconnect();
}
