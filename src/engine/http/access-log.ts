/**
 * ngx_http_log_module's lines: a location's `access_log` files, each with its `log_format` compiled to
 * the configuration's variables and its `if=` condition, and the line one finished request writes
 * there — evaluated in the log phase, when the answer is out, over a context of the request's route.
 * A value is escaped as `escape=` says (default: `"`, `\`, control bytes and bytes past 0x7e as
 * `\xHH`; json: JSON's escapes; none: as it is), and an empty one is written `-` (nothing with
 * `escape=json` or `escape=none`), as nginx writes a variable it did not find.
 */

import type { NginxRegex } from '../nginx-regex.ts';
import type { RequestFacts } from '../variables/request-context.ts';
import { newRequestContext } from '../variables/request-context.ts';
import type { VariableGetter, VariableTable } from '../variables/variable-table.ts';
import type { ParsedTarget } from './uri.ts';

export type LogEscaping = 'default' | 'json' | 'none';

/** A format's text, or one of its variables (without `$`). */
export type LogFormatPart = { readonly text: string } | { readonly variable: string };

/** One `access_log` line of a location, compiled. */
export interface CompiledAccessLog {
  readonly path: string;
  readonly parts: readonly (string | VariableGetter)[];
  readonly escape: LogEscaping;
  /** `if=`: the line is written unless it is empty or `0`; null: always. */
  readonly condition: VariableGetter | null;
}

/**
 * The variables nginx always finds, whose empty value is written as it is: `$uri` of a request
 * whose target it could not read (its 400) is empty, not `-`.
 */
const ALWAYS_FOUND: ReadonlySet<string> = new Set(['uri', 'document_uri']);

/** An empty value of `read` written as nothing: a text part the line evaluates. */
function foundEvenEmpty(read: VariableGetter): VariableGetter & { readonly found: true } {
  return Object.assign((ctx: Parameters<VariableGetter>[0]) => read(ctx), { found: true as const });
}

/** A format's parts over `variables` (an unknown variable throws RL_ERR_UNKNOWN_VARIABLE). */
export function compileLogParts(
  parts: readonly LogFormatPart[],
  variables: VariableTable,
): (string | VariableGetter)[] {
  return parts.map((part) => {
    if ('text' in part) return part.text;
    const read = variables.reader(part.variable);
    return ALWAYS_FOUND.has(part.variable) ? foundEvenEmpty(read) : read;
  });
}

/**
 * What the log phase reads of a request's route (route.ts's `Route` is one; named here so that the
 * location's configuration, which holds the compiled lines, need not know routes).
 */
export interface LoggedRoute {
  readonly handler: { readonly accessLogs: readonly CompiledAccessLog[] };
  readonly target: ParsedTarget;
  readonly host: string;
  readonly serverName: string;
  readonly locationRegex: NginxRegex | null;
}

/** The lines `route`'s `access_log`s get for a finished request, by path. */
export function accessLogLines(
  route: LoggedRoute,
  facts: RequestFacts,
  nowMs: number,
  variableSlots: number,
): { readonly path: string; readonly line: string }[] {
  const logs = route.handler.accessLogs;
  if (logs.length === 0) return [];
  const ctx = newRequestContext(facts, route.target, route.host, route.serverName, nowMs, variableSlots);
  if (route.locationRegex !== null) ctx.lastMatch = { regex: route.locationRegex, subject: ctx.uri };
  const lines: { path: string; line: string }[] = [];
  for (const log of logs) {
    if (log.condition !== null) {
      const value = log.condition(ctx);
      if (value === '' || value === '0') continue;
    }
    let line = '';
    for (const part of log.parts) {
      if (typeof part === 'string') line += part;
      else {
        const value = part(ctx);
        // a value not found: `-`, or nothing with escape=json or escape=none
        if (value !== '') line += escaped(value, log.escape);
        else if (log.escape === 'default' && !('found' in part)) line += '-';
      }
    }
    lines.push({ path: log.path, line: `${line}\n` });
  }
  return lines;
}

/** ngx_http_log_escape / ngx_escape_json. */
function escaped(value: string, escaping: LogEscaping): string {
  if (escaping === 'none') return value;
  let out = '';
  for (const ch of value) {
    const code = ch.charCodeAt(0);
    if (escaping === 'json') {
      if (ch === '"' || ch === '\\') out += `\\${ch}`;
      else if (code < 0x20) out += JSON.stringify(ch).slice(1, -1);
      else out += ch;
    } else if (ch === '"' || ch === '\\' || code < 0x20 || code > 0x7e) {
      out += `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`;
    } else out += ch;
  }
  return out;
}
