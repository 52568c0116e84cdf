import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/limitswitch.js', import.meta.url));
const CAFE = fileURLToPath(new URL('../../examples/cafe/nginx.conf', import.meta.url));

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function simulate(lines: readonly unknown[], raw = ''): Promise<Run> {
  const child = spawn(process.execPath, [BIN, 'simulate', '-c', CAFE], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk;
  });
  child.stdin.end(lines.map((l) => `${JSON.stringify(l)}\n`).join('') + raw);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

const coffee = (t: number, addr = '10.0.0.1') => ({
  t,
  addr,
  host: 'cafe.example.com',
  uri: '/coffee/latte',
});
const parse = (run: Run) =>
  run.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe('limitswitch simulate', () => {
  it('answers one line per request; keyval lines switch limits on and off (the seed)', async () => {
    const run = await simulate([
      coffee(1000),
      { t: 1001, keyval: { zone: 'limitreq_uri', key: '/coffee', value: '1' } },
      coffee(1002),
      coffee(1003),
      coffee(1004),
      coffee(1004, '10.0.0.2'),
      { t: 1005, addr: '10.0.0.1', host: 'cafe.example.com', uri: '/tea' },
      { t: 1006, keyval: { zone: 'limitreq_uri', key: '/coffee', value: null } },
      coffee(1007),
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(parse(run), [
      { t: 1000, status: '', code: 200, delay_ms: 0, zone: null },
      { t: 1002, status: 'PASSED', code: 200, delay_ms: 0, zone: 'req_zone_20' },
      { t: 1003, status: 'PASSED', code: 200, delay_ms: 0, zone: 'req_zone_20' },
      { t: 1004, status: 'REJECTED', code: 503, delay_ms: 0, zone: 'req_zone_20' },
      { t: 1004, status: 'PASSED', code: 200, delay_ms: 0, zone: 'req_zone_20' },
      { t: 1005, status: '', code: 200, delay_ms: 0, zone: null },
      { t: 1007, status: '', code: 200, delay_ms: 0, zone: null },
    ]);
  });

  it('honours a keyval expire: the switch is off once its time has come', async () => {
    const run = await simulate([
      { t: 0, keyval: { zone: 'limitper_server', key: 'cafe.example.com', value: '1', expire: 100 } },
      coffee(10),
      coffee(10),
      coffee(100),
      coffee(100),
    ]);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(
      parse(run).map((r) => r.status),
      ['PASSED', 'REJECTED', '', ''],
    );
  });

  it('stops at a bad line with an error naming it, after the answers before it', async () => {
    const run = await simulate([coffee(1), { t: 2, addr: '10.0.0.1' }, coffee(3)]);
    assert.equal(run.code, 1);
    assert.equal(parse(run).length, 1);
    assert.equal(run.stderr.trim(), 'limitswitch: invalid input at stdin:2: "uri" must be a request target');
  });

  it('names unknown zones and invalid JSON', async () => {
    const zone = await simulate([{ t: 1, keyval: { zone: 'nope', key: 'k', value: '1' } }]);
    assert.equal(zone.code, 1);
    assert.equal(zone.stderr.trim(), 'limitswitch: invalid input at stdin:1: unknown keyval zone "nope"');
    const json = await simulate([], '{"t":\n');
    assert.equal(json.code, 1);
    assert.match(json.stderr, /^limitswitch: invalid input at stdin:1: /);
  });

  it('--help says what "host" and "port" do and where a line without them goes', () => {
    const help = spawnSync(process.execPath, [BIN, 'simulate', '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /"host" \(the Host header\) picks the server_name, "port" the listen port/);
    assert.match(help.stdout, /without\s+"port" it goes to port 80 when a server proxies it/);
  });

  it('a line without "port" skips an api-only server listed first', () => {
    const dir = mkdtempSync(join(tmpdir(), 'limitswitch-simulate-'));
    try {
      const conf = join(dir, 'nginx.conf');
      writeFileSync(
        conf,
        `events {}
http {
    limit_req_zone $binary_remote_addr zone=one:1m rate=1r/s;
    server { listen 9999; location /api { api write=on; } }
    server { listen 8081; location / { limit_req zone=one; proxy_pass http://127.0.0.1:9; } }
}
`,
      );
      const line = (t: number) => JSON.stringify({ t, addr: '10.0.0.1', uri: '/' });
      const run = spawnSync(process.execPath, [BIN, 'simulate', '-c', conf], {
        input: `${line(1000)}\n${line(1001)}\n`,
        encoding: 'utf8',
      });
      assert.equal(run.stderr, '');
      assert.deepEqual(
        run.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).status),
        ['PASSED', 'REJECTED'],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
