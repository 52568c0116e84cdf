/** The engine's side of a synced zone (zone-sync.ts), request by request. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { type LimitReqPolicy, limitRequest, newOutcome } from '../../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../../src/engine/limit-req/limit-req-zone.ts';

type Ctx = { key: string };

function zone(sync: boolean, rateMilli = 10_000): LimitReqZone {
  return new LimitReqZone('api', parseComplexValue('$key'), 1 << 20, rateMilli, sync);
}

function policy(
  z: LimitReqZone,
  burst: number,
  delay = Number.MAX_SAFE_INTEGER,
  dryRun = false,
): LimitReqPolicy<Ctx> {
  return {
    rules: [{ zone: z, keyOf: (c) => c.key, keyText: '$key', burstMilli: burst * 1000, delayMilli: delay }],
    status: 503,
    logLevel: 'error',
    dryRun,
  };
}

function decide(p: LimitReqPolicy<Ctx>, key: string, nowMs: number) {
  const out = limitRequest(p, { key }, nowMs, newOutcome());
  return { status: out.status, delayMs: out.delayMs, logs: out.logs.map((l) => l.message) };
}

const T = 1_700_000_000_000;

describe('a synced zone on one replica', () => {
  it('alone with a key (share 1) decides every request as a local zone does', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ stepMs: fc.integer({ min: 0, max: 300 }), key: fc.constantFrom('a', 'b') }), {
          maxLength: 200,
        }),
        fc.integer({ min: 0, max: 5 }),
        fc.option(fc.integer({ min: 0, max: 5 }), { nil: undefined }),
        (steps, burst, delay) => {
          const local = policy(zone(false), burst, delay === undefined ? undefined : delay * 1000);
          const synced = policy(zone(true), burst, delay === undefined ? undefined : delay * 1000);
          let now = T;
          for (const step of steps) {
            now += step.stepMs;
            assert.deepEqual(decide(synced, step.key, now), decide(local, step.key, now));
          }
        },
      ),
    );
  });

  it('before the store has spoken, a key gets this replica’s default share of the burst', () => {
    const z = zone(true);
    z.sync!.defaultShare = 1 / 4;
    const p = policy(z, 8);
    // The first request is free; then each costs 4 (1 / share): 0 → 4 → 8 admitted, 12 > 8 refused.
    const statuses = Array.from({ length: 5 }, () => decide(p, 'a', T).status);
    assert.deepEqual(statuses, ['PASSED', 'PASSED', 'PASSED', 'REJECTED', 'REJECTED']);
  });

  it('a cluster in debt (excess above the burst) refuses here too, with nginx’s line and the cluster’s excess', () => {
    const z = zone(true);
    z.sync!.freshMs = 10_000; // the store's word holds through the test
    const p = policy(z, 2);
    assert.equal(decide(p, 'a', T).status, 'PASSED');
    const [entry] = z.sync!.collect(z.table);
    assert.deepEqual(
      { key: entry!.key, charged: entry!.charged, seen: entry!.seen },
      { key: 'a', charged: 1, seen: 1 },
    );
    // The store: 5.5 requests beyond the free one, this replica one third of the arrivals.
    z.sync!.apply(z.table, entry!, { excessMilli: 5500, share: 1 / 3 }, T);
    const refused = decide(p, 'a', T + 100); // 5.5 − 1 leaked at 10 r/s: 4.5 > 2
    assert.equal(refused.status, 'REJECTED');
    assert.deepEqual(refused.logs, ['limiting requests, excess: 4.500 by zone "api"']);
    // Dry run refuses nothing but says so.
    assert.equal(decide(policy(z, 2, undefined, true), 'a', T + 100).status, 'REJECTED_DRY_RUN');
    // Once the debt has leaked below the burst, this replica's part decides, each request costing 3:
    // at T + 600 its part (4.5 at T + 100) has leaked to −0.5, and −0.5 + 3 > 2.
    assert.equal(decide(p, 'a', T + 600).status, 'REJECTED');
    assert.equal(decide(p, 'a', T + 700).status, 'PASSED'); // −1.5 + 3 = 1.5 ≤ 2
  });

  it('a batch collected is not collected again; what follows goes in the next, with when it began', () => {
    const z = zone(true);
    const p = policy(z, 5);
    for (let i = 0; i < 3; i++) decide(p, 'a', T + i);
    const [first] = z.sync!.collect(z.table);
    assert.deepEqual(
      { charged: first!.charged, seen: first!.seen, firstSeenMs: first!.firstSeenMs },
      { charged: 3, seen: 3, firstSeenMs: T },
    );
    assert.equal(z.sync!.pending, 0);
    decide(p, 'a', T + 50);
    const [next] = z.sync!.collect(z.table);
    assert.deepEqual(
      { charged: next!.charged, seen: next!.seen, firstSeenMs: next!.firstSeenMs },
      { charged: 1, seen: 1, firstSeenMs: T + 50 },
    );
  });

  it('cut off from the store: the share a key had, shrinking to none (every request refused), whole milli-requests in the log', () => {
    const z = zone(true);
    z.sync!.defaultShare = 1 / 3;
    const p = policy(z, 2);
    assert.equal(decide(p, 'a', T).status, 'PASSED');
    const [entry] = z.sync!.collect(z.table);
    z.sync!.apply(z.table, entry!, { excessMilli: -1000, share: 0.3 }, T);
    // Lost at T: the word of T holds past freshMs, at the held fraction.
    z.sync!.lostSinceMs = T;
    z.sync!.heldFraction = 0.5;
    // Each request costs ceil(1000 / (0.3 × 0.5)) = 6667: one admitted on a 2-request burst, then refused.
    assert.equal(decide(p, 'a', T + 1000).status, 'PASSED');
    const refused = decide(p, 'a', T + 1000);
    assert.equal(refused.status, 'REJECTED');
    assert.deepEqual(refused.logs, ['limiting requests, excess: 6.667 by zone "api"']);
    z.sync!.heldFraction = 0;
    const none = decide(p, 'a', T + 60_000);
    assert.equal(none.status, 'REJECTED');
    assert.deepEqual(none.logs, ['limiting requests, excess: 0.000 by zone "api"']);
    // Back in touch: the default share for a key without fresh word.
    z.sync!.lostSinceMs = null;
    z.sync!.heldFraction = 1;
    assert.equal(decide(p, 'a', T + 120_000).status, 'PASSED');
  });

  it('counts what it charges: the first request of a node too (the store decides if it is free)', () => {
    const z = zone(true);
    const p = policy(z, 0);
    decide(p, 'a', T);
    decide(p, 'a', T); // refused: seen, not charged
    const [entry] = z.sync!.collect(z.table);
    assert.deepEqual({ charged: entry!.charged, seen: entry!.seen }, { charged: 1, seen: 2 });
  });
});
