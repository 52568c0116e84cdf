/**
 * The merged-state rule of `limit_req_zone … sync` (engine/limit-req/zone-sync.ts with the store's
 * bucket), over random fleets, rates, bursts, arrivals and sync phases: in every window of time the
 * fleet admits no more than one nginx could (its first request, the burst and the rate over the
 * window) plus the bound of docs/cluster-limits.md — one free request per further replica, and one
 * burst and two sync intervals' leak while a key's traffic reaches replicas that have no word of it
 * yet. And on steady traffic it admits what one nginx fed the merged stream admits.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { type LimitReqRule, limitRequest, newOutcome } from '../../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../../src/engine/limit-req/limit-req-zone.ts';
import { openMemoryStore } from '../../src/store/memory/open-memory-store.ts';

const SYNC_MS = 100;
const KEY = '\x0a\x00\x00\x01';
const T0 = 1_700_000_000_000;

interface Scenario {
  readonly replicas: number;
  readonly rate: number;
  readonly burst: number;
  /** Arrivals: ms after the previous one, and the replica it reaches. */
  readonly arrivals: readonly { readonly stepMs: number; readonly replica: number }[];
  /** Each replica syncs every SYNC_MS from its own phase. */
  readonly phasesMs: readonly number[];
}

const scenarioArb = fc.integer({ min: 2, max: 10 }).chain((replicas) =>
  fc.record({
    replicas: fc.constant(replicas),
    rate: fc.constantFrom(5, 20, 100),
    burst: fc.constantFrom(0, 5, 20),
    arrivals: fc.array(
      fc.record({
        stepMs: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.constant(0)),
        replica: fc.oneof(
          fc.integer({ min: 0, max: replicas - 1 }),
          fc.constant(0), // skew: the first replica gets more
        ),
      }),
      { minLength: 50, maxLength: 600 },
    ),
    phasesMs: fc.array(fc.integer({ min: 0, max: SYNC_MS - 1 }), {
      minLength: replicas,
      maxLength: replicas,
    }),
  }),
);

function rule(zone: LimitReqZone, burst: number): LimitReqRule<null> {
  return {
    zone,
    keyOf: () => KEY,
    keyText: '$k',
    burstMilli: burst * 1000,
    delayMilli: Number.MAX_SAFE_INTEGER,
  };
}

function admits(zone: LimitReqZone, burst: number, nowMs: number): boolean {
  const policy = { rules: [rule(zone, burst)], status: 503, logLevel: 'error' as const, dryRun: false };
  return limitRequest(policy, null, nowMs, newOutcome()).status !== 'REJECTED';
}

/** The clocks of the requests the ideal (one zone, the merged stream) and the fleet admitted. */
async function run(s: Scenario): Promise<{ ideal: number[]; synced: number[] }> {
  const ideal = new LimitReqZone('ideal', parseComplexValue('$k'), 1 << 20, s.rate * 1000);
  const fleet = Array.from({ length: s.replicas }, () => {
    const zone = new LimitReqZone('api', parseComplexValue('$k'), 1 << 20, s.rate * 1000, true);
    zone.sync!.defaultShare = 1 / s.replicas;
    return zone;
  });
  // The store's clock: the simulated time of each exchange.
  let storeNowMs = T0;
  const { limitSync } = openMemoryStore({ clock: { nowMs: () => storeNowMs } });
  const seqs = fleet.map(() => 0);
  const nextSync = s.phasesMs.map((phase) => T0 + phase);
  const syncDue = async (nowMs: number) => {
    for (;;) {
      let r = -1;
      for (let i = 0; i < fleet.length; i++)
        if (nextSync[i]! <= nowMs && (r < 0 || nextSync[i]! < nextSync[r]!)) r = i;
      if (r < 0) return;
      const at = nextSync[r]!;
      nextSync[r] = at + SYNC_MS;
      const zone = fleet[r]!;
      const entries = zone.sync!.collect(zone.table);
      if (entries.length === 0) continue;
      storeNowMs = at;
      const buckets = await limitSync.exchange({
        zone: 'api',
        rateMilli: zone.rateMilli,
        replicaId: `r${r}`,
        incarnation: 'i',
        seq: ++seqs[r]!,
        entries: entries.map((e) => ({
          key: e.key,
          charged: e.charged,
          seen: e.seen,
          ageMs: at - e.firstSeenMs,
        })),
      });
      for (const [j, entry] of entries.entries()) zone.sync!.apply(zone.table, entry, buckets[j]!, at);
    }
  };
  let nowMs = T0;
  const out = { ideal: [] as number[], synced: [] as number[] };
  for (const arrival of s.arrivals) {
    nowMs += arrival.stepMs;
    await syncDue(nowMs);
    if (admits(ideal, s.burst, nowMs)) out.ideal.push(nowMs);
    if (admits(fleet[arrival.replica]!, s.burst, nowMs)) out.synced.push(nowMs);
  }
  return out;
}

/** The most requests admitted in any window beyond what one nginx may admit in it. */
function worstOverBudget(admittedMs: readonly number[], rate: number, burst: number): number {
  let worst = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < admittedMs.length; i++) {
    for (let j = i; j < admittedMs.length; j++) {
      const budget = 1 + burst + Math.floor((rate * (admittedMs[j]! - admittedMs[i]!)) / 1000);
      worst = Math.max(worst, j - i + 1 - budget);
    }
  }
  return worst;
}

describe('cluster-wide limit_req: the merged-state rule', () => {
  it('in no window admits more than one nginx could, plus N − 1 + burst + two intervals at the rate', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArb, async (s) => {
        const { ideal, synced } = await run(s);
        // The oracle itself never exceeds the budget.
        assert.ok(worstOverBudget(ideal, s.rate, s.burst) <= 0);
        const bound = s.replicas - 1 + s.burst + Math.ceil((s.rate * 2 * SYNC_MS) / 1000);
        const over = worstOverBudget(synced, s.rate, s.burst);
        assert.ok(over <= bound, `${over} over the budget in a window, bound ${bound}`);
      }),
      { numRuns: 200 },
    );
  });

  it('traffic moving from one replica to all of them at once stays within the bound', async () => {
    // Replica 0 alone for 3 s (its share goes to 1), then 10 replicas round-robin at 10× the rate for 10 s.
    const alone = Array.from({ length: 60 }, () => ({ stepMs: 50, replica: 0 }));
    const spread = Array.from({ length: 5000 }, (_, i) => ({ stepMs: 2, replica: i % 10 }));
    const s = {
      replicas: 10,
      rate: 50,
      burst: 20,
      arrivals: [...alone, ...spread],
      phasesMs: [0, 10, 20, 30, 40, 50, 60, 70, 80, 90],
    };
    const { ideal, synced } = await run(s);
    const over = worstOverBudget(synced, s.rate, s.burst);
    assert.ok(over <= 9 + 20 + 10, `${over} over the budget`);
    // Over the whole run the debt is repaid: within 2 % of the ideal.
    assert.ok(
      Math.abs(synced.length - ideal.length) / ideal.length < 0.02,
      `${synced.length} vs ${ideal.length}`,
    );
  });

  for (const [name, pick] of [
    ['round-robin', (i: number) => i % 3],
    ['random', (i: number) => (i * 7919) % 3],
    ['skewed 80/20', (i: number) => (i % 10 < 8 ? 0 : 1 + (i % 2))],
  ] as const) {
    it(`a ${name} client over 3 replicas gets the single-nginx figure (a local zone: up to 3×)`, async () => {
      const arrivals = Array.from({ length: 3000 }, (_, i) => ({ stepMs: 2, replica: pick(i) }));
      const { ideal, synced } = await run({
        replicas: 3,
        rate: 50,
        burst: 10,
        arrivals,
        phasesMs: [0, 33, 66],
      });
      // 500 r/s offered for 5.998 s, 50 r/s allowed: nginx admits the first, the burst of 10, and
      // 299 more as the bucket leaks.
      assert.equal(ideal.length, 1 + 10 + 299);
      assert.ok(Math.abs(synced.length - ideal.length) / ideal.length < 0.02, `synced ${synced.length}`);
    });
  }
});
