/**
 * The fixtures whose errors limitswitch words like nginx are run through real nginx (`nginx -t`): the
 * text, file and line must be what the fixture table says, so the table cannot drift from nginx.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { NGINX_BIN } from '../helpers/nginx.ts';
import { FIXTURE_CASES, FIXTURES } from './fixture-cases.ts';

const prefix = mkdtempSync(join(tmpdir(), 'limitswitch-nginx-t-'));
after(() => rmSync(prefix, { recursive: true, force: true }));

/** The `[emerg]` lines of `nginx -t`, without timestamp and pid. */
function nginxErrors(confFile: string): string[] {
  const run = spawnSync(NGINX_BIN, ['-t', '-p', `${prefix}/`, '-c', confFile, '-e', 'stderr'], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(run.status, 1, `nginx -t should fail on ${confFile}:\n${run.stderr}`);
  return run.stderr
    .split('\n')
    .filter((line) => line.includes('[emerg]'))
    .map((line) => line.replace(/^.*\[emerg\] (\d+#\d+: )?/, ''));
}

const comparable = FIXTURE_CASES.filter((c) => c.nginx === 'same' || c.nginx === 'no-position');

test('most fixtures are checked against nginx', () => {
  assert.ok(comparable.length >= 80, `only ${comparable.length} comparable fixtures`);
});

for (const c of comparable) {
  test(`nginx -t agrees on ${c.fixture}`, () => {
    const path = join(FIXTURES, `${c.fixture}.conf`);
    const file = c.file ? join(FIXTURES, c.file) : path;
    const expected = c.nginx === 'same' ? `${c.text} in ${file}:${c.line}` : c.text;
    assert.deepEqual(nginxErrors(path), [expected]);
  });
}
