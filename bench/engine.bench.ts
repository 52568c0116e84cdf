/**
 * Engine decision cost and state density, side by side with two popular in-process limiters:
 * rate-limiter-flexible's RateLimiterMemory and @fastify/rate-limit's LocalStore, and a plain `Map`
 * leaky bucket as the baseline. Each case runs in a fresh process (so no case warms or pollutes the
 * heap of another), rounds interleaved; the medians are reported.
 *
 * Run: npm run bench:engine   (last line: JSON)
 * Knobs: BENCH_ROUNDS (processes per case, default 5); BENCH_CASES=name,name… runs only those cases and
 * prints each one's median and samples (no JSON), for A/B runs of one case.
 */
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { RateLimiterMemory } from 'rate-limiter-flexible';
import { buildSite } from '../src/config/build-site.ts';
import { loadConfigText } from '../src/config/index.ts';
import { parseComplexValue } from '../src/engine/complex-value.ts';
import { type LimitReqPolicy, limitRequest, newOutcome } from '../src/engine/limit-req/limit-req.ts';
import { LimitReqZone } from '../src/engine/limit-req/limit-req-zone.ts';
import type { SharedZoneMemory } from '../src/engine/shared-zone.ts';
import type { RequestFacts } from '../src/engine/variables/request-context.ts';

const require = createRequire(import.meta.url);
const LocalStore = require('@fastify/rate-limit/store/LocalStore') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  cache: number,
) => { incr(key: string, cb: (err: unknown, res: unknown) => void, timeWindow: number, max: number): void };

const KEYS = 100_000;
const OPS = 1_000_000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const binaryIp = (i: number): string => String.fromCharCode(10, (i >> 16) & 255, (i >> 8) & 255, i & 255);
const textIp = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`;
const binaryKeys = Array.from({ length: KEYS }, (_, i) => binaryIp(i));
const textKeys = Array.from({ length: KEYS }, (_, i) => textIp(i));

type Ctx = { key: string };

/**
 * A fixed permutation of 0..n-1 (xorshift32, seed 1), the same in every process: the `_shuffled` cases
 * first see their 1e5 keys in order, then visit them in this order, as clients arrive in real traffic
 * (the round-robin cases walk the node arrays in order, which the CPU prefetches).
 */
function shuffledIndexes(n: number): Int32Array {
  const order = Int32Array.from({ length: n }, (_, i) => i);
  let x = 1;
  for (let i = n - 1; i > 0; i--) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const j = (x >>> 0) % (i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * The keys of the shuffled visits, each a new string allocated in visit order. A request's key is made
 * from its own socket address just before limit_req runs, so it is in cache; reading the visit's key
 * from the first-seen array instead (strings scattered over 2 MB of heap) would charge the harness a
 * cache miss per decision that no request pays. The states are still visited in no order.
 */
function visitKeys(): string[] {
  return Array.from(shuffledIndexes(KEYS), (i) => binaryIp(i));
}

/**
 * One `limit_req zone=z burst=… nodelay` on `$binary_remote_addr`, never limiting (the allow path).
 * `keyFetchOnly`: the shuffled visits read their key strings as usual, but each decision is made for
 * one of 8 keys (picked by the visited key's last byte), whose states stay in cache: what the visit
 * itself and the decision's code cost, without the state table's cache misses. `shared`: the decisions
 * go through a zone attached to another's shared state, taking the zone lock for each (uncontended).
 */
function engineCase(hot: boolean, shuffled = false, keyFetchOnly = false, shared = false): () => number {
  const newZone = (memory?: SharedZoneMemory): LimitReqZone =>
    new LimitReqZone(
      'z',
      parseComplexValue('$binary_remote_addr'),
      10 * 1024 * 1024,
      1_000_000_000,
      false,
      memory === undefined ? undefined : { memory, slice: 1 },
    );
  const zone = shared ? newZone(newZone().share()) : newZone();
  const policy: LimitReqPolicy<Ctx> = {
    rules: [
      {
        zone,
        keyOf: keyFetchOnly ? (ctx) => binaryKeys[ctx.key.charCodeAt(3) & 7]! : (ctx) => ctx.key,
        keyText: '$binary_remote_addr',
        burstMilli: 1e12,
        delayMilli: Number.MAX_SAFE_INTEGER,
      },
    ],
    status: 503,
    logLevel: 'error',
    dryRun: false,
  };
  const out = newOutcome();
  const ctx: Ctx = { key: '' };
  let nowMs = 1_700_000_000_000;
  const visits = shuffled ? visitKeys() : binaryKeys;
  if (shuffled) {
    for (const key of binaryKeys) {
      ctx.key = key;
      limitRequest(policy, ctx, nowMs, out);
    }
  }
  return () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) {
      // A request's context is fresh (in cache) when limit_req runs: one context, a new key each time,
      // as the baseline reads its key straight from the same array.
      ctx.key = visits[hot ? 7 : i % KEYS]!;
      limitRequest(policy, ctx, nowMs, out);
      if ((i & 1023) === 0) nowMs++;
    }
    return Number(process.hrtime.bigint() - start) / OPS;
  };
}

/** The seed's whole chain per request: route, keyval (prefix) → map → $binary_remote_addr → limit_req. */
function siteCase(): () => number {
  const site = buildSite(
    loadConfigText(
      `http {
        keyval_zone zone=limitreq_uri:64k type=prefix;
        keyval $uri $enablelimit zone=limitreq_uri;
        map $enablelimit $limit_key { default ""; 1 $binary_remote_addr; }
        limit_req_zone $limit_key zone=req_zone_10:10m rate=1000000r/s;
        server { listen 8081; server_name cafe.example.com;
          location /coffee { limit_req zone=req_zone_10 burst=1000000 nodelay; proxy_pass http://127.0.0.1:9; } }
      }`,
      'bench.conf',
    ).http,
  );
  site.keyvalZones.get('limitreq_uri')!.set('/coffee', { value: '1', expireAtMs: null });
  const facts: RequestFacts[] = textKeys.map((remoteAddr) => ({
    method: 'GET',
    scheme: 'http',
    target: '/coffee/latte',
    headers: { host: 'cafe.example.com' },
    remoteAddr,
    remotePort: 40000,
    serverAddr: '127.0.0.1',
    serverPort: 8081,
  }));
  let nowMs = 1_700_000_000_000;
  return () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) {
      const f = facts[i % KEYS]!;
      const route = site.route(f.target, f.headers.host, f.serverAddr, f.serverPort)!;
      site.decide(route, f, nowMs);
      if ((i & 1023) === 0) nowMs++;
    }
    return Number(process.hrtime.bigint() - start) / OPS;
  };
}

/** The baseline: nginx's leaky bucket over a plain `Map<string, {excess, last}>` (allow path). */
function mapCase(shuffled = false): () => number {
  const map = new Map<string, { excess: number; last: number }>();
  const rateMilli = 1_000_000_000;
  let nowMs = 1_700_000_000_000;
  const check = (key: string): boolean => {
    const e = map.get(key);
    if (e === undefined) {
      map.set(key, { excess: 0, last: nowMs });
      return true;
    }
    let ms = nowMs - e.last;
    if (ms < -60000) ms = 1;
    else if (ms < 0) ms = 0;
    let excess = e.excess - Math.floor((rateMilli * ms) / 1000) + 1000;
    if (excess < 0) excess = 0;
    e.excess = excess;
    if (ms) e.last = nowMs;
    return true;
  };
  const visits = shuffled ? visitKeys() : binaryKeys;
  if (shuffled) for (const key of binaryKeys) check(key);
  return () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) {
      check(visits[i % KEYS]!);
      if ((i & 1023) === 0) nowMs++;
    }
    return Number(process.hrtime.bigint() - start) / OPS;
  };
}

function rateLimiterFlexibleCase(): () => Promise<number> {
  const limiter = new RateLimiterMemory({ points: 1e9, duration: 60 });
  return async () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) await limiter.consume(textKeys[i % KEYS]!);
    return Number(process.hrtime.bigint() - start) / OPS;
  };
}

function localStoreCase(): () => number {
  const store = new LocalStore(false, false, 2 * KEYS);
  const done = (): void => {};
  return () => {
    const start = process.hrtime.bigint();
    for (let i = 0; i < OPS; i++) store.incr(textKeys[i % KEYS]!, done, 60_000, 1e9);
    return Number(process.hrtime.bigint() - start) / OPS;
  };
}

/** Accounted and allocated bytes per IPv4 state in a full 1m zone. */
function density(): { bytesPerState: number; statesPer1m: number } {
  const zone = new LimitReqZone('d', parseComplexValue('$binary_remote_addr'), 1024 * 1024, 1000);
  let i = 0;
  while (zone.table.hasRoomFor(binaryIp(i))) zone.lookup(binaryIp(i++), 0, 0, true);
  return { bytesPerState: zone.table.allocatedBytes() / zone.table.count, statesPer1m: zone.table.count };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const CASES: Record<string, () => () => number | Promise<number>> = {
  engine_1e5: () => engineCase(false),
  engine_hot: () => engineCase(true),
  site_seed_chain_1e5: siteCase,
  plain_map_1e5: () => mapCase(),
  engine_1e5_shuffled: () => engineCase(false, true),
  engine_1e5_shared: () => engineCase(false, false, false, true),
  engine_1e5_shuffled_shared: () => engineCase(false, true, false, true),
  engine_1e5_shuffled_key_fetch: () => engineCase(false, true, true),
  plain_map_1e5_shuffled: () => mapCase(true),
  rate_limiter_flexible_1e5: rateLimiterFlexibleCase,
  fastify_local_store_1e5: localStoreCase,
};

/**
 * Child: one case in a fresh heap; a warm-up run (JIT, fills the 1e5 keys), then the fastest of three
 * measured runs (the least disturbed by other processes on the machine).
 */
async function runCase(name: string): Promise<void> {
  const run = CASES[name]!();
  await run();
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < 3; i++) best = Math.min(best, await run());
  process.stdout.write(`${best}\n`);
}

/** Parent: every case in its own process, rounds interleaved, medians reported. */
async function main(): Promise<void> {
  const only = process.env.BENCH_CASES?.split(',');
  const names = Object.keys(CASES).filter((name) => only === undefined || only.includes(name));
  const results: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of names) {
      const out = execFileSync(process.execPath, [
        ...process.execArgv,
        fileURLToPath(import.meta.url),
        '--case',
        name,
      ]);
      results[name]!.push(Number(out.toString().trim()));
    }
  }
  const ns = Object.fromEntries(Object.entries(results).map(([name, xs]) => [name, median(xs)]));
  for (const [name, value] of Object.entries(ns)) {
    const samples = only === undefined ? '' : `  (${results[name]!.map((x) => x.toFixed(1)).join(' ')})`;
    console.log(`${name.padEnd(30)} ${value.toFixed(1)} ns/decision${samples}`);
  }
  if (only !== undefined) return;
  const { bytesPerState, statesPer1m } = density();
  console.log(
    `bytes per IPv4 state            ${bytesPerState.toFixed(1)} (a 1m zone holds ${statesPer1m} states; nginx ~8k)`,
  );
  console.log(
    JSON.stringify({
      ns_per_decision_1e5: round1(ns.engine_1e5!),
      ns_per_decision_hot: round1(ns.engine_hot!),
      ns_per_decision_seed_chain_1e5: round1(ns.site_seed_chain_1e5!),
      bytes_per_state_ipv4: round1(bytesPerState),
      states_per_1m_zone: statesPer1m,
      ns_per_decision_plain_map_1e5: round1(ns.plain_map_1e5!),
      ns_per_decision_1e5_shuffled: round1(ns.engine_1e5_shuffled!),
      ns_per_decision_plain_map_1e5_shuffled: round1(ns.plain_map_1e5_shuffled!),
      ns_per_decision_1e5_shuffled_key_fetch: round1(ns.engine_1e5_shuffled_key_fetch!),
      ns_per_decision_1e5_shared: round1(ns.engine_1e5_shared!),
      ns_per_decision_1e5_shuffled_shared: round1(ns.engine_1e5_shuffled_shared!),
      ratio_shared_vs_private: round2(ns.engine_1e5_shared! / ns.engine_1e5!),
      ratio_shuffled_shared_vs_private: round2(ns.engine_1e5_shuffled_shared! / ns.engine_1e5_shuffled!),
      ratio_vs_plain_map: round1(ns.plain_map_1e5! / ns.engine_1e5!),
      ratio_shuffled_vs_plain_map: round1(ns.plain_map_1e5_shuffled! / ns.engine_1e5_shuffled!),
      ratio_vs_rate_limiter_flexible: round1(ns.rate_limiter_flexible_1e5! / ns.engine_1e5!),
      ratio_vs_fastify_local_store: round1(ns.fastify_local_store_1e5! / ns.engine_1e5!),
    }),
  );
}

const round1 = (x: number): number => Math.round(x * 10) / 10;
const round2 = (x: number): number => Math.round(x * 100) / 100;

const caseIndex = process.argv.indexOf('--case');
if (caseIndex === -1) await main();
else await runCase(process.argv[caseIndex + 1]!);
