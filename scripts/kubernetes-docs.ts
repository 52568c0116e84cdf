/**
 * Rewrites the generated tables of docs/kubernetes.md from the annotation and ConfigMap registries
 * (`npm run docs:kubernetes`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { updateGeneratedSections } from '../src/k8s/docs.ts';

const target = new URL('../docs/kubernetes.md', import.meta.url);
writeFileSync(target, updateGeneratedSections(readFileSync(target, 'utf8')));
console.log('wrote docs/kubernetes.md');
