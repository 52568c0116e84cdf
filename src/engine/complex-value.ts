/**
 * nginx "complex values": text with `$name` / `${name}` variables, compiled once at config time
 * (ngx_http_compile_complex_value) and evaluated per request.
 */

import { LimitswitchError } from '../shared/errors.ts';

export type ComplexValuePart = { readonly text: string } | { readonly variable: string };

export interface ComplexValue {
  /** The value as written in the config, for messages and `render`. */
  readonly raw: string;
  readonly parts: readonly ComplexValuePart[];
}

const NAME_CHAR = /[A-Za-z0-9_]/;

/**
 * Splits `raw` into text and variable parts like ngx_http_script_compile: `$name` runs while the
 * characters are `[A-Za-z0-9_]`, `${name}` ends at `}`. A `$` followed by a digit is a regex capture
 * (`$1`), kept as the variable "1".
 */
export function parseComplexValue(raw: string): ComplexValue {
  const parts: ComplexValuePart[] = [];
  let text = '';
  let i = 0;
  while (i < raw.length) {
    const ch = raw[i]!;
    if (ch !== '$') {
      text += ch;
      i++;
      continue;
    }
    i++;
    let name = '';
    if (raw[i] === '{') {
      const end = raw.indexOf('}', i + 1);
      if (end === -1) throw syntaxError(`the closing bracket in "${raw.slice(i + 1)}" variable is missing`);
      name = raw.slice(i + 1, end);
      i = end + 1;
    } else if (/[0-9]/.test(raw[i] ?? '')) {
      name = raw[i++]!; // captures are one digit: "$1x" is capture 1 then "x"
    } else {
      while (i < raw.length && NAME_CHAR.test(raw[i]!)) name += raw[i++];
    }
    if (name === '') throw syntaxError(`invalid variable name in "${raw}"`);
    if (text !== '') parts.push({ text });
    text = '';
    parts.push({ variable: name });
  }
  if (text !== '' || parts.length === 0) parts.push({ text });
  return { raw, parts };
}

/** The variable names a value reads, in order. */
export function variablesOf(value: ComplexValue): string[] {
  return value.parts.flatMap((part) => ('variable' in part ? [part.variable] : []));
}

/** `RL_ERR_VALUE_SYNTAX` with nginx's wording; the config layer adds `file:line`. */
function syntaxError(text: string): LimitswitchError {
  return new LimitswitchError('RL_ERR_VALUE_SYNTAX', text);
}
