/**
 * Issue 29: a synced zone through the store's faults, with real processes — three replicas, a real
 * Redis, one real nginx fed the same requests (the ideal), six clients told apart by
 * `X-Forwarded-For` (`real_ip_header`), each sending twice the rate, spread round-robin over the
 * replicas. Each test strikes one fault during the stream and compares, in a window of it, what the
 * fleet admitted with what the ideal admitted and with the bound of docs/cluster-limits.md.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { RunningNginx } from '../helpers/nginx.ts';
import { PartitionProxy } from '../helpers/partition-proxy.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import {
  admittedBetween,
  Fleet,
  perKeyBound,
  type Sent,
  sendClients,
  startIdealNginx,
  type ZoneSpec,
} from './fleet.ts';

const ZONE: ZoneSpec = { rate: 10, burst: 5, sync: true };
const REPLICAS = 3;
const CLIENTS = 6;
/** Each client at twice the rate: one nginx refuses half. */
const PER_CLIENT_RPS = 20;
/** docs/cluster-limits.md's bound for the six clients in a window of `windowS` seconds. */
function upperBound(windowS: number, cutOffShare = 0): number {
  return CLIENTS * perKeyBound(ZONE, REPLICAS, windowS, cutOffShare);
}

interface Scene {
  readonly redis: RedisServer;
  readonly fleet: Fleet;
  readonly nginx: RunningNginx;
  readonly proxy: PartitionProxy | null;
}

const scenes: Scene[] = [];

async function scene(
  options: { partitioned?: boolean; clockOffsetsMs?: readonly number[] } = {},
): Promise<Scene> {
  const redis = await RedisServer.start();
  const proxy = options.partitioned ? await PartitionProxy.start(redis.port) : null;
  const fleet = await Fleet.start(redis.url, ZONE, REPLICAS, {
    each: (i) => ({
      // the last replica reaches the store through the proxy that can cut it off
      storeUrl: proxy !== null && i === REPLICAS - 1 ? `redis://127.0.0.1:${proxy.port}` : undefined,
      env:
        options.clockOffsetsMs === undefined
          ? undefined
          : { LIMITSWITCH_TEST_CLOCK_OFFSET_MS: String(options.clockOffsetsMs[i]) },
    }),
  });
  const nginx = await startIdealNginx(fleet.upstreamPort, ZONE);
  const made = { redis, fleet, nginx, proxy };
  scenes.push(made);
  await waitFor(
    async () => {
      const views = await Promise.all(fleet.replicas.map((r) => fleet.zoneSync(r).catch(() => null)));
      return views.every((v) => v?.zones?.api?.mode === 'synced' && v.zones.api.live_replicas === REPLICAS);
    },
    { timeoutMs: 20_000, intervalMs: 20, message: 'every replica synced with all live' },
  );
  return made;
}

/** The stream to the ideal and to the fleet at once, with `faults` timed from its start. */
async function stream(
  s: Scene,
  durationMs: number,
  net: number,
  faults: readonly { atMs: number; strike: () => unknown }[],
): Promise<{ ideal: Sent[]; fleet: Sent[]; struckAtMs: number[] }> {
  const struckAtMs: number[] = [];
  const pending: Promise<unknown>[] = [];
  const [ideal, fleet] = await sendClients(
    [[`http://127.0.0.1:${s.nginx.port}`], s.fleet.replicas.map((r) => r.url)],
    {
      clients: CLIENTS,
      perClientRps: PER_CLIENT_RPS,
      durationMs,
      net,
      onStarted: (startedMs) => {
        for (const [i, fault] of faults.entries()) {
          pending.push(
            new Promise<void>((resolve) =>
              setTimeout(async () => {
                await fault.strike();
                struckAtMs[i] = performance.now() - startedMs;
                resolve();
              }, fault.atMs),
            ),
          );
        }
      },
    },
  );
  await Promise.all(pending);
  return { ideal: ideal!, fleet: fleet!, struckAtMs };
}

function window(
  run: { ideal: Sent[]; fleet: Sent[] },
  fromMs: number,
  toMs: number,
): { ideal: number; fleet: number; text: string } {
  const ideal = admittedBetween(run.ideal, fromMs, toMs);
  const fleet = admittedBetween(run.fleet, fromMs, toMs);
  return {
    ideal,
    fleet,
    text: `[${(fromMs / 1000).toFixed(1)} s, ${(toMs / 1000).toFixed(1)} s): ideal ${ideal}, fleet ${fleet}`,
  };
}

/** Admitted per second of the stream, ideal/fleet: the shape of a run, for its diagnostics. */
function timeline(run: { ideal: Sent[]; fleet: Sent[] }, durationMs: number): string {
  const seconds: string[] = [];
  for (let from = 0; from < durationMs; from += 1000) {
    seconds.push(
      `${admittedBetween(run.ideal, from, from + 1000)}/${admittedBetween(run.fleet, from, from + 1000)}`,
    );
  }
  return `per second (ideal/fleet): ${seconds.join(' ')}`;
}

after(async () => {
  for (const s of scenes) {
    await Promise.all([s.fleet.stop(), s.nginx.stop()]);
    await s.proxy?.close();
    await s.redis.stop();
  }
});

describe('a synced zone through the store’s faults (3 replicas, real Redis, nginx as the ideal)', () => {
  it('Redis frozen 5 s (SIGSTOP, SIGCONT): the 3 s after it ≥ 80 % of the ideal, never above the bound', async (t) => {
    const s = await scene();
    const run = await stream(s, 12_000, 1, [
      { atMs: 3000, strike: () => s.redis.pause() },
      { atMs: 8000, strike: () => s.redis.resume() },
    ]);
    const resumedAtMs = run.struckAtMs[1]!;
    const after3s = window(run, resumedAtMs, resumedAtMs + 3000);
    const frozen = window(run, run.struckAtMs[0]!, resumedAtMs);
    t.diagnostic(`frozen ${frozen.text}; after SIGCONT ${after3s.text}; ${timeline(run, 12_000)}`);
    assert.ok(after3s.fleet >= 0.8 * after3s.ideal, after3s.text);
    assert.ok(after3s.fleet <= upperBound(3), `${after3s.text}, bound ${upperBound(3)}`);
    assert.ok(frozen.fleet <= upperBound((resumedAtMs - run.struckAtMs[0]!) / 1000), frozen.text);
  });

  it('Redis killed 5 s and restarted empty: the 3 s after ≥ 80 % of the ideal, never above the bound', async (t) => {
    const s = await scene();
    const run = await stream(s, 12_000, 2, [
      { atMs: 3000, strike: () => s.redis.kill() },
      { atMs: 8000, strike: () => s.redis.restart() },
    ]);
    const restartedAtMs = run.struckAtMs[1]!;
    const after3s = window(run, restartedAtMs, restartedAtMs + 3000);
    const away = window(run, run.struckAtMs[0]!, restartedAtMs);
    t.diagnostic(`away ${away.text}; after the restart ${after3s.text}; ${timeline(run, 12_000)}`);
    assert.ok(after3s.fleet >= 0.8 * after3s.ideal, after3s.text);
    assert.ok(after3s.fleet <= upperBound(3), `${after3s.text}, bound ${upperBound(3)}`);
  });

  it('one replica cut off from Redis for 15 s: the fleet within the bound over the cut; healed, back near the ideal', async (t) => {
    const s = await scene({ partitioned: true });
    const proxy = s.proxy!;
    const run = await stream(s, 24_000, 3, [
      { atMs: 3000, strike: () => proxy.cut() },
      { atMs: 18_000, strike: () => proxy.heal() },
    ]);
    const [cutAtMs, healedAtMs] = run.struckAtMs as [number, number];
    const cut = window(run, cutAtMs, healedAtMs);
    const bound = upperBound((healedAtMs - cutAtMs) / 1000, 1 / REPLICAS);
    const healed = window(run, healedAtMs + 1000, healedAtMs + 4000);
    t.diagnostic(
      `cut ${cut.text} (bound ${bound.toFixed(0)}); healed ${healed.text}; ${timeline(run, 24_000)}`,
    );
    assert.ok(cut.fleet <= bound, `${cut.text}, bound ${bound}`);
    assert.ok(cut.fleet >= 0.8 * cut.ideal, cut.text);
    assert.ok(healed.fleet <= upperBound(3), `${healed.text}, bound ${upperBound(3)}`);
    assert.ok(healed.fleet >= 0.8 * healed.ideal, healed.text);
  });

  it('replica clocks 5 s behind, right and 5 s ahead: within 5 % of the ideal', async (t) => {
    const s = await scene({ clockOffsetsMs: [-5000, 0, 5000] });
    const run = await stream(s, 9000, 4, []);
    const steady = window(run, 2000, 9000);
    t.diagnostic(`clocks −5 s, 0, +5 s: ${steady.text}; ${timeline(run, 9000)}`);
    assert.ok(Math.abs(steady.fleet - steady.ideal) <= 0.05 * steady.ideal, steady.text);
  });
});
