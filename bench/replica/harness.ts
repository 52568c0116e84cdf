/**
 * What the phases of `npm run bench:replica` share: the knobs, starting the processes (Node scripts
 * of this folder, nginx), reading a process's CPU from /proc, and one measured window of the load
 * generator against one server.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LoadRequest, LoadResult } from './load-generator.ts';

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
export const WARMUP_MS = Number(process.env.BENCH_WARMUP_MS ?? 2000);
export const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 2500);
export const SIDE_BY_SIDE_ROUNDS = Number(process.env.BENCH_SIDE_BY_SIDE_ROUNDS ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const WITH_BARE = process.env.BENCH_BARE !== '0';
export const LATENCY_ROUNDS = Number(process.env.BENCH_LATENCY_ROUNDS ?? 4);
export const LATENCY_RATE = Number(process.env.BENCH_LATENCY_RATE ?? 200);
export const LATENCY_DURATION_MS = Number(process.env.BENCH_LATENCY_DURATION_MS ?? 3000);
export const LATENCY_CONNECTIONS = Number(process.env.BENCH_LATENCY_CONNECTIONS ?? 4);
/** Rounds of the two-worker phase: half of BENCH_ROUNDS, at least 2, unless set. */
/** BENCH_WORKERS=0 skips the two-worker phase. */
export const WORKERS = process.env.BENCH_WORKERS !== '0';
export const WORKER_ROUNDS = Number(process.env.BENCH_WORKER_ROUNDS ?? Math.max(2, Math.ceil(ROUNDS / 2)));
/** Another checkout of the project: its data path (`off`) is measured side by side with this one's. */
export const BASELINE = process.env.BENCH_BASELINE;
const NGINX_BIN = process.env.NGINX_BIN ?? '/usr/sbin/nginx';
/** The `bench` folder. */
const BENCH_DIR = new URL('..', import.meta.url).pathname;

export const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

const CLOCK_TICKS_PER_S = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime from a /proc `stat` file, in microseconds. */
function statCpuUs(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / CLOCK_TICKS_PER_S;
}

/** utime + stime of a process (all its threads), in microseconds. */
export function cpuUs(pid: number): number {
  return statCpuUs(`/proc/${pid}/stat`);
}

export const cpuOf = (pids: readonly number[]) => pids.reduce((sum, pid) => sum + cpuUs(pid), 0);

/**
 * CPU so far of a Node process's threads, by part: `main` (its main thread), `worker 1`, `worker 2`, …
 * (the threads `workerTids` names, in that order), `other` (every other thread: V8's and libuv's
 * helpers, a module loader's thread).
 */
export function threadCpuUs(pid: number, workerTids: readonly number[] = []): Map<string, number> {
  const parts = new Map<string, number>([['main', 0]]);
  for (let i = 0; i < workerTids.length; i++) parts.set(`worker ${i + 1}`, 0);
  let other = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    try {
      const us = statCpuUs(`/proc/${pid}/task/${tid}/stat`);
      const worker = workerTids.indexOf(tid);
      if (tid === pid) parts.set('main', us);
      else if (worker >= 0) parts.set(`worker ${worker + 1}`, us);
      else other += us;
    } catch {
      // a thread that ended meanwhile
    }
  }
  parts.set('other', other);
  return parts;
}

/**
 * The whole machine's CPU time so far, busy and in all, in clock ticks summed over its cores, and the
 * number of its cores.
 */
function machineTicks(): { busy: number; total: number; cores: number } {
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  const [, ...fields] = lines[0]!.trim().split(/\s+/);
  const ticks = fields.slice(0, 8).map(Number); // user nice system idle iowait irq softirq steal
  const total = ticks.reduce((sum, t) => sum + t, 0);
  const cores = lines.filter((line) => /^cpu\d/.test(line)).length;
  return { busy: total - ticks[3]! - ticks[4]!, total, cores };
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Starts `bench/replica/<script>` under tsx and waits for its first IPC message. */
export async function startNode<T>(
  script: string,
  args: readonly string[] = [],
  benchDir = BENCH_DIR,
): Promise<{ child: ChildProcess; first: T }> {
  const profile =
    process.env.BENCH_CPU_PROF !== undefined && script === 'proxy-main.ts'
      ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF]
      : [];
  const child = spawn(
    process.execPath,
    [...profile, '--import', 'tsx', join(benchDir, 'replica', script), ...args],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  children.push(child);
  const [first] = (await once(child, 'message')) as [T];
  return { child, first };
}

async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
}

/**
 * The throughput case: upstream keepalive 64, and the Host and X-Forwarded-* lines the replica added
 * on its own before it honoured proxy_set_header (its hook-only modes now send nginx's default set).
 */
export function keptUpstreamConf(port: number, upstreamPort: number): string {
  return `  keepalive_requests 1000000;
  upstream backend { server 127.0.0.1:${upstreamPort}; keepalive 64; keepalive_requests 1000000; }
  server {
    listen 127.0.0.1:${port};
    server_name cafe.example.com;
    location / {
      proxy_pass http://backend;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_set_header X-Forwarded-Host $host;
    }
  }`;
}

/** The latency case: what a new user writes, an upstream block without keepalive, nginx's defaults. */
export function defaultUpstreamConf(port: number, upstreamPort: number): string {
  return `  upstream backend { server 127.0.0.1:${upstreamPort}; }
  server {
    listen 127.0.0.1:${port};
    server_name cafe.example.com;
    location / { proxy_pass http://backend; }
  }`;
}

/** The pids of a process's children (nginx's workers). */
const childPids = (pid: number): number[] =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);

/**
 * nginx with `workers` worker processes (one unless said) proxying to the upstream, its `http`
 * block's servers from `servers`. Resolves once the port answers and every worker is forked.
 */
export async function startNginx(
  upstreamPort: number,
  servers: (port: number, upstreamPort: number) => string = keptUpstreamConf,
  workers = 1,
): Promise<{ port: number; pids: number[]; stop(): void }> {
  const prefix = mkdtempSync(join(tmpdir(), 'limitswitch-bench-nginx-'));
  mkdirSync(join(prefix, 'temp'));
  const port = await freePort();
  const conf = `daemon off;
master_process on;
worker_processes ${workers};
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${prefix}/temp/body;
  proxy_temp_path ${prefix}/temp/proxy;
  fastcgi_temp_path ${prefix}/temp/fastcgi;
  uwsgi_temp_path ${prefix}/temp/uwsgi;
  scgi_temp_path ${prefix}/temp/scgi;
${servers(port, upstreamPort)}
}
`;
  writeFileSync(join(prefix, 'nginx.conf'), conf);
  const master = spawn(
    NGINX_BIN,
    ['-p', `${prefix}/`, '-c', join(prefix, 'nginx.conf'), '-e', join(prefix, 'error.log')],
    {
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  children.push(master);
  await waitForPort(port);
  const pid = master.pid!;
  // the master listens before it forks its workers
  const deadline = Date.now() + 10_000;
  while (childPids(pid).length < workers && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 20));
  return {
    port,
    pids: [pid, ...childPids(pid)],
    stop() {
      master.kill('SIGTERM');
      rmSync(prefix, { recursive: true, force: true });
    },
  };
}

export interface Target {
  readonly name: string;
  readonly port: number;
  readonly pids: readonly number[];
  /** CPU so far by part (threads, processes), when the phase reports how a server's CPU splits. */
  readonly parts?: () => Map<string, number>;
}

export interface Sample {
  readonly p50Ms?: number;
  readonly p99Ms?: number;
  readonly rps: number;
  readonly cpuUsPerRequest: number;
  readonly upstreamCpuUsPerRequest: number;
  readonly loadCpuUsPerRequest: number;
  readonly errors: number;
  readonly non2xx: number;
  /** Requests answered in the window. */
  readonly requests: number;
  /** Cores the whole machine kept busy during the window (every process, the benchmark's or not). */
  readonly machineCoresBusy: number;
  /** With the target's `parts`: each part's CPU per request, µs. */
  readonly partsUsPerRequest?: Map<string, number>;
}

/** One measured window of the load generator against `target`. */
export async function measure(
  loadGen: ChildProcess,
  target: Target,
  upstreamPid: number,
  warmupMs: number,
  how: Partial<LoadRequest> = {},
): Promise<Sample> {
  const request: LoadRequest = {
    port: target.port,
    connections: CONNECTIONS,
    warmupMs,
    durationMs: DURATION_MS,
    ...how,
  };
  loadGen.send(request);
  await once(loadGen, 'message'); // measuring
  const cpuStart = cpuOf(target.pids);
  const upstreamStart = cpuUs(upstreamPid);
  const loadStart = cpuUs(loadGen.pid!);
  const partsStart = target.parts?.();
  const machineStart = machineTicks();
  const [done] = (await once(loadGen, 'message')) as [LoadResult];
  const cpuEnd = cpuOf(target.pids);
  const upstreamEnd = cpuUs(upstreamPid);
  const loadEnd = cpuUs(loadGen.pid!);
  const partsEnd = target.parts?.();
  const machineEnd = machineTicks();
  const requests = Math.max(1, done.requests);
  const sample: Sample = {
    rps: done.requests / (done.elapsedMs / 1000),
    cpuUsPerRequest: (cpuEnd - cpuStart) / requests,
    upstreamCpuUsPerRequest: (upstreamEnd - upstreamStart) / requests,
    loadCpuUsPerRequest: (loadEnd - loadStart) / requests,
    errors: done.errors,
    non2xx: done.non2xx,
    requests: done.requests,
    machineCoresBusy:
      ((machineEnd.busy - machineStart.busy) / Math.max(1, machineEnd.total - machineStart.total)) *
      machineEnd.cores,
    ...(done.p50Ms === undefined ? {} : { p50Ms: done.p50Ms, p99Ms: done.p99Ms }),
  };
  if (partsStart === undefined || partsEnd === undefined) return sample;
  const partsUsPerRequest = new Map<string, number>();
  for (const [part, us] of partsEnd)
    partsUsPerRequest.set(part, (us - (partsStart.get(part) ?? 0)) / requests);
  return { ...sample, partsUsPerRequest };
}

export const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
export const round = (x: number, digits: number) => Number(x.toFixed(digits));

/** p (0..1) of `values`, nearest rank. */
export const quantile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN;
};

export const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
