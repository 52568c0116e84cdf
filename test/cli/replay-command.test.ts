import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { TempDir } from '../helpers/limitswitch-process.ts';

const BIN = fileURLToPath(new URL('../../bin/limitswitch.js', import.meta.url));
const CAFE = fileURLToPath(new URL('../../examples/cafe/nginx.conf', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function replay(args: readonly string[]): Promise<Run> {
  const child = spawn(process.execPath, [BIN, 'replay', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const dir = new TempDir();
after(() => dir.remove());

const CONFIG = dir.write(
  'nginx.conf',
  `events {}
http {
    log_format timed '$remote_addr [$time_local] "$request" $status $host:$server_port $msec $request_time';
    keyval_zone zone=limitreq_uri:64k type=prefix;
    keyval $uri $enablelimit zone=limitreq_uri;
    map $enablelimit $limit_key { default ""; 1 $binary_remote_addr; }
    limit_req_zone $limit_key zone=coffee:1m rate=1r/s;
    limit_req_zone $limit_key zone=trial:1m rate=1r/s;
    server {
        listen 8081;
        server_name cafe.example.com;
        location /coffee { limit_req zone=coffee nodelay; proxy_pass http://127.0.0.1:9; }
        location /tea { limit_req zone=trial; limit_req_dry_run on; proxy_pass http://127.0.0.1:9; }
        location / { proxy_pass http://127.0.0.1:9; }
    }
}
`,
);

/** 2026-12-02 10:00:00 UTC, in $msec's form plus `ms`. */
const BASE_S = Date.UTC(2026, 11, 2, 10) / 1000;
const msec = (ms: number) => `${BASE_S + Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}`;
const timedLine = (addr: string, uri: string, endMs: number, requestTimeMs: number) =>
  `${addr} [02/Dec/2026:10:00:${String(Math.floor(endMs / 1000) % 60).padStart(2, '0')} +0000] "GET ${uri} HTTP/1.1" 200 ` +
  `cafe.example.com:8081 ${msec(endMs)} ${(requestTimeMs / 1000).toFixed(3)}`;

// in end order, as nginx writes them: the first /coffee took 500 ms, so it is logged after the second
const TIMED_LOG = dir.write(
  'timed.log',
  [
    timedLine('10.0.0.1', '/coffee', 100, 0), // came in at 100: REJECTED (the one at 0 passed)
    timedLine('10.0.0.2', '/coffee', 200, 0), // PASSED
    timedLine('10.0.0.1', '/coffee', 500, 500), // came in at 0: PASSED
    timedLine('10.0.0.3', '/tea', 600, 0), // PASSED (dry run zone)
    'garbage',
    timedLine('10.0.0.3', '/tea', 610, 0), // REJECTED_DRY_RUN
    timedLine('10.0.0.1', '/coffee', 1100, 0), // PASSED: a second after the one at 100 was refused
    `10.0.0.9 [02/Dec/2026:10:00:01 +0000] "-" 400 cafe.example.com:8081 ${msec(1200)} 0.000`,
    timedLine('10.0.0.4', '/about', 61_000, 0), // not limited, the next minute
    '',
  ].join('\n'),
);

const SWITCHES = ['--keyval', 'limitreq_uri:/coffee=1', '--keyval', 'limitreq_uri:/tea=1'];
const columns = (text: string) => text.split('\n').map((line) => line.trim().split(/\s{2,}/));

describe('limitswitch replay', () => {
  it('prints per zone, per location, the limited clients and per minute what the switches would have done', async () => {
    const run = await replay(['-c', CONFIG, '--access-log', TIMED_LOG, '--log-format', 'timed', ...SWITCHES]);
    assert.equal(run.code, 0, run.stderr);
    const lines = run.stdout.split('\n');
    assert.deepEqual(lines.slice(0, 6), [
      `replayed 7 requests of 9 lines from ${TIMED_LOG} (log_format timed, $msec: 1 ms)`,
      'switches: limitreq_uri:/coffee=1 limitreq_uri:/tea=1',
      'from 2026-12-02T10:00:00.000Z to 2026-12-02T10:01:01.000Z',
      'skipped: 1 line without a request line',
      'unreadable: 1 line',
      '  line 5: does not match log_format "timed": garbage',
    ]);
    const rows = columns(run.stdout);
    const row = (first: string) => rows.find((r) => r[0] === first);
    // zone: passed, delayed, rejected, delayed (dry run), rejected (dry run)
    assert.deepEqual(row('coffee'), ['coffee', '3', '0', '1', '0', '0']);
    assert.deepEqual(row('trial'), ['trial', '1', '0', '0', '0', '1']);
    // location: requests, not limited, passed, delayed, rejected, delayed (dry run), rejected (dry run)
    const locations = rows.filter((r) => r[0] === 'cafe.example.com');
    assert.deepEqual(locations, [
      ['cafe.example.com', 'location /coffee', '4', '0', '3', '0', '1', '0', '0'],
      ['cafe.example.com', 'location /tea', '2', '0', '1', '0', '0', '0', '1'],
      ['cafe.example.com', 'location /', '1', '1', '0', '0', '0', '0', '0'],
    ]);
    // client: rejected, rejected (dry run), delayed, delayed (dry run)
    assert.deepEqual(row('10.0.0.1'), ['10.0.0.1', '1', '0', '0', '0']);
    assert.deepEqual(row('10.0.0.3'), ['10.0.0.3', '0', '1', '0', '0']);
    assert.deepEqual(row('2026-12-02 10:00'), ['2026-12-02 10:00', '6', '0', '4', '0', '1', '0', '1']);
    assert.deepEqual(row('2026-12-02 10:01'), ['2026-12-02 10:01', '1', '1', '0', '0', '0', '0', '0']);
  });

  it('reads a gzipped log as the plain one', async () => {
    const gzipped = dir.file('timed.log.gz');
    writeFileSync(gzipped, gzipSync(readFileSync(TIMED_LOG)));
    const args = ['-c', CONFIG, '--log-format', 'timed', '--json', ...SWITCHES];
    const plain = JSON.parse((await replay([...args, '--access-log', TIMED_LOG])).stdout);
    const unzipped = JSON.parse((await replay([...args, '--access-log', gzipped])).stdout);
    assert.equal(unzipped.requests, 7);
    assert.deepEqual({ ...unzipped, access_log: '' }, { ...plain, access_log: '' });
  });

  it('--json: the same report; without switches nothing is limited', async () => {
    const run = await replay([
      '-c',
      CONFIG,
      '--access-log',
      TIMED_LOG,
      '--log-format',
      'timed',
      '--json',
      '--top',
      '1',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const report = JSON.parse(run.stdout);
    assert.equal(report.requests, 7);
    assert.deepEqual(report.bad_lines, {
      count: 1,
      first: [{ line: 5, reason: 'does not match log_format "timed"', text: 'garbage' }],
    });
    assert.deepEqual(report.totals, {
      requests: 7,
      not_limited: 7,
      passed: 0,
      delayed: 0,
      rejected: 0,
      delayed_dry_run: 0,
      rejected_dry_run: 0,
    });
    assert.deepEqual(report.top_limited_clients, []);
    const switched = JSON.parse(
      (
        await replay([
          '-c',
          CONFIG,
          '--access-log',
          TIMED_LOG,
          '--log-format',
          'timed',
          '--json',
          '--top',
          '1',
          ...SWITCHES,
        ])
      ).stdout,
    );
    assert.deepEqual(switched.zones.coffee, {
      passed: 3,
      delayed: 0,
      rejected: 1,
      delayed_dry_run: 0,
      rejected_dry_run: 0,
    });
    assert.deepEqual(switched.top_limited_clients, [
      { addr: '10.0.0.1', delayed: 0, rejected: 1, delayed_dry_run: 0, rejected_dry_run: 0 },
    ]);
    assert.deepEqual(switched.time, { field: 'msec', resolution_ms: 1, same_second: null });
  });

  it("reads nginx's combined format against the cafe example: 1 s times, spread or burst", async () => {
    // four /coffee requests of one client logged in one second: 250 ms apart (20 r/s, burst 1) all
    // pass; all at the second's start, the third and fourth are refused
    const log = dir.write(
      'combined.log',
      `${Array.from(
        { length: 4 },
        () =>
          '192.168.1.10 - - [02/Dec/2026:13:00:00 +0000] "GET /coffee/latte HTTP/1.1" 200 12 "-" "curl/8.0"',
      ).join('\n')}\n`,
    );
    const totals = async (mode: string) => {
      const run = await replay([
        '-c',
        CAFE,
        '--access-log',
        log,
        '--keyval',
        'limitreq_uri:/coffee=1',
        '--same-second',
        mode,
        '--json',
      ]);
      assert.equal(run.code, 0, run.stderr);
      return JSON.parse(run.stdout).zones.req_zone_20;
    };
    assert.deepEqual(await totals('spread'), {
      passed: 4,
      delayed: 0,
      rejected: 0,
      delayed_dry_run: 0,
      rejected_dry_run: 0,
    });
    assert.deepEqual(await totals('burst'), {
      passed: 2,
      delayed: 0,
      rejected: 2,
      delayed_dry_run: 0,
      rejected_dry_run: 0,
    });
  });

  it('names what the limits read that the log lacks: replayed as empty', async () => {
    const keyed = dir.write(
      'keyed.conf',
      `events {}
http {
    limit_req_zone $http_x_api_key zone=api:1m rate=1r/s;
    server { listen 8081; location / { limit_req zone=api; proxy_pass http://127.0.0.1:9; } }
}
`,
    );
    const log = dir.write(
      'api.log',
      '10.0.0.1 - - [02/Dec/2026:13:00:00 +0000] "GET /orders HTTP/1.1" 200 12 "-" "curl/8.0"\n',
    );
    const text = await replay(['-c', keyed, '--access-log', log]);
    assert.equal(text.code, 0, text.stderr);
    assert.equal(
      text.stdout.split('\n')[2],
      'note: the limits read $http_x_api_key, which log_format combined does not have: replayed as empty',
    );
    const json = JSON.parse((await replay(['-c', keyed, '--access-log', log, '--json'])).stdout);
    assert.deepEqual(json.unlogged_variables, ['$http_x_api_key']);
    assert.equal(json.totals.not_limited, 1);
  });

  it('a missing log, a bad config, an unknown format or switch: a clear message and exit code 1', async () => {
    const missing = await replay(['-c', CONFIG, '--access-log', dir.file('nope.log')]);
    assert.equal(missing.code, 1);
    assert.equal(
      missing.stderr.trim(),
      `limitswitch replay: open() "${dir.file('nope.log')}" failed (2: No such file or directory)`,
    );
    const notGzip = dir.write('not-gzip.log.gz', 'plain text\n');
    const gz = await replay(['-c', CONFIG, '--access-log', notGzip]);
    assert.equal(gz.code, 1);
    assert.equal(gz.stderr.trim(), `limitswitch replay: cannot read "${notGzip}": incorrect header check`);
    const badConfig = dir.write('bad.conf', 'http {\n    limit_req_zone $x zone=z:1m rate=fast;\n}\n');
    const bad = await replay(['-c', badConfig, '--access-log', TIMED_LOG]);
    assert.equal(bad.code, 1);
    assert.equal(bad.stderr.trim(), `limitswitch: [emerg] invalid rate "rate=fast" in ${badConfig}:2`);
    const format = await replay(['-c', CONFIG, '--access-log', TIMED_LOG, '--log-format', 'main']);
    assert.equal(format.code, 1);
    assert.equal(
      format.stderr.trim(),
      'limitswitch replay: unknown log format "main" (known: combined, timed)',
    );
    const zone = await replay(['-c', CONFIG, '--access-log', TIMED_LOG, '--keyval', 'nozone:/coffee=1']);
    assert.equal(zone.code, 1);
    assert.equal(
      zone.stderr.trim(),
      'limitswitch replay: --keyval "nozone:/coffee=1": unknown keyval zone "nozone"',
    );
    const shape = await replay(['-c', CONFIG, '--access-log', TIMED_LOG, '--keyval', 'limitreq_uri']);
    assert.equal(shape.code, 1);
    assert.equal(shape.stderr.trim(), 'limitswitch replay: --keyval "limitreq_uri": expected zone:key=value');
    // A log of which no line is in the format (issue 34 §9): not "replayed 0 requests".
    const other = await replay(['-c', CONFIG, '--access-log', TIMED_LOG]);
    assert.equal(other.code, 1);
    assert.match(
      other.stderr.trim(),
      /^limitswitch replay: no line of "[^"]+" is in log_format combined \(\d+ unreadable; line 1: .+\); give the format it was written in with --log-format$/,
    );
    assert.equal(other.stdout, '');
  });

  it('--help documents the command, its timing rule and an example', async () => {
    const run = await replay(['--help']);
    assert.equal(run.code, 0);
    for (const text of [
      '--access-log <file>',
      '--keyval <zone:key=value>',
      '--same-second <mode>',
      '$request_time',
      'Example:',
    ]) {
      assert.ok(run.stdout.includes(text), text);
    }
  });
});
