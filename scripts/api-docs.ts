/**
 * Writes docs/api.md from api-spec/openapi.yaml (`npm run docs:api`).
 */
import { writeFileSync } from 'node:fs';
import { renderApiMarkdown } from '../src/control-plane/api-docs.ts';
import { loadApiSpec } from '../src/control-plane/spec.ts';

const target = new URL('../docs/api.md', import.meta.url);
writeFileSync(target, renderApiMarkdown(loadApiSpec()));
console.log('wrote docs/api.md');
