/**
 * `limitswitch control-plane` as a process: flags, zones from `-c FILE`, tokens from a file and from
 * LIMITSWITCH_TOKENS, a real Redis, and a clean exit on SIGTERM.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const BIN = new URL('../../bin/limitswitch.js', import.meta.url).pathname;
const TOKEN = 'ops-token-0123456789abcdef';
const CONFIG = `events {}
http {
    keyval_zone zone=limitreq_uri:1m type=prefix;
    keyval_zone zone=blocked:1m type=ip timeout=60s;
    keyval $uri $limit_uri zone=limitreq_uri;
    limit_req_zone $binary_remote_addr zone=req_zone_10:1m rate=10r/s;
    server {
        listen 8080;
        location / { limit_req zone=req_zone_10; return 200 ok; }
    }
}
`;

interface Running {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exit: Promise<{ code: number | null; stderr: string }>;
}

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function run(args: string[], env: Record<string, string> = {}): Omit<Running, 'url'> {
  const child = spawn(process.execPath, [BIN, 'control-plane', ...args], {
    env: { ...process.env, LIMITSWITCH_TOKENS: '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.add(child);
  let stderr = '';
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exit = new Promise<{ code: number | null; stderr: string }>((resolve) => {
    child.once('exit', (code) => {
      children.delete(child);
      resolve({ code, stderr });
    });
  });
  return { child, exit };
}

async function start(args: string[], env: Record<string, string> = {}): Promise<Running> {
  const port = await freePort();
  const started = run(['--listen', `127.0.0.1:${port}`, ...args], env);
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    () =>
      fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      ),
    { timeoutMs: 60_000, intervalMs: 50, message: 'the control plane to listen' },
  );
  return { ...started, url };
}

async function stop(running: Running): Promise<number | null> {
  running.child.kill('SIGTERM');
  return (await running.exit).code;
}

describe('limitswitch control-plane', () => {
  let redis: RedisServer;
  let dir: string;

  before(async () => {
    redis = await RedisServer.start();
    dir = mkdtempSync(join(tmpdir(), 'limitswitch-cp-'));
    writeFileSync(join(dir, 'nginx.conf'), CONFIG);
    writeFileSync(join(dir, 'tokens'), `# operators\nops:${TOKEN}\n`);
  });

  after(async () => {
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the zones of -c FILE on Redis, writes need the token of --token-file, SIGTERM exits 0', async () => {
    const cp = await start([
      '--redis',
      redis.url,
      '-c',
      join(dir, 'nginx.conf'),
      '--token-file',
      join(dir, 'tokens'),
    ]);
    try {
      const zones = await fetch(`${cp.url}/api/9/http/keyvals`);
      assert.equal(await zones.text(), '{"blocked":{},"limitreq_uri":{}}');
      const limits = await fetch(`${cp.url}/api/9/http/limit_reqs`);
      assert.deepEqual(await limits.json(), {
        req_zone_10: { passed: 0, delayed: 0, rejected: 0, delayed_dry_run: 0, rejected_dry_run: 0 },
      });
      const url = `${cp.url}/api/9/http/keyvals/limitreq_uri`;
      const denied = await fetch(url, { method: 'POST', body: '{"/coffee":"1"}' });
      assert.equal(denied.status, 401);
      const created = await fetch(url, {
        method: 'POST',
        body: '{"/coffee":"1"}',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      });
      assert.equal(created.status, 201);
      assert.equal(
        await redis
          .cli('DBSIZE')
          .then(Number)
          .then((n) => n > 0),
        true,
      );
    } finally {
      assert.equal(await stop(cp), 0);
    }
  });

  it('takes tokens from LIMITSWITCH_TOKENS; --read-only answers 405', async () => {
    const cp = await start(['--read-only', '-c', join(dir, 'nginx.conf')], {
      LIMITSWITCH_TOKENS: `ops:${TOKEN}`,
    });
    try {
      const url = `${cp.url}/api/9/http/keyvals/limitreq_uri`;
      const unauthenticated = await fetch(url, { method: 'POST', body: '{"a":"1"}' });
      assert.equal(unauthenticated.status, 401);
      const disabled = await fetch(url, {
        method: 'POST',
        body: '{"a":"1"}',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      });
      assert.equal(disabled.status, 405);
      assert.equal(((await disabled.json()) as { error: { code: string } }).error.code, 'MethodDisabled');
    } finally {
      assert.equal(await stop(cp), 0);
    }
  });

  it('bad flags and bad configuration files exit 1 with the reason', async () => {
    const badListen = await run(['--listen', 'localhost:99999']).exit;
    assert.equal(badListen.code, 1);
    assert.match(badListen.stderr, /^limitswitch: --listen localhost:99999: invalid port$/m);
    const badAllow = await run(['--allow', '10.0.0.0/99']).exit;
    assert.equal(badAllow.code, 1);
    assert.match(badAllow.stderr, /^limitswitch: --allow: invalid address or CIDR "10.0.0.0\/99"$/m);
    const badName = await run(['--server-name', 'api.example.com:8080']).exit;
    assert.equal(badName.code, 1);
    assert.match(
      badName.stderr,
      /^limitswitch: --server-name: invalid server name or wildcard "api\.example\.com:8080" \(a name without a port: /m,
    );
    writeFileSync(join(dir, 'short-tokens'), 'ops:short\n');
    const badTokens = await run(['--token-file', join(dir, 'short-tokens')]).exit;
    assert.equal(badTokens.code, 1);
    assert.match(badTokens.stderr, /short-tokens: entry 1: token "ops" is shorter than 16 characters$/m);
    writeFileSync(join(dir, 'broken.conf'), 'http {\n    keyval_zone zone=x;\n}\n');
    const badConfig = await run(['-c', join(dir, 'broken.conf')]).exit;
    assert.equal(badConfig.code, 1);
    assert.equal(
      badConfig.stderr,
      `limitswitch: [emerg] invalid zone size "zone=x" in ${join(dir, 'broken.conf')}:2\n`,
    );
  });
});
