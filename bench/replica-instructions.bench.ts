/**
 * The replica's data path in instructions a request: a count that does not move with the machine's
 * speed or with what else runs on it, for telling two trees apart where req/s and CPU time (±5 % from
 * round to round on a shared 2-core box) cannot.
 *
 * The `off` proxy (bench/replica/proxy-main.ts: the data path, limits switched off) runs under
 * valgrind's callgrind with its instrumentation off. Twice, first over CONNECTIONS kept connections,
 * then with a connection per request: WARMUP requests (the compiler settles), instrumentation on for
 * REQUESTS requests, then off, and the user-space instructions counted in between divided by REQUESTS. System calls are the kernel's and not
 * counted: both trees make the same ones (strace: one read, one write and one writev a request).
 * With BENCH_BASELINE=<another checkout>, that checkout's proxy is counted the same way and the ratio
 * printed. Over kept connections repeats of one tree agree within 0.5 % at 10 000 requests; on a
 * connection each, where the count includes the garbage collector's work, where its cycles fall moves
 * a count of 10 000 requests by up to 8 %, hence 30 000 (about 8 minutes for two trees).
 *
 * Run: npm run bench:instructions     (needs valgrind; last line: JSON)
 * Knobs: BENCH_WARMUP (30000), BENCH_REQUESTS (30000), BENCH_CONNECTIONS (10), BENCH_BASELINE.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const WARMUP = Number(process.env.BENCH_WARMUP ?? 30_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 30_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const BASELINE = process.env.BENCH_BASELINE;
const HERE = new URL('.', import.meta.url).pathname;
const THIS_TREE = join(HERE, '..');

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
});

function has(command: string): boolean {
  try {
    execFileSync(command, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Starts `<tree>/bench/replica/<script>` (under `prefix`, if any) and waits for its `{ port }`. */
async function start(
  tree: string,
  script: string,
  args: readonly string[],
  prefix: readonly string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  const node = [process.execPath, '--import', 'tsx', join(tree, 'bench', 'replica', script), ...args];
  const [command, ...rest] = [...prefix, ...node] as [string, ...string[]];
  const child = spawn(command, rest, { cwd: tree, stdio: ['ignore', 'inherit', 'ignore', 'ipc'] });
  children.push(child);
  const [message] = (await once(child, 'message')) as [{ port: number }];
  return { child, port: message.port };
}

/**
 * `count` GET /coffee, `CONNECTIONS` at a time, each answer read whole: over `agent`'s keep-alive
 * connections, or with `agent` false on a connection of its own each (`Connection: close`).
 */
async function send(agent: Agent | false, port: number, count: number): Promise<void> {
  let sent = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path: '/coffee', agent, headers: { host: 'cafe.example.com' } },
        (res) => {
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end();
    });
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (sent++ < count) await one();
    }),
  );
}

/** Instructions a request of `tree`'s data path: over kept connections, and on a fresh one each. */
async function countTree(tree: string, upstreamPort: number, dir: string): Promise<[number, number]> {
  const out = join(dir, `callgrind.${children.length}`);
  const proxy = await start(
    tree,
    'proxy-main.ts',
    ['off', String(upstreamPort)],
    ['valgrind', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`],
  );
  const pid = String(proxy.child.pid);
  const counted = async (agent: Agent | false, part: string): Promise<void> => {
    await send(agent, proxy.port, WARMUP);
    execFileSync('callgrind_control', ['-z', pid], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['-i', 'on', pid], { stdio: 'ignore' });
    await send(agent, proxy.port, REQUESTS);
    execFileSync('callgrind_control', ['-i', 'off', pid], { stdio: 'ignore' });
    execFileSync('callgrind_control', ['-d', part, pid], { stdio: 'ignore' });
  };
  // the same connections throughout: what is counted is requests, not connections opening or closing
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  await counted(agent, 'kept');
  agent.destroy();
  await counted(false, 'fresh');
  proxy.child.kill('SIGINT');
  await once(proxy.child, 'exit');
  return [instructionsOf(`${out}.1`), instructionsOf(`${out}.2`)];
}

/** Instructions a request in one callgrind dump. */
function instructionsOf(file: string): number {
  const summary = execFileSync('callgrind_annotate', [file], { encoding: 'utf8' });
  const total = /^([\d,]+) .*PROGRAM TOTALS/m.exec(summary);
  if (total === null) throw new Error(`no totals in ${file}`);
  return Number(total[1]!.replaceAll(',', '')) / REQUESTS;
}

async function main(): Promise<void> {
  if (!has('valgrind')) {
    console.error('bench:instructions needs valgrind (Debian package: valgrind)');
    process.exit(2);
  }
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-instructions-'));
  try {
    const upstream = await start(THIS_TREE, 'upstream-server.ts', []);
    const result: Record<string, number> = {};
    const [kept, fresh] = await countTree(THIS_TREE, upstream.port, dir);
    result.kept_instructions_per_request = Math.round(kept);
    result.fresh_instructions_per_request = Math.round(fresh);
    console.log(
      `this tree: ${result.kept_instructions_per_request} instructions a request over kept connections, ` +
        `${result.fresh_instructions_per_request} on a connection each (${REQUESTS} requests each)`,
    );
    if (BASELINE !== undefined) {
      const [baseKept, baseFresh] = await countTree(BASELINE, upstream.port, dir);
      result.baseline_kept_instructions_per_request = Math.round(baseKept);
      result.baseline_fresh_instructions_per_request = Math.round(baseFresh);
      result.kept_vs_baseline = Math.round((kept / baseKept) * 1000) / 1000;
      result.fresh_vs_baseline = Math.round((fresh / baseFresh) * 1000) / 1000;
      console.log(
        `baseline (${BASELINE}): ${result.baseline_kept_instructions_per_request} kept, ` +
          `${result.baseline_fresh_instructions_per_request} fresh; this tree / baseline ` +
          `${result.kept_vs_baseline} kept, ${result.fresh_vs_baseline} fresh`,
      );
    }
    console.log(JSON.stringify(result));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    for (const child of children) child.kill();
  }
}

await main();
