import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ConfigError, loadConfigFile } from '../../src/config/index.ts';
import { FIXTURE_CASES, FIXTURES } from './fixture-cases.ts';

test('every fixture file has an expected error, and every case has a fixture', () => {
  const files = readdirSync(FIXTURES)
    .filter((name) => name.endsWith('.conf'))
    .map((name) => name.slice(0, -'.conf'.length))
    .sort();
  assert.deepEqual([...FIXTURE_CASES.map((c) => c.fixture)].sort(), files);
});

for (const c of FIXTURE_CASES) {
  test(`${c.fixture}: ${c.text}`, () => {
    const path = join(FIXTURES, `${c.fixture}.conf`);
    const file = c.file ? join(FIXTURES, c.file) : path;
    assert.throws(
      () => loadConfigFile(path),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(err.code, 'RL_ERR_CONFIG_INVALID');
        assert.equal(err.text, c.text);
        assert.equal(err.file, file);
        assert.equal(err.line, c.line);
        assert.equal(err.message, `[emerg] ${c.text} in ${file}:${c.line}`);
        return true;
      },
    );
  });
}
