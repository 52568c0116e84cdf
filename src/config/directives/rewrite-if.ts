/**
 * ngx_http_rewrite_module's `if (condition) { … }` in server and location, as far as limitswitch
 * honours it: the conditions nginx's `ngx_http_rewrite_if_condition` reads on variables (`$v`,
 * `$v = text`, `$v != text`, `$v ~ re`, `~*`, `!~`, `!~*`) and a `return` inside, and in a location
 * `add_header` (add-header.ts). Anything else inside `if` (or a file test, or a nested `if`) is
 * refused with its line, never silently ignored.
 */
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { AddHeaderSpec, IfCondition } from '../model.ts';
import { compileRegex, namedCaptures } from '../regex.ts';
import { ifAddHeader } from './add-header.ts';
import { complexValue } from './helpers.ts';
import { parseReturn } from './location.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const OPERATORS = ['=', '!=', '~', '~*', '!~', '!~*'] as const;

/** The condition's words without nginx's parentheses (`(`, `)` alone or glued to a word). */
function conditionWords(d: Directive): string[] {
  const words = [...d.args];
  const first = words[0]!;
  if (!first.startsWith('(')) throw configError('invalid condition', d);
  if (first === '(') words.shift();
  else words[0] = first.slice(1);
  const last = words.at(-1);
  if (last === undefined || !last.endsWith(')')) throw configError('invalid condition', d);
  if (last === ')') words.pop();
  else words[words.length - 1] = last.slice(0, -1);
  return words;
}

function readCondition(d: Directive, scope: Scope): IfCondition {
  const words = conditionWords(d);
  const subject = words[0];
  if (subject === undefined || subject === '') throw configError('invalid condition', d);
  if (/^!?-[fdex]$/.test(subject))
    throw configError(`"if (${subject} …)" file tests are not supported by limitswitch`, d);
  if (!subject.startsWith('$')) throw configError(`invalid condition "${subject}"`, d);
  // records the use, so an unknown variable fails as in nginx
  const parts = complexValue(subject, d, scope).parts;
  const only = parts.length === 1 ? parts[0]! : null;
  if (only === null || !('variable' in only)) throw configError(`invalid condition "${subject}"`, d);
  const variable = only.variable;
  if (words.length === 1) return { variable, op: 'truthy', value: null, pattern: null, regex: null };
  const op = OPERATORS.find((o) => o === words[1]);
  if (op === undefined || words.length !== 3) throw configError(`unexpected "${words[1]}" in condition`, d);
  const right = words[2]!;
  if (op === '=' || op === '!=')
    return { variable, op, value: complexValue(right, d, scope), pattern: null, regex: null };
  const regex = compileRegex(right, op.endsWith('*'), d);
  if (namedCaptures(right).length > 0)
    throw configError('named captures in an "if" regular expression are not supported by limitswitch', d);
  return { variable, op, value: null, pattern: right, regex };
}

function ifDirective(d: Directive, scope: Scope): void {
  const condition = readCondition(d, scope);
  let answer = null;
  let addHeaders: AddHeaderSpec[] | null = null;
  for (const child of d.block ?? []) {
    if (child.name === 'add_header') {
      addHeaders ??= [];
      addHeaders.push(ifAddHeader(child, scope));
      continue;
    }
    if (child.name !== 'return')
      throw configError(`"${child.name}" directive is not supported inside "if" by limitswitch`, child);
    if (child.args.length < 1 || child.args.length > 2)
      throw configError(`invalid number of arguments in "return" directive`, child);
    const spec = parseReturn(child, scope);
    if (spec.text?.parts.some((p) => 'variable' in p && /^\d$/.test(p.variable)))
      throw configError(
        'regular expression captures in "return" inside "if" are not supported by limitswitch',
        child,
      );
    answer ??= spec;
  }
  const level = scope.location ?? scope.server!;
  // an `if` after a plain `return` is never reached; one with neither changes nothing limitswitch honours
  if ((answer !== null || addHeaders !== null) && level.return === null)
    level.ifReturns.push({ condition, answer, addHeaders });
}

export const rewriteIfDirectives: readonly DirectiveSpec[] = [
  { name: 'if', contexts: ['server', 'location'], block: true, args: '1+', handle: ifDirective },
];
