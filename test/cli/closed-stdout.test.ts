/**
 * Issue 34 §1: a command whose stdout is closed under it (`limitswitch simulate … | head -1`) ends
 * quietly, as `cat | head` does: no `write EPIPE` stack, exit status 0.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/limitswitch.js', import.meta.url));
const CAFE = fileURLToPath(new URL('../../examples/cafe/nginx.conf', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'limitswitch-closed-stdout-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `bash -o pipefail -c "<command> | head -1"`: the pipeline's status is the command's unless head's fails. */
function intoHead(command: string): { status: number | null; stdout: string; stderr: string } {
  const run = spawnSync('bash', ['-o', 'pipefail', '-c', `${command} | head -1`], {
    encoding: 'utf8',
    cwd: dir,
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

test('simulate | head -1 ends quietly', () => {
  const lines = Array.from({ length: 50_000 }, (_, i) =>
    JSON.stringify({
      t: 1000 + i,
      addr: `10.0.${i % 250}.1`,
      host: 'cafe.example.com',
      uri: '/coffee/latte',
    }),
  );
  writeFileSync(join(dir, 'requests.jsonl'), `${lines.join('\n')}\n`);
  const run = intoHead(`"${process.execPath}" "${BIN}" simulate -c "${CAFE}" < requests.jsonl`);
  assert.equal(run.stderr, '');
  assert.equal(run.status, 0);
  assert.equal(run.stdout.trim().split('\n').length, 1);
  assert.ok(JSON.parse(run.stdout).status !== undefined, run.stdout);
});

test('replay --decisions | head -1 ends quietly', () => {
  const lines = Array.from(
    { length: 50_000 },
    (_, i) =>
      `10.0.${i % 250}.1 - - [04/Dec/2026:10:00:${String(Math.floor(i / 1000) % 60).padStart(2, '0')} +0000] "GET /coffee/latte HTTP/1.1" 200 5 "-" "curl/8"`,
  );
  writeFileSync(join(dir, 'access.log'), `${lines.join('\n')}\n`);
  const run = intoHead(
    `"${process.execPath}" "${BIN}" replay -c "${CAFE}" --access-log access.log --host cafe.example.com --decisions`,
  );
  assert.equal(run.stderr, '');
  assert.equal(run.status, 0);
  assert.equal(run.stdout.trim().split('\n').length, 1);
});
