/**
 * `limitswitch control-plane --alert-rules FILE` as a process: a bad rules file stops it with the
 * file, line and field; a good one serves the webhook.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { waitFor } from '../helpers/wait-for.ts';

const BIN = new URL('../../bin/limitswitch.js', import.meta.url).pathname;
const TOKEN = 'alertmanager-token-0123456789';
const CONFIG = `events {}
http {
    keyval_zone zone=limitreq_uri:1m type=prefix;
    keyval $uri $limit_uri zone=limitreq_uri;
    server {
        listen 8080;
        location / { return 200 ok; }
    }
}
`;
const RULES = `rules:
  - name: coffee
    matchers: ['alertname="CoffeeOverloaded"']
    zone: limitreq_uri
    key: "{{ .Labels.path }}"
    value: "1"
    ttl: 10m
`;

const dir = mkdtempSync(join(tmpdir(), 'limitswitch-cli-rules-'));
const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[]) {
  const child = spawn(process.execPath, [BIN, 'control-plane', ...args], {
    env: { ...process.env, LIMITSWITCH_TOKENS: `alertmanager:${TOKEN}` },
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

describe('limitswitch control-plane --alert-rules', () => {
  it('refuses a bad rules file, naming the file, line and field', { timeout: 30_000 }, async () => {
    const rules = join(dir, 'bad-ttl.yaml');
    writeFileSync(rules, RULES.replace('ttl: 10m', 'ttl: 10 minutes'));
    const { exit } = run(['--listen', `127.0.0.1:${await freePort()}`, '--alert-rules', rules]);
    const { code, stderr } = await exit;
    assert.equal(code, 1);
    assert.match(
      stderr,
      new RegExp(
        `${rules}:7: rules\\[0\\]\\.ttl: invalid value \\(expected a duration such as 30s, 5m, 1h30m\\)`,
      ),
    );
  });

  it('with -c, refuses a rule whose zone the file does not declare (issue 18 §3.7)', {
    timeout: 30_000,
  }, async () => {
    const rules = join(dir, 'nozone.yaml');
    const config = join(dir, 'zones.conf');
    writeFileSync(rules, RULES.replace('zone: limitreq_uri', 'zone: nozone'));
    writeFileSync(config, CONFIG);
    const { exit } = run(['--listen', `127.0.0.1:${await freePort()}`, '-c', config, '--alert-rules', rules]);
    const { code, stderr } = await exit;
    assert.equal(code, 1);
    assert.equal(
      stderr,
      `limitswitch: ${rules}:4: rules[0].zone: unknown keyval zone "nozone" (not a keyval_zone of -c FILE)\n`,
    );
  });

  it('serves the webhook with the rules, behind the API tokens', { timeout: 30_000 }, async () => {
    const rules = join(dir, 'rules.yaml');
    const config = join(dir, 'nginx.conf');
    writeFileSync(rules, RULES);
    writeFileSync(config, CONFIG);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const { child, exit } = run(['--listen', `127.0.0.1:${port}`, '-c', config, '--alert-rules', rules]);
    let exited = false;
    void exit.then(() => {
      exited = true;
    });
    await waitFor(
      async () => {
        if (exited) throw new Error(`control plane exited: ${(await exit).stderr}`);
        return (await fetch(`${url}/healthz`).catch(() => null))?.ok === true;
      },
      { timeoutMs: 20_000, intervalMs: 50, message: 'the control plane to listen' },
    );
    const payload = JSON.stringify({
      version: '4',
      status: 'firing',
      receiver: 'limitswitch',
      alerts: [
        {
          status: 'firing',
          fingerprint: 'c0ffee',
          labels: { alertname: 'CoffeeOverloaded', path: '/coffee' },
        },
      ],
    });
    const post = (authorization: string) =>
      fetch(`${url}/hooks/alertmanager`, {
        method: 'POST',
        body: payload,
        headers: { 'content-type': 'application/json', authorization },
      });
    assert.equal((await post('Bearer not-the-token-0123456789')).status, 401);
    const basic = `Basic ${Buffer.from(`alertmanager:${TOKEN}`).toString('base64')}`;
    const res = await post(basic);
    assert.equal(res.status, 200, await res.clone().text());
    const keyvals = await fetch(`${url}/api/9/http/keyvals/limitreq_uri`);
    assert.deepEqual(await keyvals.json(), { '/coffee': '1' });
    child.kill('SIGTERM');
    assert.equal((await exit).code, 0);
  });
});
