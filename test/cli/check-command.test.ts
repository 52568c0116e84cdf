/**
 * `limitswitch check -c FILE` end to end: the real CLI in a child process, its stderr and exit code.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/limitswitch.js', import.meta.url));
const CAFE = fileURLToPath(new URL('../../examples/cafe/nginx.conf', import.meta.url));
const FIXTURES = fileURLToPath(new URL('../config/fixtures', import.meta.url));

const dir = mkdtempSync(join(tmpdir(), 'limitswitch-check-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function check(
  args: string[],
  cwd?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'check', ...args], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('a valid file: "syntax is ok" and "test is successful" on stderr, exit 0', {
  timeout: 60_000,
}, async () => {
  const run = await check(['-c', CAFE]);
  assert.equal(run.code, 0);
  assert.equal(run.stdout, '');
  assert.equal(
    run.stderr,
    `limitswitch: the configuration file ${CAFE} syntax is ok\n` +
      `limitswitch: configuration file ${CAFE} test is successful\n`,
  );
});

test('an invalid file: the [emerg] line with file:line, then "test failed", exit 1', {
  timeout: 60_000,
}, async () => {
  const file = join(FIXTURES, 'limit-req-burst-zero.conf');
  const run = await check(['-c', file]);
  assert.equal(run.code, 1);
  assert.equal(
    run.stderr,
    `limitswitch: [emerg] invalid burst value "burst=0" in ${file}:6\n` +
      `limitswitch: configuration file ${file} test failed\n`,
  );
});

test('an error in an included file names the included file; the verdict names the main one', {
  timeout: 60_000,
}, async () => {
  const file = join(FIXTURES, 'include-error-in-included-file.conf');
  const run = await check(['--config', file]);
  assert.equal(run.code, 1);
  assert.equal(
    run.stderr,
    `limitswitch: [emerg] conflicting parameter "/tea" in ${join(FIXTURES, 'include/bad-map.conf')}:4\n` +
      `limitswitch: configuration file ${file} test failed\n`,
  );
});

test('warnings are printed and the test still succeeds', { timeout: 60_000 }, async () => {
  const file = join(dir, 'warn.conf');
  writeFileSync(file, 'http {\n    server {\n        allow 10.0.0.1/8;\n    }\n}\n');
  const run = await check(['-c', file]);
  assert.equal(run.code, 0);
  assert.equal(
    run.stderr,
    `limitswitch: [warn] low address bits of 10.0.0.1/8 are meaningless in ${file}:3\n` +
      `limitswitch: the configuration file ${file} syntax is ok\n` +
      `limitswitch: configuration file ${file} test is successful\n`,
  );
});

test('a relative path is reported as the absolute file; a missing file fails', {
  timeout: 60_000,
}, async () => {
  const cwd = realpathSync(dir);
  writeFileSync(join(cwd, 'ok.conf'), 'events {}\n');
  const ok = await check(['-c', 'ok.conf'], cwd);
  assert.equal(ok.code, 0);
  assert.match(
    ok.stderr,
    new RegExp(`^limitswitch: the configuration file ${join(cwd, 'ok.conf')} syntax is ok\n`),
  );
  const missing = join(cwd, 'missing.conf');
  const run = await check(['-c', 'missing.conf'], cwd);
  assert.equal(run.code, 1);
  assert.equal(
    run.stderr,
    `limitswitch: [emerg] open() "${missing}" failed (2: No such file or directory)\n` +
      `limitswitch: configuration file ${missing} test failed\n`,
  );
});

test('-c is required', { timeout: 60_000 }, async () => {
  const run = await check([]);
  assert.equal(run.code, 1);
  assert.match(run.stderr, /required option '-c, --config <file>' not specified/);
});
