/**
 * Keys and values taken from an alert's labels, written as in Alertmanager's notification templates:
 * `{{ .Labels.path }}`, `{{.Labels.host}}:{{ .Labels.path }}`. Only `.Labels.<name>` is supported;
 * anything else between `{{ }}` is refused when the rules file loads, not when an alert arrives.
 */
import { LimitswitchError } from '../shared/errors.ts';

export interface LabelTemplate {
  /** As written. */
  readonly text: string;
  /** Label names it reads. */
  readonly labels: readonly string[];
  /** The text with labels filled in, or the first label the alert lacks (or has empty). */
  render(labels: Readonly<Record<string, string>>): { value: string } | { missing: string };
}

const ACTION = /\{\{(.*?)\}\}/gs;
const LABEL_REF = /^\s*\.Labels\.([A-Za-z_][A-Za-z0-9_]*)\s*$/;

/** Parse a template; throws an `Error` naming the action it cannot read. */
export function parseLabelTemplate(text: string): LabelTemplate {
  const parts: (string | { label: string })[] = [];
  let last = 0;
  for (const match of text.matchAll(ACTION)) {
    const ref = LABEL_REF.exec(match[1]!);
    if (!ref)
      throw new LimitswitchError(
        'RL_ERR_ALERT_RULES_INVALID',
        `unsupported template action "${match[0]}": only {{ .Labels.<name> }} is allowed`,
      );
    parts.push(text.slice(last, match.index), { label: ref[1]! });
    last = match.index + match[0].length;
  }
  const tail = text.slice(last);
  if (tail.includes('{{') || tail.includes('}}'))
    throw new LimitswitchError('RL_ERR_ALERT_RULES_INVALID', `unbalanced "{{" or "}}" in "${text}"`);
  parts.push(tail);
  const literal = parts.filter((p) => p !== '');
  const labels = literal.flatMap((p) => (typeof p === 'string' ? [] : [p.label]));
  return {
    text,
    labels,
    render(values) {
      let out = '';
      for (const part of literal) {
        if (typeof part === 'string') {
          out += part;
          continue;
        }
        const value = Object.hasOwn(values, part.label) ? values[part.label]! : '';
        // An empty piece would silently make a different key (or the empty key nginx never accounts).
        if (value === '') return { missing: part.label };
        out += value;
      }
      return { value: out };
    },
  };
}
