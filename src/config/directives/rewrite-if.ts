/**
 * ngx_http_rewrite_module: `rewrite`, `set`, `break`, `if`, `rewrite_log`, `uninitialized_variable_warn`
 * (`return` is location.ts's), read into the level's script in the order written. An `if` holds the
 * steps of its block, and in a location its own `add_header` lines and `expires`, `limit_rate`,
 * `limit_rate_after` (answer-filters.ts); any other directive inside `if`
 * (or a file test) is refused with its line, never silently ignored.
 */

import type { FileTest } from '../../engine/http/if-condition.ts';
import { isBuiltinVariable } from '../../engine/variables/builtin-names.ts';
import { newLocation } from '../builders.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import type { AddHeaderSpec, IfCondition, RewriteFlag, RewriteStep } from '../model.ts';
import { compileRegex, namedCaptures } from '../regex.ts';
import { ifAddHeader } from './add-header.ts';
import { answerFilterDirectives } from './answer-filters.ts';
import { complexValue, defineVariable, flagArg, httpOf, ref, variableName } from './helpers.ts';
import { blockProxyPass } from './limit-except.ts';
import { parseReturn } from './location.ts';
import type { DirectiveSpec, Scope } from './types.ts';

const OPERATORS = ['=', '!=', '~', '~*', '!~', '!~*'] as const;
const FLAGS: readonly RewriteFlag[] = ['last', 'break', 'redirect', 'permanent'];

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

/** A regex of `rewrite` or `if`: its named captures become variables, as ngx_http_regex_compile makes them. */
function scriptRegex(pattern: string, caseless: boolean, d: Directive, scope: Scope) {
  const regex = compileRegex(pattern, caseless, d);
  for (const capture of namedCaptures(pattern))
    if (!httpOf(scope).variables.has(capture)) defineVariable(capture, {}, d, scope);
  return regex;
}

function readCondition(d: Directive, scope: Scope): IfCondition {
  const words = conditionWords(d);
  const subject = words[0];
  if (subject === undefined || subject === '') throw configError('invalid condition', d);
  if (/^!?-[fdex]$/.test(subject)) {
    if (words.length !== 2) throw configError(`invalid condition "${subject}"`, d);
    const op = subject as FileTest;
    return { variable: '', op, value: complexValue(words[1]!, d, scope), pattern: null, regex: null };
  }
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
  const regex = scriptRegex(right, op.endsWith('*'), d, scope);
  return { variable, op, value: null, pattern: right, regex };
}

function argCount(d: Directive, counts: readonly number[]): void {
  if (d.block) throw configError(`directive "${d.name}" is not terminated by ";"`, d);
  if (!counts.includes(d.args.length))
    throw configError(`invalid number of arguments in "${d.name}" directive`, d);
}

/** `rewrite regex replacement [last|break|redirect|permanent]` (ngx_http_rewrite). */
function readRewrite(d: Directive, scope: Scope): RewriteStep {
  const [pattern, replacement, flagWord] = d.args as [string, string, string?];
  if (replacement === '') throw configError('empty replacement', d);
  const regex = scriptRegex(pattern, false, d, scope);
  let flag: RewriteFlag | null = null;
  if (flagWord !== undefined) {
    flag = FLAGS.find((f) => f === flagWord) ?? null;
    if (flag === null) throw configError(`invalid parameter "${flagWord}"`, d);
  }
  return { op: 'rewrite', pattern, regex, replacement: complexValue(replacement, d, scope), flag };
}

/** `set $variable value` (ngx_http_rewrite_set): the variable is declared where it is set. */
function readSet(d: Directive, scope: Scope): RewriteStep {
  const name = variableName(d.args[0]!, d);
  const http = httpOf(scope);
  if (isBuiltinVariable(name)) {
    // $limit_rate sets the answer's rate; nginx lets `set` change $args too, the replica's is read-only
    if (name === 'limit_rate')
      return { op: 'set', variable: name, value: complexValue(d.args[1]!, d, scope) };
    if (name === 'args') throw configError(`"set $${name}" is not supported by limitswitch`, d);
    throw configError(`the duplicate "${name}" variable`, d);
  }
  if (!http.variables.has(name)) defineVariable(name, {}, d, scope);
  return { op: 'set', variable: name, value: complexValue(d.args[1]!, d, scope) };
}

/** A directive of the script, read where it stands (a level or an `if` block); null: not one. */
function readStep(d: Directive, scope: Scope): RewriteStep | null {
  switch (d.name) {
    case 'rewrite':
      argCount(d, [2, 3]);
      return readRewrite(d, scope);
    case 'set':
      argCount(d, [2]);
      return readSet(d, scope);
    case 'break':
      argCount(d, [0]);
      return { op: 'break' };
    case 'return':
      argCount(d, [1, 2]);
      return { op: 'return', answer: parseReturn(d, scope) };
    default:
      return null;
  }
}

function ifDirective(d: Directive, scope: Scope): void {
  const condition = readCondition(d, scope);
  const steps: RewriteStep[] = [];
  let addHeaders: AddHeaderSpec[] | null = null;
  // the block's own proxy_pass, on a level of its own (named: no URI part, as nginx refuses in `if`)
  const level =
    scope.location === null ? null : newLocation(ref(d), 'prefix', scope.location.pattern, null, true);
  for (const child of d.block ?? []) {
    if (child.name === 'proxy_pass' && level !== null) {
      blockProxyPass(child, { ...scope, location: level });
      continue;
    }
    if (child.name === 'add_header') {
      addHeaders ??= [];
      addHeaders.push(ifAddHeader(child, scope));
      continue;
    }
    // expires, limit_rate, limit_rate_after: the block's own, over the location's (NGX_HTTP_LIF_CONF)
    const answerSpec = answerFilterDirectives.find((spec) => spec.name === child.name);
    if (answerSpec !== undefined) {
      if (level === null) throw configError(`"${child.name}" directive is not allowed here`, child);
      if (child.block) throw configError(`directive "${child.name}" is not terminated by ";"`, child);
      argCount(child, answerSpec.args as readonly number[]);
      answerSpec.handle(child, { ...scope, location: level });
      continue;
    }
    // an if's own rewrite_log is never read: its codes run with the enclosing level's
    if (child.name === 'rewrite_log' || child.name === 'uninitialized_variable_warn') {
      argCount(child, [1]);
      flagArg(child);
      continue;
    }
    const step = readStep(child, scope);
    if (step === null)
      throw configError(`"${child.name}" directive is not supported inside "if" by limitswitch`, child);
    steps.push(step);
  }
  const proxyPass = level?.proxyPass ?? null;
  const answer = level === null || Object.keys(level.answer).length === 0 ? null : level.answer;
  (scope.location ?? scope.server!).script.push({
    op: 'if',
    condition,
    steps,
    addHeaders,
    proxyPass,
    answer,
  });
}

function levelStep(d: Directive, scope: Scope): void {
  (scope.location ?? scope.server!).script.push(readStep(d, scope)!);
}

function rewriteLog(d: Directive, scope: Scope): void {
  const level = scope.location ?? scope.server ?? httpOf(scope);
  level.rewriteLog = flagArg(d);
}

/** nginx warns of a `set` variable read before it is set; the replica does not, so only `off` is read. */
function uninitializedVariableWarn(d: Directive): void {
  if (flagArg(d))
    throw configError('"uninitialized_variable_warn on" is not supported by limitswitch (use "off")', d);
}

export const rewriteIfDirectives: readonly DirectiveSpec[] = [
  { name: 'if', contexts: ['server', 'location'], block: true, args: '1+', handle: ifDirective },
  { name: 'rewrite', contexts: ['server', 'location'], args: [2, 3], handle: levelStep },
  { name: 'set', contexts: ['server', 'location'], args: [2], handle: levelStep },
  { name: 'break', contexts: ['server', 'location'], args: [0], handle: levelStep },
  { name: 'rewrite_log', contexts: ['http', 'server', 'location'], args: [1], handle: rewriteLog },
  {
    name: 'uninitialized_variable_warn',
    contexts: ['http', 'server', 'location'],
    args: [1],
    handle: uninitializedVariableWarn,
  },
];
