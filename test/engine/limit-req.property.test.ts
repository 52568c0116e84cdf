import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { buildSite } from '../../src/config/build-site.ts';
import { loadConfigText } from '../../src/config/index.ts';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import {
  type LimitReqPolicy,
  type LimitReqRule,
  limitRequest,
  newOutcome,
} from '../../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../../src/engine/limit-req/limit-req-zone.ts';
import { MIN_ZONE_BYTES } from '../../src/engine/limit-req/zone-size.ts';

type Ctx = readonly string[];

const zoneArb = fc.record({
  rateMilli: fc.oneof(fc.constant(16), fc.integer({ min: 1, max: 2_000_000 })),
  sizeBytes: fc.constantFrom(MIN_ZONE_BYTES, MIN_ZONE_BYTES * 2, 1024 * 1024),
  burst: fc.integer({ min: 0, max: 20 }),
  delay: fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 20 })),
});

const traceArb = fc.array(
  fc.record({
    stepMs: fc.oneof(
      fc.constant(0),
      fc.integer({ min: -70_000, max: 70_000 }),
      fc.integer({ min: 0, max: 200 }),
    ),
    keys: fc.array(
      fc.oneof(
        fc.constant(''),
        fc.integer({ min: 0, max: 2000 }).map((i) => String.fromCharCode(10, 0, i >> 8, i & 255)),
        fc.string({ maxLength: 12 }),
        fc.constant('x'.repeat(65536)),
      ),
      { minLength: 3, maxLength: 3 },
    ),
  }),
  { maxLength: 300 },
);

function snapshotOf(zone: LimitReqZone): string {
  const out: string[] = [];
  for (let node = zone.table.head; node !== -1; node = zone.table.nextOf(node)) {
    out.push(`${zone.table.excessOf(node)}@${zone.table.lastOf(node)}`);
  }
  return out.join(',');
}

describe('limit_req properties (random zones and traces)', () => {
  it('never throws, never delays a rejection, keeps rejected requests from changing state, stays within size', () => {
    fc.assert(
      fc.property(
        fc.array(zoneArb, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        traceArb,
        (specs, dryRun, trace) => {
          const zones = specs.map(
            (s, i) => new LimitReqZone(`z${i}`, parseComplexValue(`$k${i}`), s.sizeBytes, s.rateMilli),
          );
          const rules: LimitReqRule<Ctx>[] = specs.map((s, i) => ({
            zone: zones[i]!,
            keyOf: (ctx) => ctx[i] ?? '',
            keyText: `$k${i}`,
            burstMilli: s.burst * 1000,
            delayMilli: s.delay < 0 ? Number.MAX_SAFE_INTEGER : s.delay * 1000,
          }));
          const policy: LimitReqPolicy<Ctx> = { rules, status: 429, logLevel: 'error', dryRun };
          let nowMs = 1_000_000;
          for (const step of trace) {
            nowMs += step.stepMs;
            const before = zones.map(snapshotOf);
            const out = limitRequest(policy, step.keys, nowMs, newOutcome());
            if (out.status === 'REJECTED' || out.status === 'REJECTED_DRY_RUN') {
              assert.equal(out.delayMs, 0);
              assert.equal(out.rejectCode, out.status === 'REJECTED' ? 429 : 0);
              // Over burst (not out of memory): the rejecting zone's states are untouched, only reordered.
              const i = zones.indexOf(out.zone!);
              if (out.logs.some((l) => l.message.startsWith('limiting requests'))) {
                assert.deepEqual(snapshotOf(zones[i]!).split(',').sort(), before[i]!.split(',').sort());
              }
            } else if (out.status === 'DELAYED') {
              assert.ok(out.delayMs > 0);
            } else {
              assert.equal(out.delayMs, 0);
            }
            for (const zone of zones) {
              assert.ok(zone.table.usedBytes <= zone.table.budgetBytes, 'zone memory within size');
              for (let node = zone.table.head; node !== -1; node = zone.table.nextOf(node)) {
                assert.ok(zone.table.excessOf(node) >= 0);
              }
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('random configurations and requests never throw past the config loader', () => {
    const directive = fc.record({
      rate: fc.constantFrom('1r/s', '10r/s', '1r/m', '30r/m', '1000r/s'),
      burst: fc.option(fc.integer({ min: 1, max: 10 })),
      mode: fc.constantFrom('', ' nodelay', ' delay=1', ' delay=3'),
      key: fc.constantFrom(
        '$binary_remote_addr',
        '$limit_key',
        '$arg_a',
        '$http_x_k',
        '$server_name$uri',
        'const',
      ),
      dryRun: fc.boolean(),
      status: fc.constantFrom(429, 503, 444),
    });
    const requestArb = fc.record({
      t: fc.integer({ min: 0, max: 5000 }),
      addr: fc.constantFrom('10.0.0.1', '10.0.0.2', '::1', '2001:db8::7'),
      uri: fc.constantFrom(
        '/',
        '/coffee/latte',
        '/tea?a=1',
        '/tea/../coffee',
        '//x',
        '/a%20b',
        '/%zz',
        '/x?a=&a=2',
      ),
      header: fc.constantFrom('', '1', '0', 'abc'),
    });
    fc.assert(
      fc.property(
        fc.array(directive, { minLength: 1, maxLength: 3 }),
        fc.array(requestArb, { maxLength: 60 }),
        (limits, requests) => {
          const zones = limits
            .map((l, i) => `limit_req_zone ${l.key} zone=z${i}:64k rate=${l.rate};`)
            .join('\n');
          const lines = limits
            .map((l, i) => `limit_req zone=z${i}${l.burst === null ? '' : ` burst=${l.burst}`}${l.mode};`)
            .join('\n');
          const text = `http {
          map $http_x_switch $limit_key { default ""; 1 $binary_remote_addr; }
          ${zones}
          server { listen 8080; server_name a.example;
            limit_req_status ${limits[0]!.status};
            ${limits[0]!.dryRun ? 'limit_req_dry_run on;' : ''}
            location / { ${lines} proxy_pass http://127.0.0.1:9; } } }`;
          const site = buildSite(loadConfigText(text, 'random.conf').http);
          let last = 0;
          for (const r of requests.sort((a, b) => a.t - b.t)) {
            const decision = site.evaluate(
              {
                method: 'GET',
                scheme: 'http',
                target: r.uri,
                headers: { host: 'a.example', 'x-switch': r.header, 'x-k': r.header },
                remoteAddr: r.addr,
                remotePort: 1,
                serverAddr: '127.0.0.1',
                serverPort: 8080,
              },
              r.t,
            );
            assert.ok(decision.kind !== 'reject' || !('delayMs' in decision));
            assert.ok([200, 400, 429, 444, 503].includes(decision.code), `code ${decision.code}`);
            last = r.t;
          }
          assert.ok(last >= 0);
        },
      ),
      { numRuns: 150 },
    );
  });
});
