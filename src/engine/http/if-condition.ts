/**
 * An `if` condition of ngx_http_rewrite_module, compiled: a variable alone is true unless its value is
 * empty or "0"; `=` / `!=` compare with a complex value exactly; `~` / `~*` (and their `!` forms)
 * search the value with a regular expression, case-insensitively for `*`.
 */
import type { ComplexValue } from '../complex-value.ts';
import type { NginxRegex } from '../nginx-regex.ts';
import type { RequestContext } from '../variables/request-context.ts';
import type { VariableTable } from '../variables/variable-table.ts';

const NO_NAMES: ReadonlyMap<string, number> = new Map();

export interface IfConditionSpec {
  readonly variable: string;
  readonly op: 'truthy' | '=' | '!=' | '~' | '~*' | '!~' | '!~*';
  readonly value: ComplexValue | null;
  /** The regular expression of `~` and its kin as written, and compiled (`*`: case-insensitive). */
  readonly pattern: string | null;
  readonly regex: NginxRegex | null;
}

export function compileCondition(
  spec: IfConditionSpec,
  variables: VariableTable,
  /** The slots of the regex's named captures (set when it matches, as nginx sets their variables). */
  namedSlots: ReadonlyMap<string, number> = NO_NAMES,
): (ctx: RequestContext) => boolean {
  const read = variables.compile({ raw: `$${spec.variable}`, parts: [{ variable: spec.variable }] });
  switch (spec.op) {
    case 'truthy':
      return (ctx) => {
        const v = read(ctx);
        return v !== '' && v !== '0';
      };
    case '=':
    case '!=': {
      const right = variables.compile(spec.value!);
      const equal = spec.op === '=';
      return (ctx) => (read(ctx) === right(ctx)) === equal;
    }
    default: {
      const re = spec.regex!;
      const match = !spec.op.startsWith('!');
      // a match's captures are the request's ($1…); a miss leaves it none
      return (ctx) => {
        const subject = read(ctx);
        if (namedSlots.size !== 0) {
          const captures = re.exec(subject);
          ctx.lastMatch = captures === null ? null : { regex: re, subject, captures };
          if (captures !== null)
            for (const [name, slot] of namedSlots) ctx.cache[slot] = captures.groups?.[name] ?? '';
          return (captures !== null) === match;
        }
        const found = re.test(subject);
        ctx.lastMatch = found ? { regex: re, subject } : null;
        return found === match;
      };
    }
  }
}
