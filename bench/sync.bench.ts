/**
 * Toggle propagation: one writer toggles a key; 10 replicas, each its own process with its own store
 * connection and `KeyvalSync`, apply it. Latency = applied (replica clock) − just before the write
 * (writer clock), same machine. One toggle at a time: the next one `PAUSE_MS` (default 5) after all
 * 10 applied the previous.
 * Prints p50/p99 over every (toggle, replica) pair; the last line is JSON.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { openRedisStore } from '../src/store/redis/open-redis-store.ts';
import { RedisServer } from '../test/helpers/redis-server.ts';

const REPLICAS = 10;
const TOGGLES = Number(process.env.TOGGLES ?? 2000);
const WARMUP = 100;
const PAUSE_MS = Number(process.env.PAUSE_MS ?? 5);

const server = await RedisServer.start();
const cluster = `bench-${randomUUID()}`;
const store = openRedisStore({ url: server.url, cluster });
const writer = store.keyvals;
const children: ChildProcess[] = [];
const pending = new Map<number, { sentAtMs: number; applied: number[] }>();
let onAllApplied: (() => void) | null = null;

try {
  const ready: Promise<void>[] = [];
  for (let i = 0; i < REPLICAS; i++) {
    const child = fork(new URL('./sync-replica.ts', import.meta.url), [server.url, cluster], {
      execArgv: ['--import', 'tsx'],
    });
    children.push(child);
    ready.push(
      new Promise((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`replica ${i} exited with ${code}`)));
        child.on('message', (m: { ready?: boolean; revision?: number; appliedAtMs?: number }) => {
          if (m.ready !== undefined) {
            if (m.ready) resolve();
            else reject(new Error(`replica ${i} is not connected`));
            return;
          }
          const toggle = pending.get(m.revision!);
          if (!toggle) return;
          toggle.applied.push(m.appliedAtMs! - toggle.sentAtMs);
          if (toggle.applied.length === REPLICAS) onAllApplied?.();
        });
      }),
    );
  }
  await Promise.all(ready);

  const samples: number[] = [];
  const total = WARMUP + TOGGLES;
  let revision = (await writer.head()).revision;
  for (let i = 0; i < total; i++) {
    const toggle = { sentAtMs: 0, applied: [] as number[] };
    pending.set(revision + 1, toggle);
    const allApplied = new Promise<void>((resolve) => {
      onAllApplied = resolve;
    });
    toggle.sentAtMs = performance.timeOrigin + performance.now();
    const result = await writer.set('bench', 'switch', {
      value: i % 2 === 0 ? 'on' : 'off',
      expireAtMs: null,
    });
    if (result.revision !== revision + 1) throw new Error(`another writer? revision ${result.revision}`);
    revision = result.revision;
    await allApplied;
    pending.delete(revision);
    if (i >= WARMUP) samples.push(...toggle.applied);
    // Toggles are operator or alert actions, not a stream: let the replicas go idle in between.
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
  }

  samples.sort((a, b) => a - b);
  const quantile = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]!;
  const round = (ms: number) => Math.round(ms * 1000) / 1000;
  const result = {
    p50_ms: round(quantile(0.5)),
    p99_ms: round(quantile(0.99)),
    max_ms: round(samples[samples.length - 1]!),
    toggles: TOGGLES,
    samples: samples.length,
    replicas: REPLICAS,
  };
  console.log(
    `toggle → applied on ${REPLICAS} replica processes, ${TOGGLES} toggles (after ${WARMUP} warm-up)`,
  );
  console.log(`p50 ${result.p50_ms} ms, p99 ${result.p99_ms} ms, max ${result.max_ms} ms`);
  console.log(JSON.stringify(result));
} finally {
  for (const child of children) child.disconnect();
  await Promise.all(
    children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)),
  );
  await store.close();
  await server.stop();
}
