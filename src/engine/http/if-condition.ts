/**
 * An `if` condition of ngx_http_rewrite_module, compiled: a variable alone is true unless its value is
 * empty or "0"; `=` / `!=` compare with a complex value exactly; `~` / `~*` (and their `!` forms)
 * search the value with a regular expression, case-insensitively for `*`.
 */
import type { ComplexValue } from '../complex-value.ts';
import type { NginxRegex } from '../nginx-regex.ts';
import type { RequestContext } from '../variables/request-context.ts';
import type { VariableTable } from '../variables/variable-table.ts';

/** `-f` a file, `-d` a directory, `-e` either (or any other), `-x` executable; `!` negates. */
export type FileTest = '-f' | '-d' | '-e' | '-x' | '!-f' | '!-d' | '!-e' | '!-x';

const NO_NAMES: ReadonlyMap<string, number> = new Map();

export interface IfConditionSpec {
  readonly variable: string;
  readonly op: 'truthy' | '=' | '!=' | '~' | '~*' | '!~' | '!~*' | FileTest;
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
  if (spec.op.includes('-')) return fileTest(spec.op as FileTest, variables.compile(spec.value!));
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

/** ngx_http_script_file_code: the path the value evaluates to, asked of the disk through the request's facts. */
function fileTest(op: FileTest, path: (ctx: RequestContext) => string): (ctx: RequestContext) => boolean {
  const holds = !op.startsWith('!');
  const test = op.slice(-1);
  return (ctx) => {
    const stat = ctx.facts.statFile?.(path(ctx)) ?? null;
    let found: boolean;
    if (stat === null) found = false;
    else if (test === 'f') found = stat.kind === 'file';
    else if (test === 'd') found = stat.kind === 'dir';
    else if (test === 'x') found = stat.exec;
    else found = true;
    return found === holds;
  };
}
