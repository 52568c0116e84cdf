import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { updateGeneratedSections } from '../../src/k8s/docs.ts';
import { ANNOTATIONS } from '../../src/k8s/translate/annotations.ts';

describe('docs/kubernetes.md', () => {
  const md = readFileSync(new URL('../../docs/kubernetes.md', import.meta.url), 'utf8');

  it('has the annotation and ConfigMap tables the registries generate (npm run docs:kubernetes)', () => {
    assert.equal(md, updateGeneratedSections(md));
  });

  it('lists every annotation of the registry, with its default', () => {
    for (const a of Object.values(ANNOTATIONS)) {
      const row = md.split('\n').find((l) => l.startsWith(`| \`${a.name}\` |`));
      assert.ok(row, a.name);
      if (a.defaultValue !== '') assert.ok(row.includes(a.defaultValue), `${a.name} default`);
    }
    assert.ok(md.includes('| `nginx.org/limit-req-reject-code` | location | `429` |'));
    assert.ok(md.includes('| `nginx.ingress.kubernetes.io/limit-burst-multiplier` | ingress | `5` |'));
  });
});
