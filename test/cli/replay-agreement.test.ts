/**
 * replay and simulate make the same decisions: one timeline, given to `simulate` as JSON lines and
 * written as the access log nginx would have written for it (in end order, `$msec` and
 * `$request_time`), gives line for line the same answers, and replay's totals are the sums of them.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { TempDir } from '../helpers/limitswitch-process.ts';
import { runSimulate, type SimulateRequest, type SimulateResult } from '../helpers/simulate.ts';

const BIN = fileURLToPath(new URL('../../bin/limitswitch.js', import.meta.url));
const dir = new TempDir();
after(() => dir.remove());

const CONFIG = dir.write(
  'nginx.conf',
  `events {}
http {
    log_format timed '$remote_addr "$request" $status $http_host $server_port $msec $request_time "$http_x_tier"';
    keyval_zone zone=switches:64k type=prefix;
    keyval $uri $switch zone=switches;
    map $switch $limit_key { default ""; 1 $binary_remote_addr; }
    map $http_x_tier $tier_key { default $binary_remote_addr; gold ""; }
    limit_req_zone $limit_key zone=coffee:1m rate=5r/s;
    limit_req_zone $tier_key zone=tea:1m rate=2r/s;
    limit_req_zone $limit_key zone=trial:1m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=other:1m rate=3r/s;
    server {
        listen 8081;
        server_name cafe.example.com;
        location /coffee { limit_req zone=coffee burst=3 nodelay; limit_req zone=tea burst=10; proxy_pass http://127.0.0.1:9; }
        location /tea { limit_req zone=tea burst=4; proxy_pass http://127.0.0.1:9; }
        location /trial { limit_req zone=trial; limit_req_dry_run on; proxy_pass http://127.0.0.1:9; }
        location / { proxy_pass http://127.0.0.1:9; }
    }
    server {
        listen 8082;
        server_name other.example.com;
        location / { limit_req zone=other burst=2 nodelay; proxy_pass http://127.0.0.1:9; }
    }
}
`,
);
const SWITCHES = ['switches:/coffee=1', 'switches:/trial=1'];

const START_MS = Date.UTC(2026, 11, 2, 9, 59, 30);

/** xorshift32, so the timeline is the same in every run. */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

interface Logged extends SimulateRequest {
  readonly requestTimeMs: number;
}

function timeline(): Logged[] {
  const next = random(42);
  const uris = ['/coffee', '/coffee/latte', '/tea', '/tea?x=1', '/trial', '/', '/menu'];
  const out: Logged[] = [];
  let t = START_MS;
  for (let i = 0; i < 3000; i++) {
    // bursts: a third of the requests come within a millisecond or two of the one before
    t += next() < 0.3 ? Math.floor(next() * 2) : Math.floor(next() * 60);
    const other = next() < 0.15;
    out.push({
      t,
      addr: `10.0.${Math.floor(next() * 2)}.${Math.floor(next() ** 2 * 8)}`,
      host: other ? 'other.example.com' : 'cafe.example.com',
      port: other ? 8082 : 8081,
      uri: other ? '/' : uris[Math.floor(next() * uris.length)]!,
      method: 'GET',
      headers: next() < 0.2 ? { 'x-tier': 'gold' } : {},
      requestTimeMs: Math.floor(next() ** 4 * 3000),
    });
  }
  return out;
}

const seconds = (ms: number) => `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}`;

/** The line nginx writes when the request ends (`t` + its request time). */
function logLine(r: Logged): string {
  const tier = r.headers['x-tier'] ?? '-';
  return `${r.addr} "${r.method} ${r.uri} HTTP/1.1" 200 ${r.host} ${r.port} ${seconds(r.t + r.requestTimeMs)} ${seconds(r.requestTimeMs)} "${tier}"`;
}

describe('replay and simulate agree', () => {
  it('on every decision of a 3000-request timeline, and on the sums', async () => {
    // nginx logs in end order
    const logged = timeline()
      .map((r, i) => ({ r, i }))
      .sort((a, b) => a.r.t + a.r.requestTimeMs - (b.r.t + b.r.requestTimeMs) || a.i - b.i)
      .map(({ r }) => r);
    const logFile = dir.write('access.log', `${logged.map(logLine).join('\n')}\n`);
    // simulate's input in arrival order; requests of one millisecond in log order, as replay takes
    // them (the log cannot tell which of them nginx saw first)
    const requests = logged
      .map((r, i) => ({ r, i }))
      .sort((a, b) => a.r.t - b.r.t || a.i - b.i)
      .map(({ r }) => r);

    const keyvals = SWITCHES.map((s) => {
      const [zone, rest] = s.split(':') as [string, string];
      const [key, value] = rest.split('=') as [string, string];
      return { t: requests[0]!.t, keyval: { zone, key, value } };
    });
    const simulated = await runSimulate(
      CONFIG,
      requests.map(({ requestTimeMs: _, ...r }) => r),
      60_000,
      keyvals,
    );

    const args = ['replay', '-c', CONFIG, '--access-log', logFile, '--log-format', 'timed'];
    for (const s of SWITCHES) args.push('--keyval', s);
    const decisions = spawnSync(process.execPath, [BIN, ...args, '--decisions'], { encoding: 'utf8' });
    assert.equal(decisions.status, 0, decisions.stderr);
    const replayed = decisions.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as SimulateResult);
    assert.equal(replayed.length, requests.length);
    assert.deepEqual(replayed, simulated);

    // the timeline limits in every way: the test would not show much otherwise
    const count = (status: string) => simulated.filter((r) => r.status === status).length;
    for (const status of ['', 'PASSED', 'DELAYED', 'REJECTED', 'REJECTED_DRY_RUN']) {
      assert.ok(count(status) > 20, `${status || 'not limited'}: ${count(status)}`);
    }

    const report = spawnSync(process.execPath, [BIN, ...args, '--json'], { encoding: 'utf8' });
    assert.equal(report.status, 0, report.stderr);
    const json = JSON.parse(report.stdout);
    assert.deepEqual(json.totals, {
      requests: requests.length,
      not_limited: count(''),
      passed: count('PASSED'),
      delayed: count('DELAYED'),
      rejected: count('REJECTED'),
      delayed_dry_run: count('DELAYED_DRY_RUN'),
      rejected_dry_run: count('REJECTED_DRY_RUN'),
    });
    assert.equal(json.late, 0);
    // the one header the limits read ($http_x_tier) is in the format
    assert.deepEqual(json.unlogged_variables, []);
    assert.deepEqual(json.bad_lines, { count: 0, first: [] });
  });
});
