/**
 * A level's rewrite module steps (model.ts's `RewriteStep`) compiled into the engine's script
 * (engine/http/rewrite-script.ts), as ngx_http_rewrite_module compiles its codes: a replacement split
 * at its first `?` into URI and arguments (unless it redirects), a trailing `?` dropping the original
 * arguments, `$n` read from the rewrite's own match.
 */

import type { ComplexValue } from '../engine/complex-value.ts';
import type { CompiledAddHeader } from '../engine/http/add-headers.ts';
import { compileCondition } from '../engine/http/if-condition.ts';
import type { LocationHandler } from '../engine/http/location-handler.ts';
import {
  type CompiledReturn,
  NO_SCRIPT,
  type ReplacementPart,
  type RewriteCode,
  type RewriteRegexCode,
  type RewriteScript,
} from '../engine/http/rewrite-script.ts';
import type { VariableTable } from '../engine/variables/variable-table.ts';
import { compileIfAnswer } from './compile-answer.ts';
import type { AddHeaderSpec, ReturnSpec, RewriteStep } from './model.ts';
import { namedCaptures } from './regex.ts';

export interface ScriptCompiler {
  readonly variables: VariableTable;
  readonly compileReturn: (spec: ReturnSpec) => CompiledReturn;
  readonly compileAddHeaders: (lines: readonly AddHeaderSpec[]) => readonly CompiledAddHeader[];
  /** A block's own `proxy_pass`, as a location handler holds it. */
  readonly proxyPassOf: (url: string) => Pick<LocationHandler, 'proxyPass' | 'proxyPassUrl' | 'api'>;
}

/** The variables the steps set or capture by name: declared before anything reads them. */
export function scriptVariables(steps: readonly RewriteStep[]): string[] {
  const names: string[] = [];
  for (const step of steps) {
    if (step.op === 'set' && step.variable !== 'limit_rate') names.push(step.variable);
    else if (step.op === 'rewrite') names.push(...namedCaptures(step.pattern));
    else if (step.op === 'if') {
      if (step.condition.pattern !== null) names.push(...namedCaptures(step.condition.pattern));
      names.push(...scriptVariables(step.steps));
    }
  }
  return names;
}

/**
 * The script of a level. `level` is its location configuration (null: a server's, whose `if` blocks
 * have none the request keeps): an `if` block's is it with the block's `add_header` lines.
 */
export function compileScript(
  steps: readonly RewriteStep[],
  log: boolean,
  level: LocationHandler | null,
  compiler: ScriptCompiler,
): RewriteScript<LocationHandler> {
  if (steps.length === 0) return NO_SCRIPT;
  return { codes: steps.map((step) => compileStep(step, level, compiler)), log };
}

function compileStep(
  step: RewriteStep,
  level: LocationHandler | null,
  c: ScriptCompiler,
): RewriteCode<LocationHandler> {
  switch (step.op) {
    case 'rewrite':
      return compileRewrite(step, c.variables);
    case 'set':
      // $limit_rate is the request's own (ngx_http_variable_set_limit_rate), not a variable's slot
      if (step.variable === 'limit_rate')
        return { op: 'set_limit_rate', value: c.variables.compile(step.value) };
      return { op: 'set', slot: c.variables.declare(step.variable), value: c.variables.compile(step.value) };
    case 'break':
      return { op: 'break' };
    case 'return':
      return { op: 'return', answer: c.compileReturn(step.answer) };
    case 'if': {
      const named = namedSlots(step.condition.pattern, c.variables);
      const handler =
        level === null
          ? null
          : {
              ...level,
              ...(step.proxyPass === null ? {} : c.proxyPassOf(step.proxyPass)),
              script: NO_SCRIPT,
              addHeaders: step.addHeaders === null ? level.addHeaders : c.compileAddHeaders(step.addHeaders),
              ...(step.answer == null ? {} : compileIfAnswer(step.answer, level, c.variables)),
            };
      return {
        op: 'if',
        holds: compileCondition(step.condition, c.variables, named),
        codes: step.steps.map((inner) => compileStep(inner, level, c)),
        handler,
      };
    }
  }
}

function namedSlots(pattern: string | null, variables: VariableTable): ReadonlyMap<string, number> {
  const slots = new Map<string, number>();
  if (pattern !== null) for (const name of namedCaptures(pattern)) slots.set(name, variables.declare(name));
  return slots;
}

function compileRewrite(
  step: Extract<RewriteStep, { op: 'rewrite' }>,
  variables: VariableTable,
): RewriteRegexCode {
  let raw = step.replacement;
  let addArgs = true;
  const lastPart = raw.parts.at(-1);
  if (lastPart !== undefined && 'text' in lastPart && lastPart.text.endsWith('?')) {
    // the last "?" drops the original arguments
    const text = lastPart.text.slice(0, -1);
    const parts = text === '' ? raw.parts.slice(0, -1) : [...raw.parts.slice(0, -1), { text }];
    raw = { raw: raw.raw.slice(0, -1), parts };
    addArgs = false;
  }
  const value = raw.raw;
  const redirectByScheme = /^(http:\/\/|https:\/\/|\$scheme)/.test(value);
  let redirect: 0 | 301 | 302 = redirectByScheme ? 302 : 0;
  if (step.flag === 'redirect') redirect = 302;
  if (step.flag === 'permanent') redirect = 301;
  const { uri, args } = splitReplacement(raw, redirect !== 0, variables);
  return {
    op: 'rewrite',
    name: step.pattern,
    regex: step.regex,
    namedSlots: namedSlots(step.pattern, variables),
    uri,
    args,
    addArgs,
    question: raw.parts.some((p) => 'text' in p && p.text.includes('?')),
    redirect,
    breakCycle: step.flag === 'break' && redirect === 0,
    last: step.flag !== null || redirect !== 0,
  };
}

/** The replacement's parts, split at the first `?` of its text unless it redirects (sc.compile_args). */
function splitReplacement(
  value: ComplexValue,
  whole: boolean,
  variables: VariableTable,
): { uri: ReplacementPart[]; args: ReplacementPart[] | null } {
  const uri: ReplacementPart[] = [];
  let args: ReplacementPart[] | null = null;
  for (const part of value.parts) {
    const into = args ?? uri;
    if ('variable' in part) {
      into.push(
        /^\d$/.test(part.variable) ? { capture: Number(part.variable) } : variables.reader(part.variable),
      );
      continue;
    }
    const q = whole || args !== null ? -1 : part.text.indexOf('?');
    if (q === -1) {
      if (part.text !== '') into.push(part.text);
      continue;
    }
    if (q > 0) uri.push(part.text.slice(0, q));
    args = [];
    if (q + 1 < part.text.length) args.push(part.text.slice(q + 1));
  }
  return { uri, args };
}
