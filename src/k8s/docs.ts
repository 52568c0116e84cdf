/**
 * The generated parts of docs/kubernetes.md: the annotation and ConfigMap tables come from the
 * registries, between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->` markers.
 */
import { LimitswitchError } from '../shared/errors.ts';
import { renderAnnotationTable } from './translate/annotations.ts';
import { renderConfigMapTable } from './translate/configmap-settings.ts';

const SECTIONS: Record<string, () => string> = {
  annotations: renderAnnotationTable,
  configmap: renderConfigMapTable,
};

/** `markdown` with every generated section replaced by the registry's current table. */
export function updateGeneratedSections(markdown: string): string {
  let out = markdown;
  for (const [name, render] of Object.entries(SECTIONS)) {
    const open = `<!-- generated:${name} -->`;
    const close = `<!-- /generated:${name} -->`;
    const start = out.indexOf(open);
    const end = out.indexOf(close);
    if (start === -1 || end < start)
      throw new LimitswitchError('InternalError', `docs/kubernetes.md: missing ${open} … ${close}`);
    out = `${out.slice(0, start + open.length)}\n${render()}\n${out.slice(end)}`;
  }
  return out;
}
