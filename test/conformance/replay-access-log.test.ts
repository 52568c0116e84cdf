/**
 * `limitswitch replay` on a log real nginx wrote: nginx serves a timeline and logs each request with
 * `$msec $request_time` and its own `$limit_req_status`; replaying that log with the same configuration
 * gives, request for request, the status nginx gave — the timing rule (a request came in
 * `$request_time` before its line, delayed ones included) is nginx's.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { TempDir } from '../helpers/limitswitch-process.ts';
import { startNginx } from '../helpers/nginx.ts';
import { simulateConfig } from '../helpers/simulate.ts';
import { runTimeline, type TimelineRequest } from '../helpers/timeline.ts';

const BIN = fileURLToPath(new URL('../../bin/limitswitch.js', import.meta.url));
const dir = new TempDir();
after(() => dir.remove());

const body = (port: number) => `
    log_format replay '$remote_addr [$time_local] "$request" $status $host $server_port $msec $request_time "$limit_req_status"';
    access_log logs/replay.log replay;
    limit_req_zone $binary_remote_addr zone=fast:1m rate=10r/s;
    limit_req_zone $binary_remote_addr zone=slow:1m rate=4r/s;
    limit_req_zone $binary_remote_addr zone=trial:1m rate=2r/s;
    server {
        listen 127.0.0.1:${port};
        location /a { limit_req zone=fast burst=2 nodelay; }
        location /b { limit_req zone=slow burst=3; }
        location /c { limit_req zone=trial; limit_req_dry_run on; }
    }
`;

/**
 * Three clients, each on its own location faster than its limit allows, at least 15 ms apart (so no two
 * requests of one client share nginx's millisecond). Every decision is ≥ 5 ms from its threshold: nginx
 * decides on its monotonic clock but logs `$msec` from the wall clock, and the two are truncated to the
 * millisecond apart, so a start time rebuilt from the log can be 1 ms off (with /a every 20 ms, its
 * seventh request met the burst exactly and flipped).
 */
function timeline(): TimelineRequest[] {
  const steps: TimelineRequest[] = [];
  for (let i = 0; i < 20; i++) {
    steps.push({ at: i * 15, addr: '10.7.0.1', uri: '/a' });
    steps.push({ at: i * 40 + 5, addr: '10.7.0.2', uri: '/b' });
    steps.push({ at: i * 30 + 10, addr: '10.7.0.3', uri: '/c' });
  }
  return steps.sort((x, y) => x.at - y.at);
}

interface Decision {
  readonly t: number;
  readonly status: string;
  readonly code: number;
}

/** One run of the timeline against nginx, its log replayed: what nginx logged and what replay says. */
async function nginxAndReplay(): Promise<{ logged: Decision[]; replayed: Decision[] }> {
  const nginx = await startNginx({ http: body, files: { a: 'a', b: 'b', c: 'c' } });
  let log: string;
  let port: number;
  try {
    port = nginx.port;
    await runTimeline(port, timeline());
    log = readFileSync(join(nginx.prefix, 'logs/replay.log'), 'latin1');
  } finally {
    await nginx.stop();
  }
  const logFile = dir.write('access.log', log);
  const config = dir.write('nginx.conf', simulateConfig(body(port)));
  const run = spawnSync(
    process.execPath,
    [BIN, 'replay', '-c', config, '--access-log', logFile, '--log-format', 'replay', '--decisions'],
    { encoding: 'utf8' },
  );
  assert.equal(run.status, 0, run.stderr);
  const replayed = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Decision)
    .map((r) => ({ t: r.t, status: r.status, code: r.code }));

  // nginx's lines in arrival order (ties in log order, as replay takes them): start = $msec − $request_time
  const ms = (s: string) => Math.round(Number(s) * 1000);
  const logged = log
    .trim()
    .split('\n')
    .map((line, i) => {
      const m = / (\d+)\s(\d+\.\d{3}) (\d+\.\d{3}) "([A-Z_]*)"$/.exec(line);
      assert.ok(m, line);
      const [, _port, msec, requestTime, status] = m;
      return {
        i,
        t: ms(msec!) - ms(requestTime!),
        status: status!,
        code: Number(line.split('" ')[1]!.split(' ')[0]),
      };
    })
    .sort((a, b) => a.t - b.t || a.i - b.i)
    .map((l) => ({ t: l.t, status: l.status, code: l.code }));
  return { logged, replayed };
}

/**
 * nginx reads its clock once per turn of its event loop: on a machine that starves it, requests share a
 * stale millisecond and its log no longer says to the millisecond when each came, so a decision near
 * its threshold can be rebuilt 1–2 ms off. Such a run is run again (up to three times); a replay rule
 * that is wrong disagrees in every run.
 */
test('replaying the log nginx wrote gives every request the $limit_req_status nginx gave it', async (t) => {
  let result = await nginxAndReplay();
  for (let run = 2; run <= 3 && !isDeepStrictEqual(result.replayed, result.logged); run++) {
    t.diagnostic(`run ${run - 1}: the replay disagreed with nginx's log; the timeline again`);
    result = await nginxAndReplay();
  }
  const { logged, replayed } = result;
  assert.equal(logged.length, 60);
  assert.deepEqual(replayed, logged);
  // the timeline limits in every way nginx can
  const statuses = new Set(logged.map((l) => l.status));
  for (const status of ['PASSED', 'DELAYED', 'REJECTED', 'REJECTED_DRY_RUN'])
    assert.ok(statuses.has(status), status);
});
