/**
 * `npm start` (`limitswitch demo`) as a new user meets it: one process, the banner with the curl
 * commands, a /coffee switch that limits on every replica, cluster-wide counters, a clean Ctrl-C.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { request } from 'undici';
import { freePorts } from '../helpers/free-port.ts';
import { waitFor } from '../helpers/wait-for.ts';

const run = promisify(execFile);
const BIN = fileURLToPath(new URL('../../bin/limitswitch.js', import.meta.url));
const README = fileURLToPath(new URL('../../README.md', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'limitswitch-demo-'));
after(() => rmSync(dir, { recursive: true, force: true }));

it('runs the cafe: banner, /coffee switched on limits every replica, counters add up, Ctrl-C exits 0', async () => {
  // distinct: ports picked at once can come out the same (each is let go before the next is taken)
  const [cp, tea, coffee, ...replicaPorts] = (await freePorts(6)) as number[];
  const errorLogFile = join(dir, 'error.log');
  // Every port by flag (issue 34 §6): the example's upstreams too, so the test collides with nothing.
  const child = spawn(
    process.execPath,
    [
      BIN,
      'demo',
      '--control-plane-port',
      String(cp),
      '--replica-ports',
      replicaPorts.join(','),
      '--upstream-ports',
      `${tea},${coffee}`,
      '--error-log',
      errorLogFile,
    ],
    { env: { ...process.env, REDIS_URL: '' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const exited = once(child, 'exit');
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const banner = new Promise<void>((resolve) =>
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      if (stdout.includes('Ctrl-C stops everything.')) resolve();
    }),
  );
  await Promise.race([banner, exited.then(() => assert.fail(`demo exited early:\n${stdout}${stderr}`))]);

  assert.match(stdout, new RegExp(`control plane   http://127\\.0\\.0\\.1:${cp}`));
  assert.match(stdout, /store {11}embedded memory store/);
  // Issue 34 §6: the banner names every port the demo listens on, and the flags that move them.
  assert.match(
    stdout,
    new RegExp(`replicas {8}${replicaPorts.map((p) => `http://127\\.0\\.0\\.1:${p}`).join(' {2}')}\n`),
  );
  assert.match(
    stdout,
    new RegExp(`upstreams {7}tea http://127\\.0\\.0\\.1:${tea} {2}coffee http://127\\.0\\.0\\.1:${coffee}\n`),
  );
  // Issue 34 §9: the replicas' error log is a file, and the banner says where.
  assert.match(
    stdout,
    new RegExp(
      `\n {2}error log {7}${errorLogFile.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} {3}\\(a line per rejected request`,
    ),
  );
  assert.match(stdout, /ports move with --control-plane-port, --replica-ports and --upstream-ports/);
  const listening = listeningPorts(child.pid!);
  assert.deepEqual(
    listening,
    [cp, tea, coffee, ...replicaPorts].sort((a, b) => a! - b!),
  );
  for (const port of listening) assert.match(stdout, new RegExp(`:${port}\\b`), `port ${port} in the banner`);
  // The banner's writes are the README's, and they work as printed (curl -d alone sends a form: 415).
  const writes = curlWrites(stdout);
  assert.deepEqual(
    writes,
    curlWrites(readFileSync(README, 'utf8')).map((line) => line.replaceAll(':8080/', `:${cp}/`)),
  );
  assert.equal(writes.length, 4, writes.join('\n'));
  assert.equal(
    writes[0],
    `curl -X POST -H 'Content-Type: application/json' -d '{"/coffee":"1","/tea":"0"}' 'http://127.0.0.1:${cp}/api/9/http/keyvals/limitreq_uri?wait=applied'`,
  );

  // Issue 18 §3.11: step 3 right after step 2 showed zeros; the banner says why and waits the flush out.
  assert.match(
    stdout,
    /replicas send their counters once a second, so give them that second\n {2}sleep 1; curl /,
  );

  const base = `http://127.0.0.1:${cp}`;
  const keyvals = async (name: string) =>
    (await request(`${base}/api/9/http/keyvals/${name}`)).body.json() as Promise<Record<string, string>>;
  // Step 1, verbatim: a successful write prints nothing.
  assert.equal(await shell(writes[0]!), '');
  assert.deepEqual(await keyvals('limitreq_uri'), { '/coffee': '1', '/tea': '0' });

  const get = async (port: number, path: string): Promise<number> => {
    const res = await request(`http://127.0.0.1:${port}${path}`, { headers: { host: 'cafe.example.com' } });
    await res.body.dump();
    return res.statusCode;
  };
  const seen: Record<number, number[]> = {};
  for (const port of replicaPorts) {
    seen[port] = await Promise.all(Array.from({ length: 6 }, () => get(port, '/coffee/latte')));
    assert.ok(seen[port]!.includes(503), `replica :${port} limits /coffee: ${seen[port]}`);
    assert.equal(await get(port, '/tea'), 200);
  }

  // Counters reach the cluster view within a flush (1 s); poll until they add up.
  const rejected = Object.values(seen)
    .flat()
    .filter((code) => code === 503).length;
  const passed = Object.values(seen)
    .flat()
    .filter((code) => code === 200).length;
  let zone: { passed: number; rejected: number } | undefined;
  await waitFor(
    async () => {
      const res = await request(`${base}/limit_reqs`);
      zone = ((await res.body.json()) as Record<string, { passed: number; rejected: number }>).req_zone_20;
      return zone?.rejected === rejected && zone.passed === passed;
    },
    { intervalMs: 100, message: `/limit_reqs req_zone_20 = ${passed} passed, ${rejected} rejected` },
  ).catch(() => assert.deepEqual({ passed: zone?.passed, rejected: zone?.rejected }, { passed, rejected }));

  // Step 4, verbatim: /coffee off, the server-wide switch on, then emptied.
  for (const write of writes.slice(1)) assert.equal(await shell(write), '', write);
  assert.deepEqual(await keyvals('limitreq_uri'), { '/coffee': '0', '/tea': '0' });
  assert.deepEqual(await keyvals('limitper_server'), {});

  child.kill('SIGINT');
  const [code] = await exited;
  assert.equal(code, 0);

  // Issue 34 §9: the rejections are the error log's, one line each, and the terminal has none of them.
  assert.doesNotMatch(stdout + stderr, /limiting requests/);
  const logged = readFileSync(errorLogFile, 'utf8')
    .split('\n')
    .filter((line) => line.includes('limiting requests'));
  assert.equal(logged.length, rejected, logged.join('\n'));
  assert.match(
    logged[0]!,
    /^\S+ \S+ \[error\] \d+#\d+: \*\d+ limiting requests, excess: [\d.]+ by zone "req_zone_20", client: 127\.0\.0\.1, server: cafe\.example\.com, request: "GET \/coffee\/latte HTTP\/1\.1"/,
  );
});

/** The TCP ports a process listens on (Linux: its socket inodes among /proc/net/tcp{,6}'s LISTEN rows). */
function listeningPorts(pid: number): number[] {
  const inodes = new Set(
    readdirSync(`/proc/${pid}/fd`)
      .map((fd) => {
        try {
          return /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
        } catch {
          return undefined;
        }
      })
      .filter((inode) => inode !== undefined),
  );
  const ports = new Set<number>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const row of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = row.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT, st 0A is LISTEN, the inode is the tenth column.
      if (cols[3] === '0A' && inodes.has(cols[9]!)) ports.add(Number.parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** The `curl -X …` lines of a text, in order, as a user would copy them. */
function curlWrites(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('curl -X '));
}

/** Runs a command line as a user's shell would; its stdout (curl prints error bodies there). */
async function shell(command: string): Promise<string> {
  const { stdout } = await run('sh', ['-c', command], { timeout: 30_000 }).catch((err: Error) => {
    throw new Error(
      `${command}: ${err.message} (the demo test runs the banner's curl commands: install curl)`,
    );
  });
  return stdout;
}

it('refuses a port list that does not fit, before binding anything: exit 1 and what it expected', async () => {
  const refused = async (args: string[]) => {
    const err = (await run(process.execPath, [BIN, 'demo', ...args]).then(
      () => assert.fail(`demo ${args.join(' ')} started`),
      (e: unknown) => e,
    )) as { code: number; stderr: string };
    assert.equal(err.code, 1, err.stderr);
    return err.stderr;
  };
  assert.equal(
    await refused(['--upstream-ports', '1']),
    'limitswitch: --upstream-ports 1: expected one port per upstream block (tea, coffee)\n',
  );
  assert.equal(
    await refused(['--replica-ports', '1,x']),
    'limitswitch: --replica-ports 1,x: "x" is not a port (0–65535)\n',
  );
});
