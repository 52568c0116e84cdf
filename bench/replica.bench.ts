/**
 * Replica proxy throughput, side by side in one run on the same upstream and the same load generator:
 *   nginx   — nginx `proxy_pass`, one worker, upstream keepalive 64, the same X-Forwarded-* headers
 *   off     — the replica's data path with limits switched off (the hook passes everything)
 *   on      — the data path with the replica's engine hook: keyval switch on, limit_req on every
 *             request, nothing limited
 *   conn    — the same with limit_conn in place of limit_req (counted on every request, released at
 *             its end), nothing limited
 *   bare    — reference: the straightforward node:http + undici `pool.request` forwarder
 * Every server, the upstream and the load generator run in their own processes. Cases are interleaved
 * over rounds (the order rotates); req/s and CPU are medians over rounds, and each ratio is the median
 * of the ratios within a round, so a slow stretch of the machine (shared cores) hits both sides of a
 * ratio alike. on/off, whose bar is within this machine's drift between two slots, is then measured
 * side by side: both served at once by two generators, the median of their req/s ratios. Server CPU per request comes from /proc/<pid>/stat (all threads; for nginx the master
 * and its worker).
 *
 * Then latency at a fixed request rate (bench/replica/latency-probe.ts, open loop): a direct call to the
 * upstream, nginx and the replica (engine hook) side by side, round after round, in front of two
 * upstreams — the Node one and Python's `http.server` (HTTP/1.1, head and body in two writes) — on the
 * configuration a new user writes (an `upstream` block without `keepalive`; nginx: its defaults, a
 * connection per request). Added latency = the proxy's p50 (p99) minus the direct call's. Clients keep
 * their connections to the Node upstream and its proxies, and make a fresh one per request to the
 * Python upstream and its proxies, as curl does: a client reusing a connection to that server waits
 * on delayed acknowledgements itself (40 ms a request), which is not the direct call's latency.
 *
 * Then two workers (bench/replica/workers-phase.ts): a whole replica with `worker_processes 2` beside
 * nginx with `worker_processes 2`, and both at 1, interleaved over rounds with the same upstream and
 * load generator: req/s ratio, server CPU per request (all threads; nginx's master and workers), the
 * replica's scaling 1 → 2 workers, and latency at a fixed rate as above at two workers (`workers2_*`,
 * `workers1_*`, `workers_scaling` fields). Node.js 22.12+ only (SO_REUSEPORT from several threads);
 * on an older one it says once that it is not measured. The servers, the upstream and the load
 * generator share the machine's cores.
 *
 * Run: npm run bench:replica     (last line: JSON)
 * Knobs: BENCH_ROUNDS (12), BENCH_WARMUP_MS (2000 in the first round, a quarter of it later),
 *        BENCH_DURATION_MS (2500), BENCH_CONNECTIONS (50), BENCH_SIDE_BY_SIDE_ROUNDS (10),
 *        BENCH_BARE=0 to skip the bare case; BENCH_BASELINE=<another checkout> measures its data
 *        path (off) side by side with this one's (`baseline_vs_off`); BENCH_LATENCY_ROUNDS (4),
 *        BENCH_LATENCY_RATE (200 req/s),
 *        BENCH_LATENCY_DURATION_MS (3000), BENCH_LATENCY_CONNECTIONS (4); BENCH_WORKER_ROUNDS (half of
 *        BENCH_ROUNDS, at least 2), BENCH_WORKERS=0 to skip the two-worker phase; BENCH_CPU_PROF=<dir>
 *        runs the proxies under `node --cpu-prof` (summary: bench/replica/profile-summary.ts).
 */
import { type ChildProcess, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BASELINE,
  CONNECTIONS,
  children,
  DURATION_MS,
  keptUpstreamConf,
  loadAverage,
  measure,
  median,
  ROUNDS,
  round,
  type Sample,
  SIDE_BY_SIDE_ROUNDS,
  startNginx,
  startNode,
  type Target,
  WARMUP_MS,
  WITH_BARE,
  WORKERS,
} from './replica/harness.ts';
import { latencyPhase } from './replica/latency-phase.ts';
import { workersPhase } from './replica/workers-phase.ts';

async function main(): Promise<void> {
  const upstream = await startNode<{ port: number }>('upstream-server.ts');
  const upstreamPort = upstream.first.port;
  const nginx = await startNginx(upstreamPort);
  const modes = [
    ['off', 'off'],
    ['on', 'engine'],
    ['conn', 'conn'],
  ] as const;
  const targets: Target[] = [{ name: 'nginx', port: nginx.port, pids: nginx.pids }];
  for (const [name, mode] of modes) {
    const proxy = await startNode<{ port: number }>('proxy-main.ts', [mode, String(upstreamPort)]);
    targets.push({ name, port: proxy.first.port, pids: [proxy.child.pid!] });
  }
  if (WITH_BARE) {
    const bare = await startNode<{ port: number }>('bare-proxy.ts', [String(upstreamPort)]);
    targets.push({ name: 'bare', port: bare.first.port, pids: [bare.child.pid!] });
  }
  const loadGen = (await startNode<unknown>('load-generator.ts')).child;
  const secondLoadGen = (await startNode<unknown>('load-generator.ts')).child;

  const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
  console.log(
    `replica proxy benchmark: ${ROUNDS} rounds, ${CONNECTIONS} connections, ${WARMUP_MS} ms warm-up (then ${WARMUP_MS / 4} ms) + ${DURATION_MS} ms per case; load average ${loadAverage()}`,
  );
  for (let r = 0; r < ROUNDS; r++) {
    // rotate the order so no case always runs first or last
    const order = targets.map((_, i) => targets[(i + r) % targets.length]!);
    for (const target of order) {
      const sample = await measure(loadGen, target, upstream.child.pid!, r === 0 ? WARMUP_MS : WARMUP_MS / 4);
      samples.get(target.name)!.push(sample);
      console.log(
        `round ${r + 1}  ${target.name.padEnd(6)} ${sample.rps.toFixed(0).padStart(7)} req/s  ` +
          `server ${sample.cpuUsPerRequest.toFixed(1).padStart(5)} µs CPU/req  ` +
          `upstream ${sample.upstreamCpuUsPerRequest.toFixed(1).padStart(5)} µs/req  ` +
          `load ${sample.loadCpuUsPerRequest.toFixed(1).padStart(5)} µs/req` +
          (sample.errors || sample.non2xx ? `  errors ${sample.errors} non-2xx ${sample.non2xx}` : ''),
      );
    }
  }

  // Side by side: off and on served at the same moment, each by its own generator, so a drift of the
  // machine's speed hits both alike; their req/s ratio is their cost ratio.
  const off = targets.find((t) => t.name === 'off')!;
  const sideBySideWith = async (
    name: string,
    on: Target = targets.find((t) => t.name === name)!,
  ): Promise<number[]> => {
    const ratios: number[] = [];
    for (let r = 0; r < SIDE_BY_SIDE_ROUNDS; r++) {
      const warmupMs = r === 0 ? WARMUP_MS : WARMUP_MS / 4;
      const [offSample, onSample] = await Promise.all([
        measure(loadGen, off, upstream.child.pid!, warmupMs),
        measure(secondLoadGen, on, upstream.child.pid!, warmupMs),
      ]);
      ratios.push(onSample.rps / offSample.rps);
      console.log(
        `side by side ${r + 1}  off ${offSample.rps.toFixed(0).padStart(6)} req/s ${offSample.cpuUsPerRequest.toFixed(1).padStart(5)} µs CPU/req  ` +
          `${name} ${onSample.rps.toFixed(0).padStart(6)} req/s ${onSample.cpuUsPerRequest.toFixed(1).padStart(5)} µs CPU/req  ` +
          `${name}/off ${(onSample.rps / offSample.rps).toFixed(3)}`,
      );
    }
    return ratios;
  };
  const sideBySide = await sideBySideWith('on');
  const connSideBySide = await sideBySideWith('conn');
  let baselineSideBySide: number[] = [];
  if (BASELINE !== undefined) {
    const proxy = await startNode<{ port: number }>(
      'proxy-main.ts',
      ['off', String(upstreamPort)],
      join(BASELINE, 'bench'),
    );
    const baseline = { name: 'baseline', port: proxy.first.port, pids: [proxy.child.pid!] };
    baselineSideBySide = await sideBySideWith('baseline', baseline);
  }

  const rps = (name: string) => median(samples.get(name)?.map((s) => s.rps) ?? [Number.NaN]);
  const cpu = (name: string) => median(samples.get(name)?.map((s) => s.cpuUsPerRequest) ?? [Number.NaN]);
  /** Median over rounds of a's req/s over b's in the same round. */
  const ratio = (a: string, b: string) => {
    const as = samples.get(a) ?? [];
    const bs = samples.get(b) ?? [];
    return median(as.map((sample, r) => sample.rps / (bs[r]?.rps ?? Number.NaN)));
  };
  console.log(`load average at the end: ${loadAverage()}`);
  console.log('');
  console.log('median       req/s   server µs CPU/req');
  for (const target of targets) {
    console.log(
      `${target.name.padEnd(8)} ${rps(target.name).toFixed(0).padStart(9)}   ${cpu(target.name).toFixed(1).padStart(8)}`,
    );
  }
  const result: Record<string, number> = {
    nginx_rps: round(rps('nginx'), 0),
    off_rps: round(rps('off'), 0),
    on_rps: round(rps('on'), 0),
    off_vs_nginx: round(ratio('off', 'nginx'), 3),
    on_vs_off: round(median(sideBySide), 3),
    on_vs_off_sequential: round(ratio('on', 'off'), 3),
    conn_rps: round(rps('conn'), 0),
    conn_vs_off: round(median(connSideBySide), 3),
    conn_vs_off_sequential: round(ratio('conn', 'off'), 3),
    nginx_cpu_us: round(cpu('nginx'), 1),
    off_cpu_us: round(cpu('off'), 1),
    on_cpu_us: round(cpu('on'), 1),
    conn_cpu_us: round(cpu('conn'), 1),
  };
  // the other checkout's req/s over this one's, side by side (below 1: this one serves more)
  if (BASELINE !== undefined) result.baseline_vs_off = round(median(baselineSideBySide), 3);
  if (WITH_BARE) {
    result.bare_rps = round(rps('bare'), 0);
    result.bare_vs_nginx = round(ratio('bare', 'nginx'), 3);
    result.off_vs_bare = round(ratio('off', 'bare'), 3);
    result.bare_cpu_us = round(cpu('bare'), 1);
  }
  console.log('');
  Object.assign(result, await latencyPhase(upstreamPort));
  console.log('');
  console.log(
    `added latency, the worse upstream: replica p50 +${result.p50_added_ms} p99 +${result.p99_added_ms} ms, ` +
      `nginx p50 +${result.nginx_p50_added_ms} p99 +${result.nginx_p99_added_ms} ms (bar: within 2 ms of nginx's)`,
  );
  console.log(
    `ratios: off/nginx ${result.off_vs_nginx} (bar ≥ 0.75), on/off ${result.on_vs_off} side by side (bar ≥ 0.97; ` +
      `${result.on_vs_off_sequential} from the sequential rounds), limit_conn on/off ${result.conn_vs_off} side by side (bar ≥ 0.97)` +
      (WITH_BARE ? `, bare/nginx ${result.bare_vs_nginx}, off/bare ${result.off_vs_bare}` : ''),
  );
  console.log('');
  Object.assign(result, await tlsPhase(upstream.child.pid!, upstreamPort, loadGen));
  if (WORKERS)
    Object.assign(
      result,
      await workersPhase({ pid: upstream.child.pid!, port: upstreamPort }, nginx, loadGen),
    );
  nginx.stop();
  for (const child of children)
    if (child !== undefined && child.exitCode === null && child.connected) child.disconnect();
  console.log(JSON.stringify(result));
}

/**
 * TLS at the edge, side by side with nginx (`listen … ssl http2`, the same certificate, the same
 * keep-alive upstream): req/s and server CPU per request over HTTPS (HTTP/1.1, keep-alive) and h2 (one
 * connection, CONNECTIONS streams at a time); full handshakes per second (8 clients, a new connection
 * each time, no resumption); and added latency at 4 connections, closed loop: the proxy's p50/p99 over
 * HTTPS minus a direct plain call's to the upstream.
 */
async function tlsPhase(
  upstreamPid: number,
  upstreamPort: number,
  loadGen: ChildProcess,
): Promise<Record<string, number>> {
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-bench-tls-'));
  const cert = join(dir, 'cafe.crt');
  const key = join(dir, 'cafe.key');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=cafe.example.com',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  const nginx = await startNginx(upstreamPort, (port, up) =>
    keptUpstreamConf(port, up).replace(
      `listen 127.0.0.1:${port};`,
      `listen 127.0.0.1:${port} ssl http2;\n    ssl_certificate ${cert};\n    ssl_certificate_key ${key};`,
    ),
  );
  process.env.BENCH_TLS_CERT = cert;
  process.env.BENCH_TLS_KEY = key;
  const replica = await startNode<{ port: number }>('proxy-main.ts', ['tls', String(upstreamPort)]);
  const targets: Target[] = [
    { name: 'nginx', port: nginx.port, pids: nginx.pids },
    { name: 'replica', port: replica.first.port, pids: [replica.child.pid!] },
  ];
  const kinds = [
    ['https', { protocol: 'https' }],
    ['h2', { protocol: 'h2' }],
    ['handshakes', { protocol: 'handshakes', connections: 8 }],
    ['latency', { protocol: 'https', connections: 4, latency: true }],
  ] as const;
  const samples = new Map<string, Sample[]>();
  const rounds = Math.max(2, Math.ceil(ROUNDS / 3));
  for (let r = 0; r < rounds; r++) {
    const warmupMs = r === 0 ? WARMUP_MS : WARMUP_MS / 4;
    for (const [kind, how] of kinds) {
      const order = r % 2 === 0 ? targets : [...targets].reverse();
      for (const target of order) {
        const sample = await measure(loadGen, target, upstreamPid, warmupMs, how);
        const key = `${kind} ${target.name}`;
        samples.set(key, [...(samples.get(key) ?? []), sample]);
        console.log(
          `tls round ${r + 1}  ${kind.padEnd(10)} ${target.name.padEnd(7)} ${sample.rps.toFixed(0).padStart(7)} /s  ` +
            `server ${sample.cpuUsPerRequest.toFixed(1).padStart(6)} µs CPU each` +
            (sample.p50Ms === undefined
              ? ''
              : `  p50 ${sample.p50Ms.toFixed(2)} ms p99 ${sample.p99Ms!.toFixed(2)} ms`) +
            (sample.errors || sample.non2xx ? `  errors ${sample.errors} non-2xx ${sample.non2xx}` : ''),
        );
      }
    }
    const direct = await measure(
      loadGen,
      { name: 'direct', port: upstreamPort, pids: [upstreamPid] },
      upstreamPid,
      warmupMs,
      {
        protocol: 'http',
        connections: 4,
        latency: true,
      },
    );
    samples.set('latency direct', [...(samples.get('latency direct') ?? []), direct]);
  }
  const of = (key: string, pick: (s: Sample) => number) => median((samples.get(key) ?? []).map(pick));
  const perRound = (a: string, b: string) => {
    const bs = samples.get(b) ?? [];
    return median((samples.get(a) ?? []).map((s, i) => s.rps / (bs[i]?.rps ?? Number.NaN)));
  };
  const added = (who: string, q: 'p50Ms' | 'p99Ms') =>
    round(
      of(`latency ${who}`, (s) => s[q] ?? Number.NaN) - of('latency direct', (s) => s[q] ?? Number.NaN),
      2,
    );
  const result: Record<string, number> = {};
  for (const kind of ['https', 'h2', 'handshakes'] as const) {
    result[`${kind}_nginx_per_s`] = round(
      of(`${kind} nginx`, (s) => s.rps),
      0,
    );
    result[`${kind}_per_s`] = round(
      of(`${kind} replica`, (s) => s.rps),
      0,
    );
    result[`${kind}_vs_nginx`] = round(perRound(`${kind} replica`, `${kind} nginx`), 3);
    result[`${kind}_nginx_cpu_us`] = round(
      of(`${kind} nginx`, (s) => s.cpuUsPerRequest),
      1,
    );
    result[`${kind}_cpu_us`] = round(
      of(`${kind} replica`, (s) => s.cpuUsPerRequest),
      1,
    );
  }
  result.https_p50_added_ms = added('replica', 'p50Ms');
  result.https_p99_added_ms = added('replica', 'p99Ms');
  result.https_nginx_p50_added_ms = added('nginx', 'p50Ms');
  result.https_nginx_p99_added_ms = added('nginx', 'p99Ms');
  console.log(
    `TLS: https ${result.https_vs_nginx}× nginx, h2 ${result.h2_vs_nginx}×, handshakes ${result.handshakes_vs_nginx}× ` +
      `(${result.handshakes_per_s} vs ${result.handshakes_nginx_per_s}/s); added latency over HTTPS: replica p50 +${result.https_p50_added_ms} ` +
      `p99 +${result.https_p99_added_ms} ms, nginx p50 +${result.https_nginx_p50_added_ms} p99 +${result.https_nginx_p99_added_ms} ms`,
  );
  nginx.stop();
  rmSync(dir, { recursive: true, force: true });
  return result;
}

await main();
