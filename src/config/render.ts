/**
 * Directive tree → nginx.conf text that parses back to the same tree (names, arguments, blocks).
 * Arguments are double-quoted only when they must be.
 */
import type { Directive } from './directive.ts';

/** One argument as the tokenizer will read it back. */
export function renderWord(word: string): string {
  // bare is safe without spaces, quotes, backslashes or `;`, not starting with `#` or `}`, `{` only in `${`
  if (word !== '' && !/[\s"'\\;]|^[#}]|(^|[^$]){/.test(word)) return word;
  const escaped = word.replace(/[\\"\n\r\t]/g, (ch) =>
    ch === '\n' ? '\\n' : ch === '\r' ? '\\r' : ch === '\t' ? '\\t' : `\\${ch}`,
  );
  return `"${escaped}"`;
}

/** Renders directives with two-space indentation per block level. */
export function renderDirectives(directives: readonly Directive[], indent = ''): string {
  let out = '';
  for (const d of directives) {
    const head = [d.name, ...d.args].map(renderWord).join(' ');
    if (!d.block) {
      out += `${indent}${head};\n`;
      continue;
    }
    out += `${indent}${head} {\n${renderDirectives(d.block, `${indent}  `)}${indent}}\n`;
  }
  return out;
}
