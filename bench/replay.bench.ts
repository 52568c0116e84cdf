/**
 * `limitswitch replay`'s speed on a day of access logs: lines per minute, measured side by side with
 * the floor every replay pays — reading the file and splitting it into lines — in the same process and
 * run. The log is generated: many clients (a few heavy ones), several locations, some of them limited,
 * request times up to 250 ms (so the reorder buffer works), written once in a format with $msec and
 * $request_time (exact times) and once in nginx's combined format (1 s times, spread).
 *
 * Run: npm run bench:replay   (last line: JSON)
 * Knobs: BENCH_LINES (default 1 500 000, about a day at 17 requests/s), BENCH_ROUNDS (default 3;
 * medians are reported).
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AccessLogParser } from '../src/cli/replay/access-log-parser.ts';
import { readLines } from '../src/cli/replay/line-reader.ts';
import { Replay } from '../src/cli/replay/replay.ts';
import { buildSite } from '../src/config/build-site.ts';
import { findLogFormat, loadConfigFile } from '../src/config/index.ts';
import { defaultRequestPort } from '../src/engine/http/served-ports.ts';

const LINES = Number(process.env.BENCH_LINES ?? 1_500_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BIN = fileURLToPath(new URL('../bin/limitswitch.js', import.meta.url));
const DAY_START_MS = Date.UTC(2026, 11, 1);
const DAY_MS = 86_400_000;
const CLIENTS = 50_000;
const HEAVY_CLIENTS = 20;

const CONFIG = `
http {
    log_format timed '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent '
                     '"$http_referer" "$http_user_agent" $host $msec $request_time';
    keyval_zone zone=limitreq_uri:64k type=prefix;
    keyval $uri $enablelimit zone=limitreq_uri;
    map $enablelimit $limit_key { default ""; 1 $binary_remote_addr; }
    limit_req_zone $limit_key zone=coffee:10m rate=2r/s;
    limit_req_zone $binary_remote_addr zone=api:10m rate=5r/s;
    server {
        listen 8081;
        server_name cafe.example.com;
        location /tea { proxy_pass http://127.0.0.1:8091; }
        location /coffee { limit_req zone=coffee burst=5 nodelay; proxy_pass http://127.0.0.1:8092; }
        location /api { limit_req zone=api burst=10; proxy_pass http://127.0.0.1:8093; }
        location / { proxy_pass http://127.0.0.1:8091; }
    }
}
`;
const SWITCHES = [{ zone: 'limitreq_uri', key: '/coffee', value: '1' }];
const URIS = [
  '/tea',
  '/tea/green',
  '/coffee',
  '/coffee/latte?size=l',
  '/api/orders',
  '/api/menu',
  '/',
  '/about',
];

/** xorshift32: the same log in every run. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

interface Entry {
  readonly startMs: number;
  readonly requestTimeMs: number;
  readonly client: number;
  readonly uri: string;
}

function generate(): Entry[] {
  const next = random(7);
  const entries: Entry[] = [];
  const gapMs = DAY_MS / LINES;
  let t = DAY_START_MS;
  while (entries.length < LINES) {
    t += next() * 2 * gapMs;
    if (next() < 0.002) {
      // a heavy client's burst: 30 requests within a second to one location, the kind a limit stops
      const client = Math.floor(next() * HEAVY_CLIENTS);
      const uri = next() < 0.5 ? '/coffee/latte?size=l' : '/api/orders';
      for (let i = 0; i < 30 && entries.length < LINES; i++) {
        entries.push({
          startMs: Math.floor(t + i * 33),
          requestTimeMs: Math.floor(next() * 20),
          client,
          uri,
        });
      }
      continue;
    }
    const client = HEAVY_CLIENTS + Math.floor(next() ** 3 * (CLIENTS - HEAVY_CLIENTS));
    const uri = URIS[Math.floor(next() * URIS.length)]!;
    entries.push({ startMs: Math.floor(t), requestTimeMs: Math.floor(next() * 250), client, uri });
  }
  // nginx writes a line when its request ends
  return entries.sort((a, b) => a.startMs + a.requestTimeMs - (b.startMs + b.requestTimeMs));
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number, width = 2) => String(n).padStart(width, '0');
function timeLocal(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())} +0000`;
}
const seconds = (ms: number) => `${Math.floor(ms / 1000)}.${pad(ms % 1000, 3)}`;
const addr = (client: number) => `10.${(client >> 16) & 255}.${(client >> 8) & 255}.${client & 255}`;

async function writeLog(path: string, entries: readonly Entry[], timed: boolean): Promise<void> {
  const out = createWriteStream(path);
  let batch: string[] = [];
  for (const e of entries) {
    const endMs = e.startMs + e.requestTimeMs;
    const head = `${addr(e.client)} - - [${timeLocal(endMs)}] "GET ${e.uri} HTTP/1.1" 200 612 "-" "Mozilla/5.0 (X11; Linux x86_64) bench/1.0"`;
    batch.push(
      timed ? `${head} cafe.example.com ${seconds(endMs)} ${seconds(e.requestTimeMs)}\n` : `${head}\n`,
    );
    if (batch.length === 10_000) {
      if (!out.write(batch.join(''))) await new Promise<void>((r) => out.once('drain', () => r()));
      batch = [];
    }
  }
  out.end(batch.join(''));
  await new Promise<void>((r) => out.once('finish', () => r()));
}

/** Both logs of one generated day; the entries are garbage once written (not in the measured heap). */
async function writeLogs(logs: { readonly timed: string; readonly combined: string }): Promise<void> {
  const entries = generate();
  await writeLog(logs.timed, entries, true);
  await writeLog(logs.combined, entries, false);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const perMinute = (lines: number, ms: number) => Math.round((lines / ms) * 60_000);

async function timed(run: () => Promise<number>): Promise<{ ms: number; lines: number }> {
  const start = performance.now();
  const lines = await run();
  return { ms: performance.now() - start, lines };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'replay-bench-'));
  try {
    const configFile = join(dir, 'nginx.conf');
    writeFileSync(configFile, CONFIG);
    const http = loadConfigFile(configFile).http;
    const logs = { timed: join(dir, 'timed.log'), combined: join(dir, 'combined.log') };
    await writeLogs(logs);

    const results: Record<string, unknown> = { lines: LINES, rounds: ROUNDS };
    console.log(`${LINES} lines, ${ROUNDS} rounds; lines/min (median), replay / read+split`);
    for (const format of ['timed', 'combined'] as const) {
      const baseline: number[] = [];
      const replayed: number[] = [];
      let limited = 0;
      for (let round = 0; round < ROUNDS; round++) {
        const read = await timed(() => readLines(logs[format], () => {}));
        baseline.push(perMinute(read.lines, read.ms));
        const site = buildSite(http);
        const replay = new Replay({
          site,
          parser: new AccessLogParser(findLogFormat(http.logFormats, format)!),
          switches: SWITCHES,
          defaultPort: defaultRequestPort(site),
          sameSecond: 'spread',
        });
        const run = await timed(() => readLines(logs[format], (text, n) => replay.line(text, n)));
        const summary = replay.finish(10);
        if (summary.totals.requests !== LINES)
          throw new Error(`${summary.totals.requests} of ${LINES} replayed`);
        limited = summary.totals.rejected + summary.totals.delayed;
        replayed.push(perMinute(run.lines, run.ms));
      }
      const ratio = median(replayed) / median(baseline);
      console.log(
        `${format.padEnd(8)}  read+split ${median(baseline).toLocaleString('en')}  replay ${median(replayed).toLocaleString('en')}  ratio ${ratio.toFixed(3)}  (${limited} limited)`,
      );
      results[format] = {
        baseline: median(baseline),
        replay: median(replayed),
        ratio,
        limited,
        samples: replayed,
      };
    }

    // the command as a user runs it: process start, config, the whole log, the report
    const start = performance.now();
    const cli = spawnSync(
      process.execPath,
      [
        BIN,
        'replay',
        '-c',
        configFile,
        '--access-log',
        logs.timed,
        '--log-format',
        'timed',
        '--keyval',
        'limitreq_uri:/coffee=1',
        '--json',
      ],
      { encoding: 'utf8', maxBuffer: 1 << 26 },
    );
    const cliMs = performance.now() - start;
    if (cli.status !== 0) throw new Error(`replay exited ${cli.status}: ${cli.stderr}`);
    console.log(
      `cli       timed log, wall clock ${(cliMs / 1000).toFixed(1)} s: ${perMinute(LINES, cliMs).toLocaleString('en')} lines/min`,
    );
    results.cli = { ms: Math.round(cliMs), linesPerMinute: perMinute(LINES, cliMs) };
    console.log(JSON.stringify(results));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
