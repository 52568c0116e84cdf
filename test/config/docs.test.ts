import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { IGNORED_NAMES } from '../../src/config/directives/ignored.ts';
import { knownDirectiveNames } from '../../src/config/directives/table.ts';
import { UNSUPPORTED_DIRECTIVES } from '../../src/config/directives/unsupported.ts';

const DOC = readFileSync(fileURLToPath(new URL('../../docs/configuration.md', import.meta.url)), 'utf8');

test('docs/configuration.md names every directive the table knows, ignores or rejects', () => {
  const names = new Set([...knownDirectiveNames(), ...IGNORED_NAMES, ...UNSUPPORTED_DIRECTIVES]);
  const missing = [...names].filter((name) => !DOC.includes(`\`${name}`));
  assert.deepEqual(missing, []);
});
