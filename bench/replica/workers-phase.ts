/**
 * Two workers: a whole replica (replica-main.ts: the seed's keyval switch → map → limit_req on every
 * request, nothing limited) with `worker_processes 1` and `2`, beside nginx with `worker_processes 1`
 * and `2` (the throughput case's configuration), the same upstream and the same load generator as the
 * one-worker phase. The four are interleaved over WORKER_ROUNDS rounds (order rotated); req/s and CPU
 * are medians over rounds, each ratio the median of the ratios within a round. Server CPU per request
 * is every thread of the replica's process (main thread, worker threads, V8's helpers), nginx's master
 * and workers; how it splits between them is printed too. Then latency at a fixed rate
 * (latency-phase.ts) with nginx and the replica at two workers.
 *
 * The replica's workers listen with SO_REUSEPORT from several threads, which Node.js does from 22.12
 * on: on an older one the phase says so once and measures nothing.
 *
 * The servers, the upstream and the load generator share this machine's cores: on 2 cores, two
 * workers cannot have a core each, and the scaling figures are what is left to them.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { availableParallelism } from 'node:os';
import { reusePortSupported } from '../../src/replica/workers/worker-runtime.ts';
import {
  CONNECTIONS,
  cpuUs,
  DURATION_MS,
  keptUpstreamConf,
  loadAverage,
  measure,
  median,
  round,
  type Sample,
  startNginx,
  startNode,
  type Target,
  threadCpuUs,
  WARMUP_MS,
  WORKER_ROUNDS,
} from './harness.ts';
import { latencyPhase } from './latency-phase.ts';

/** Said once, instead of figures, where this Node.js cannot run a replica's worker threads. */
export const NOT_MEASURED = `two workers: not measured — a replica's worker_processes 2 needs Node.js 22.12 or later (its workers listen on one port with SO_REUSEPORT); this is Node.js ${process.versions.node}, which would serve on one thread`;

interface ReplicaStarted {
  readonly port: number;
  readonly workers: number;
  readonly workerTids: readonly number[];
}

/** A replica-main.ts process with `workers` workers; throws unless that many threads serve. */
async function startReplica(workers: number, upstreamPort: number, keepalive: string) {
  const started = await startNode<ReplicaStarted>('replica-main.ts', [
    String(workers),
    String(upstreamPort),
    keepalive,
  ]);
  if (started.first.workers !== workers)
    throw new Error(`the replica serves from ${started.first.workers} threads, not ${workers}`);
  const found = started.first.workerTids.length;
  if (workers > 1 && found !== workers)
    console.log(
      `two workers: note: ${found} new threads named WorkerThread for ${workers} workers; the CPU by thread below names them all`,
    );
  return started;
}

/** nginx's CPU by process: its master and each worker. */
const nginxParts = (pids: readonly number[]) => () =>
  new Map(pids.map((pid, i) => [i === 0 ? 'master' : `worker ${i}`, cpuUs(pid)]));

async function counters(child: ChildProcess): Promise<{ passed: number; rejected: number }> {
  child.send('counters');
  const [answer] = (await once(child, 'message')) as [{ passed: number; rejected: number }];
  return answer;
}

const partsText = (parts: ReadonlyMap<string, number> | undefined) =>
  parts === undefined
    ? ''
    : [...parts]
        .filter(([, us]) => us >= 0.05)
        .map(([part, us]) => `${part} ${us.toFixed(1)}`)
        .join(', ');

export async function workersPhase(
  upstream: { readonly pid: number; readonly port: number },
  nginx1: { readonly port: number; readonly pids: readonly number[] },
  loadGen: ChildProcess,
): Promise<Record<string, number>> {
  console.log('');
  if (!reusePortSupported()) {
    console.log(NOT_MEASURED);
    return {};
  }
  const cores = availableParallelism();
  const nginx2 = await startNginx(upstream.port, keptUpstreamConf, 2);
  const replica1 = await startReplica(1, upstream.port, '64');
  const replica2 = await startReplica(2, upstream.port, '64');
  const targets: Target[] = [
    { name: 'nginx 1w', port: nginx1.port, pids: nginx1.pids, parts: nginxParts(nginx1.pids) },
    { name: 'nginx 2w', port: nginx2.port, pids: nginx2.pids, parts: nginxParts(nginx2.pids) },
    ...[replica1, replica2].map(({ child, first }, i) => ({
      name: `replica ${i + 1}w`,
      port: first.port,
      pids: [child.pid!],
      parts: () => threadCpuUs(child.pid!, first.workerTids),
    })),
  ];
  console.log(
    `two workers: nginx and a whole replica (limit_req on every request) at worker_processes 1 and 2, ${WORKER_ROUNDS} rounds, ` +
      `${CONNECTIONS} connections, ${WARMUP_MS} ms warm-up (then ${WARMUP_MS / 4} ms) + ${DURATION_MS} ms per case; ` +
      `${cores} cores, shared by the servers, the upstream and the load generator; load average ${loadAverage()}`,
  );
  const samples = new Map<string, Sample[]>(targets.map((t) => [t.name, []]));
  let replica2Requests = 0;
  const before2 = await counters(replica2.child);
  for (let r = 0; r < WORKER_ROUNDS; r++) {
    const order = targets.map((_, i) => targets[(i + r) % targets.length]!);
    for (const target of order) {
      const sample = await measure(loadGen, target, upstream.pid, r === 0 ? WARMUP_MS : WARMUP_MS / 4);
      samples.get(target.name)!.push(sample);
      if (target.name === 'replica 2w') replica2Requests += sample.requests;
      console.log(
        `workers round ${r + 1}  ${target.name.padEnd(10)} ${sample.rps.toFixed(0).padStart(7)} req/s  ` +
          `server ${sample.cpuUsPerRequest.toFixed(1).padStart(5)} µs CPU/req (${partsText(sample.partsUsPerRequest)})  ` +
          `upstream ${sample.upstreamCpuUsPerRequest.toFixed(1).padStart(5)} µs/req  ` +
          `load ${sample.loadCpuUsPerRequest.toFixed(1).padStart(5)} µs/req` +
          (sample.errors || sample.non2xx ? `  errors ${sample.errors} non-2xx ${sample.non2xx}` : ''),
      );
    }
  }
  // limit_req decided every request the two workers answered, on the one zone they share
  const after2 = await counters(replica2.child);
  const passed = after2.passed - before2.passed;
  console.log(
    `two workers: the replica's limit_req zone passed ${passed} requests (${replica2Requests} answered inside the measured windows), rejected ${after2.rejected - before2.rejected}` +
      (passed < replica2Requests ? ' — FEWER than answered: limit_req did not see every request' : ''),
  );

  const of = (name: string, pick: (s: Sample) => number) => median((samples.get(name) ?? []).map(pick));
  const perRound = (a: string, b: string) => {
    const bs = samples.get(b) ?? [];
    return median((samples.get(a) ?? []).map((s, i) => s.rps / (bs[i]?.rps ?? Number.NaN)));
  };
  console.log('');
  console.log(
    'two workers  median req/s   server µs CPU/req   upstream µs/req   load µs/req   cores busy: these / machine   server CPU by part, µs/req',
  );
  /** Cores the server, the upstream and the load generator kept busy together. */
  const coresBusy = (name: string) =>
    of(name, (s) => ((s.cpuUsPerRequest + s.upstreamCpuUsPerRequest + s.loadCpuUsPerRequest) * s.rps) / 1e6);
  for (const { name } of targets) {
    const rps = of(name, (s) => s.rps);
    const server = of(name, (s) => s.cpuUsPerRequest);
    const up = of(name, (s) => s.upstreamCpuUsPerRequest);
    const load = of(name, (s) => s.loadCpuUsPerRequest);
    const machine = of(name, (s) => s.machineCoresBusy);
    const partNames = [...(samples.get(name)?.[0]?.partsUsPerRequest?.keys() ?? [])];
    const parts = new Map(
      partNames.map((part) => [part, of(name, (s) => s.partsUsPerRequest?.get(part) ?? Number.NaN)]),
    );
    console.log(
      `${name.padEnd(12)} ${rps.toFixed(0).padStart(12)}   ${server.toFixed(1).padStart(17)}   ${up.toFixed(1).padStart(15)}   ` +
        `${load.toFixed(1).padStart(11)}   ${`${coresBusy(name).toFixed(2)} / ${machine.toFixed(2)}`.padStart(26)}   ${partsText(parts)}`,
    );
  }
  const medianRps = (name: string) =>
    round(
      of(name, (s) => s.rps),
      0,
    );
  const medianCpu = (name: string) =>
    round(
      of(name, (s) => s.cpuUsPerRequest),
      1,
    );
  const result: Record<string, number> = {
    workers2_nginx_rps: medianRps('nginx 2w'),
    workers2_rps: medianRps('replica 2w'),
    workers2_vs_nginx: round(perRound('replica 2w', 'nginx 2w'), 3),
    workers2_nginx_cpu_us: medianCpu('nginx 2w'),
    workers2_cpu_us: medianCpu('replica 2w'),
    workers1_nginx_rps: medianRps('nginx 1w'),
    workers1_rps: medianRps('replica 1w'),
    workers1_vs_nginx: round(perRound('replica 1w', 'nginx 1w'), 3),
    workers1_nginx_cpu_us: medianCpu('nginx 1w'),
    workers1_cpu_us: medianCpu('replica 1w'),
    workers_scaling: round(perRound('replica 2w', 'replica 1w'), 3),
    workers_nginx_scaling: round(perRound('nginx 2w', 'nginx 1w'), 3),
    // what limits them: the cores the server, the upstream and the generator keep busy, and the machine
    workers2_cores_busy: round(coresBusy('replica 2w'), 2),
    workers2_nginx_cores_busy: round(coresBusy('nginx 2w'), 2),
    workers_machine_cores_busy: round(median([...samples.values()].flat().map((s) => s.machineCoresBusy)), 2),
  };
  nginx2.stop();

  Object.assign(
    result,
    await latencyPhase(upstream.port, {
      nginxWorkers: 2,
      startReplica: async (upstreamPort) => (await startReplica(2, upstreamPort, 'none')).first.port,
      linePrefix: 'two workers: ',
      fieldPrefix: 'workers2_',
    }),
  );
  console.log('');
  console.log(
    `two workers: replica/nginx ${result.workers2_vs_nginx} (bar ≥ 0.8; ${result.workers2_rps} against ${result.workers2_nginx_rps} req/s), ` +
      `server CPU ${result.workers2_cpu_us} against ${result.workers2_nginx_cpu_us} µs/req; added latency, the worse upstream: ` +
      `replica p50 +${result.workers2_p50_added_ms} p99 +${result.workers2_p99_added_ms} ms, ` +
      `nginx p50 +${result.workers2_nginx_p50_added_ms} p99 +${result.workers2_nginx_p99_added_ms} ms; ` +
      `scaling 1 → 2 workers: replica ${result.workers_scaling}×, nginx ${result.workers_nginx_scaling}× ` +
      `(${cores} cores shared with the upstream and the load generator; with two workers the replica, the upstream and the ` +
      `generator kept ${result.workers2_cores_busy} busy, nginx's case ${result.workers2_nginx_cores_busy}, the whole machine ${result.workers_machine_cores_busy})`,
  );
  return result;
}
