import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import {
  formatExcess,
  type LimitReqPolicy,
  type LimitReqRule,
  limitRequest,
  newOutcome,
} from '../../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../../src/engine/limit-req/limit-req-zone.ts';

type Ctx = Record<string, string>;
const NODELAY = Number.MAX_SAFE_INTEGER;

function zone(name: string, rate: string, sizeBytes = 1024 * 1024): LimitReqZone {
  const [n, unit] = rate.split('r/') as [string, string];
  const rateMilli = Math.floor((Number(n) * 1000) / (unit === 'm' ? 60 : 1));
  return new LimitReqZone(name, parseComplexValue(`$${name}`), sizeBytes, rateMilli);
}

function rule(
  z: LimitReqZone,
  opts: { burst?: number; delay?: number; nodelay?: boolean } = {},
): LimitReqRule<Ctx> {
  return {
    zone: z,
    keyOf: (ctx) => ctx[z.name] ?? '',
    keyText: `$${z.name}`,
    burstMilli: (opts.burst ?? 0) * 1000,
    delayMilli: opts.nodelay ? NODELAY : (opts.delay ?? 0) * 1000,
  };
}

function policy(rules: LimitReqRule<Ctx>[], extra: Partial<LimitReqPolicy<Ctx>> = {}): LimitReqPolicy<Ctx> {
  return { rules, status: 503, logLevel: 'error', dryRun: false, ...extra };
}

/** Runs requests and returns `STATUS[:delay]` per request. */
function run(p: LimitReqPolicy<Ctx>, requests: [number, Ctx][]): string[] {
  return requests.map(([t, ctx]) => {
    const out = limitRequest(p, ctx, t, newOutcome());
    return out.delayMs ? `${out.status}:${out.delayMs}` : out.status;
  });
}

describe('limit_req leaky bucket (ngx_http_limit_req_lookup)', () => {
  it('accounts the first request of a key with excess 0, so it passes even without burst', () => {
    const z = zone('one', '1r/s');
    assert.deepEqual(run(policy([rule(z)]), [[1000, { one: 'a' }]]), ['PASSED']);
    assert.equal(z.lastExcessMilli, 0);
  });

  it('rejects when excess exceeds burst; excess equal to burst is allowed (limit_req.t)', () => {
    const z = zone('one', '2r/s');
    const p = policy([rule(z, { burst: 1, nodelay: true })]);
    assert.deepEqual(
      run(p, [
        [0, { one: 'a' }],
        [0, { one: 'a' }],
        [0, { one: 'a' }],
      ]),
      ['PASSED', 'PASSED', 'REJECTED'],
    );
  });

  it('rejects not counted: rejected requests leave the state unchanged (limit_req.t)', () => {
    const z = zone('one', '2r/s');
    const p = policy([rule(z, { burst: 1, nodelay: true })]);
    const trace: [number, Ctx][] = [0, 0, 0, 10, 20, 600].map((t) => [t, { one: 'a' }]);
    assert.deepEqual(run(p, trace), ['PASSED', 'PASSED', 'REJECTED', 'REJECTED', 'REJECTED', 'PASSED']);
  });

  it('piles same-millisecond requests: ms = 0 keeps `last` and adds 1000 each', () => {
    const z = zone('one', '1000r/s');
    const p = policy([rule(z)]);
    assert.deepEqual(
      run(p, [
        [5, { one: 'a' }],
        [5, { one: 'a' }],
        [6, { one: 'a' }],
      ]),
      ['PASSED', 'REJECTED', 'PASSED'],
    );
  });

  it('clamps negative excess to 0 (rate=1000r/s, a request 100 ms later)', () => {
    const z = zone('one', '1000r/s');
    const p = policy([rule(z, { burst: 1 })]);
    assert.deepEqual(
      run(p, [
        [0, { one: 'a' }],
        [100, { one: 'a' }],
      ]),
      ['PASSED', 'PASSED'],
    );
    assert.equal(z.lastExcessMilli, 0);
  });

  it('treats a clock slightly back as 0 ms and far back (> 60 s) as 1 ms', () => {
    const z = zone('one', '1r/s');
    const p = policy([rule(z, { burst: 5, nodelay: true })]);
    run(p, [[100000, { one: 'a' }]]);
    run(p, [[70000, { one: 'a' }]]); // 30 s back: ms = 0 → +1000
    assert.equal(z.lastExcessMilli, 1000);
    run(p, [[1000, { one: 'a' }]]); // 99 s back: ms = 1 → 1000 - 1 + 1000
    assert.equal(z.lastExcessMilli, 2000 - Math.floor(1000 / 1000));
  });

  it('uses the integer rate: 1r/m is 16 milli-requests/s, so 60 s is not enough, 62.5 s is', () => {
    const z = zone('one', '1r/m');
    assert.equal(z.rateMilli, 16);
    const p = policy([rule(z)]);
    assert.deepEqual(
      run(p, [
        [0, { one: 'a' }],
        [60000, { one: 'a' }],
        [62500, { one: 'a' }],
      ]),
      ['PASSED', 'REJECTED', 'PASSED'],
    );
  });

  it('computes delays as nginx: default, nodelay and delay=2 (rate=1r/s burst=5, 7 requests in 1 ms)', () => {
    const seven = (): [number, Ctx][] => Array.from({ length: 7 }, () => [0, { one: 'a' }]);
    assert.deepEqual(run(policy([rule(zone('one', '1r/s'), { burst: 5 })]), seven()), [
      'PASSED',
      'DELAYED:1000',
      'DELAYED:2000',
      'DELAYED:3000',
      'DELAYED:4000',
      'DELAYED:5000',
      'REJECTED',
    ]);
    assert.deepEqual(run(policy([rule(zone('one', '1r/s'), { burst: 5, nodelay: true })]), seven()), [
      'PASSED',
      'PASSED',
      'PASSED',
      'PASSED',
      'PASSED',
      'PASSED',
      'REJECTED',
    ]);
    assert.deepEqual(run(policy([rule(zone('one', '1r/s'), { burst: 5, delay: 2 })]), seven()), [
      'PASSED',
      'PASSED',
      'PASSED',
      'DELAYED:1000',
      'DELAYED:2000',
      'DELAYED:3000',
      'REJECTED',
    ]);
  });

  it('request 2 is not delayed, 3 is, 4 is rejected (limit_req_delay.t: 30r/m delay=1 burst=2)', () => {
    const p = policy([rule(zone('one', '30r/m'), { burst: 2, delay: 1 })]);
    assert.deepEqual(
      run(
        p,
        [0, 1, 2, 3].map((t) => [t, { one: 'a' }]),
      ),
      ['PASSED', 'PASSED', 'DELAYED:2000', 'REJECTED'],
    );
  });

  it('does not account an empty key, and leaves the status unset when no zone accounts', () => {
    const z = zone('one', '1r/s');
    const out = limitRequest(policy([rule(z)]), { one: '' }, 0, newOutcome());
    assert.equal(out.status, '');
    assert.equal(out.zone, null);
    assert.equal(z.table.count, 0);
    assert.deepEqual(z.counters, {
      passed: 0,
      delayed: 0,
      rejected: 0,
      delayed_dry_run: 0,
      rejected_dry_run: 0,
    });
  });

  it('skips keys over 65535 bytes with nginx’s error line, without limiting', () => {
    const z = zone('one', '1r/s');
    const key = 'x'.repeat(65536);
    const out = limitRequest(policy([rule(z)]), { one: key }, 0, newOutcome());
    assert.equal(out.status, '');
    assert.deepEqual(out.logs, [
      { level: 'error', message: `the value of the "$one" key is more than 65535 bytes: "${key}"` },
    ]);
    const exact = limitRequest(policy([rule(z)]), { one: 'x'.repeat(65535) }, 0, newOutcome());
    assert.equal(exact.status, 'PASSED');
  });

  it('keeps keys as raw bytes: a 4-byte text key equals the same 4 binary bytes', () => {
    const z = zone('one', '1r/s');
    const p = policy([rule(z)]);
    assert.deepEqual(
      run(p, [
        [0, { one: 'abcd' }],
        [1, { one: '\x61\x62\x63\x64' }],
        [2, { one: 'ABCD' }],
      ]),
      ['PASSED', 'REJECTED', 'PASSED'],
    );
  });
});

describe('several limit_req in one location (ngx_http_limit_req_account)', () => {
  it('limit_req2.t: slow ($arg_a, 1r/m) and fast ($arg_b, 1000r/s)', () => {
    const fast = zone('b', '1000r/s');
    const slow = zone('a', '1r/m');
    const p = policy([rule(fast), rule(slow)]);
    assert.deepEqual(
      run(p, [
        [0, { a: '1' }],
        [50, { a: '1' }],
      ]),
      ['PASSED', 'REJECTED'],
    );
    assert.deepEqual(
      run(p, [
        [100, { a: '2', b: '2' }],
        [150, { a: '2', b: '2' }],
      ]),
      ['PASSED', 'REJECTED'],
    );
    assert.deepEqual(
      run(p, [
        [200, {}],
        [201, {}],
        [202, {}],
      ]),
      ['', '', ''],
    );
  });

  it('commits earlier zones only when every zone passes; the rejecting zone and later ones are untouched', () => {
    const first = zone('first', '1r/s');
    const second = zone('second', '1r/s');
    const third = zone('third', '1r/s');
    const p = policy([rule(first, { burst: 10 }), rule(second), rule(third)]);
    limitRequest(p, { first: 'k', second: 's', third: 't' }, 0, newOutcome());
    const out = limitRequest(p, { first: 'k', second: 's', third: 'new' }, 0, newOutcome());
    assert.equal(out.status, 'REJECTED');
    assert.equal(out.zone, second);
    assert.equal(first.table.excessOf(first.table.find('k')), 0, 'earlier zone not committed');
    assert.equal(third.table.find('new'), -1, 'later zone not evaluated');
    assert.deepEqual([first.counters.rejected, second.counters.rejected, third.counters.passed], [0, 1, 1]);
  });

  it('takes the longest delay, not the sum, and credits that zone', () => {
    const a = zone('a', '1r/s');
    const b = zone('b', '2r/s');
    const p = policy([rule(a, { burst: 5 }), rule(b, { burst: 5 })]);
    const trace: [number, Ctx][] = [0, 0, 0].map((t) => [t, { a: 'x', b: 'y' }]);
    assert.deepEqual(run(p, trace), ['PASSED', 'DELAYED:1000', 'DELAYED:2000']);
    assert.deepEqual([a.counters.delayed, b.counters.delayed, b.counters.passed], [2, 0, 1]);
  });

  it('credits a passed request to the last zone that accounted it, never to a zone with an empty key', () => {
    const a = zone('a', '1r/s');
    const b = zone('b', '1r/s');
    const out = limitRequest(policy([rule(a), rule(b)]), { a: 'x', b: '' }, 0, newOutcome());
    assert.equal(out.status, 'PASSED');
    assert.equal(out.zone, a);
    assert.deepEqual([a.counters.passed, b.counters.passed], [1, 0]);
  });

  it('a new key first seen by a non-last zone is committed with excess 0', () => {
    const a = zone('a', '1r/s');
    const b = zone('b', '1r/s');
    const p = policy([rule(a), rule(b, { burst: 3 })]);
    limitRequest(p, { a: 'x', b: 'y' }, 5000, newOutcome());
    const node = a.table.find('x');
    assert.equal(a.table.excessOf(node), 0);
    assert.equal(a.table.lastOf(node), 5000);
  });
});

describe('dry run (limit_req_dry_run.t)', () => {
  it('reports DELAYED_DRY_RUN and REJECTED_DRY_RUN, commits passes and delays, never holds or rejects', () => {
    const z = zone('one', '1r/m');
    const p = policy([rule(z, { burst: 2 })], { dryRun: true });
    const outs = [0, 1, 2, 3].map((t) => limitRequest(p, { one: 'a' }, t, newOutcome()));
    assert.deepEqual(
      outs.map((o) => [o.status, o.delayMs, o.rejectCode]),
      [
        ['PASSED', 0, 0],
        ['DELAYED_DRY_RUN', 0, 0],
        ['DELAYED_DRY_RUN', 0, 0],
        ['REJECTED_DRY_RUN', 0, 0],
      ],
    );
    assert.equal(z.table.excessOf(z.table.find('a')), 2000, 'the would-be reject did not commit');
    assert.deepEqual(outs[1]!.logs, [
      { level: 'warn', message: 'delaying request, dry run, excess: 1.000, by zone "one"' },
    ]);
    assert.deepEqual(outs[3]!.logs, [
      { level: 'error', message: 'limiting requests, dry run, excess: 3.000 by zone "one"' },
    ]);
    assert.deepEqual(z.counters, {
      passed: 1,
      delayed: 0,
      rejected: 0,
      delayed_dry_run: 2,
      rejected_dry_run: 1,
    });
  });
});

describe('log lines and statuses', () => {
  it('writes nginx’s messages at limit_req_log_level, delays one level lower', () => {
    const z = zone('req_zone_10', '10r/s');
    const p = policy([rule(z, { burst: 1 })], { logLevel: 'warn', status: 429 });
    limitRequest(p, { req_zone_10: 'a' }, 0, newOutcome());
    const delayed = limitRequest(p, { req_zone_10: 'a' }, 4, newOutcome());
    assert.deepEqual(delayed.logs, [
      { level: 'notice', message: 'delaying request, excess: 0.960, by zone "req_zone_10"' },
    ]);
    const rejected = limitRequest(p, { req_zone_10: 'a' }, 4, newOutcome());
    assert.equal(rejected.rejectCode, 429);
    assert.deepEqual(rejected.logs, [
      { level: 'warn', message: 'limiting requests, excess: 1.960 by zone "req_zone_10"' },
    ]);
    assert.equal(rejected.retryAfterMs, 96);
  });

  it('formats excess with three decimals', () => {
    assert.equal(formatExcess(1960), '1.960');
    assert.equal(formatExcess(10590), '10.590');
    assert.equal(formatExcess(5), '0.005');
  });
});
