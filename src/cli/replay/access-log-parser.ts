/**
 * An access-log line parser made from a `log_format`: the format's literal text delimits the values of
 * its variables. The variables replay needs are read; any other is skipped as free text. Values are
 * unescaped as nginx escaped them (`escape=default`: `\xHH`; `escape=json`: JSON's escapes), and
 * nginx's `-` for an empty value reads as empty.
 */
import type { LogEscape, LogFormatPart, LogFormatSpec } from '../../config/model.ts';
import { LimitswitchError } from '../../shared/errors.ts';

/** The variables replay reads (besides `$http_*`, the request's header fields). */
const KNOWN = [
  'remote_addr',
  'time_local',
  'time_iso8601',
  'msec',
  'request_time',
  'request',
  'request_method',
  'request_uri',
  'host',
  'server_name',
  'server_port',
] as const;
export type LogField = (typeof KNOWN)[number];

/** One line's values: the known fields that the format has, and its `$http_*` header fields. */
export interface LogValues {
  readonly fields: Partial<Record<LogField, string>>;
  /** Lower-case header name (`user-agent`) → value; a `-` (absent) field is left out. */
  readonly headers: Record<string, string>;
}

interface Step {
  /** Where the value goes: a known field, a header name (`http:` prefix), or null to skip it. */
  readonly target: LogField | `http:${string}` | null;
  /** The text after the value ('' for a value that runs to the end of the line). */
  readonly until: string;
}

const KNOWN_SET: ReadonlySet<string> = new Set(KNOWN);

function targetOf(variable: string): Step['target'] {
  if (KNOWN_SET.has(variable)) return variable as LogField;
  if (variable.startsWith('http_') && variable.length > 5)
    return `http:${variable.slice(5).replace(/_/g, '-')}`;
  return null;
}

export class AccessLogParser {
  readonly format: string;
  /** The known fields this format has. */
  readonly has: ReadonlySet<LogField>;
  /** The header fields (`$http_*`) it has, by lower-case name (`user-agent`). */
  readonly headerNames: ReadonlySet<string>;
  readonly #prefix: string;
  readonly #steps: readonly Step[];
  readonly #escape: LogEscape;

  /** Throws `RL_ERR_CLI_USAGE` for a format whose needed values cannot be told apart. */
  constructor(spec: LogFormatSpec) {
    this.format = spec.name;
    this.#escape = spec.escape;
    const parts = [...spec.parts];
    const first = parts[0];
    this.#prefix = first !== undefined && 'text' in first ? first.text : '';
    if (this.#prefix !== '') parts.shift();
    this.#steps = compileSteps(spec.name, parts);
    const targets = this.#steps.flatMap((s) => (s.target === null ? [] : [s.target]));
    this.has = new Set(targets.filter((t) => !t.startsWith('http:')) as LogField[]);
    this.headerNames = new Set(targets.flatMap((t) => (t.startsWith('http:') ? [t.slice(5)] : [])));
  }

  /** The line's values, or null when it does not have the format's shape. */
  parse(line: string): LogValues | null {
    if (!line.startsWith(this.#prefix)) return null;
    const fields: Partial<Record<LogField, string>> = {};
    const headers: Record<string, string> = {};
    let pos = this.#prefix.length;
    const steps = this.#steps;
    const last = steps.length - 1;
    for (let i = 0; i <= last; i++) {
      const step = steps[i]!;
      let end: number;
      if (step.until === '') end = line.length;
      else if (i === last) {
        // the format's closing text ends the line: a value may contain it
        if (!line.endsWith(step.until) || line.length - step.until.length < pos) return null;
        end = line.length - step.until.length;
      } else {
        end = this.#find(line, step.until, pos);
        if (end === -1) return null;
      }
      if (step.target !== null) {
        const raw = line.slice(pos, end);
        const value = raw === '-' ? '' : raw.includes('\\') ? unescapeValue(raw, this.#escape) : raw;
        if (step.target.startsWith('http:')) {
          if (value !== '') headers[step.target.slice(5)] = value;
        } else fields[step.target as LogField] = value;
      }
      pos = end + step.until.length;
    }
    return pos === line.length ? { fields, headers } : null;
  }

  /** The next `text` at or after `from`; with JSON escaping a `"` after an odd run of `\` is a value's. */
  #find(line: string, text: string, from: number): number {
    let at = line.indexOf(text, from);
    if (this.#escape !== 'json' || text[0] !== '"') return at;
    while (at !== -1 && oddBackslashesBefore(line, at)) at = line.indexOf(text, at + 1);
    return at;
  }
}

/**
 * Variables with text after each. Variables with no text between them cannot be told apart: allowed as
 * one skipped value, refused when replay needs one of them.
 */
function compileSteps(name: string, parts: readonly LogFormatPart[]): Step[] {
  const steps: Step[] = [];
  let run: string[] = [];
  for (const part of parts) {
    if ('variable' in part) {
      run.push(part.variable);
      continue;
    }
    steps.push(stepFor(name, run, part.text));
    run = [];
  }
  if (run.length !== 0) steps.push(stepFor(name, run, ''));
  return steps;
}

function stepFor(name: string, variables: readonly string[], until: string): Step {
  if (variables.length === 1) return { target: targetOf(variables[0]!), until };
  const needed = variables.filter((v) => targetOf(v) !== null);
  if (needed.length !== 0) {
    throw new LimitswitchError(
      'RL_ERR_CLI_USAGE',
      `limitswitch replay: log_format "${name}": ${variables.map((v) => `$${v}`).join(' and ')} ` +
        'have no text between them, so their values cannot be told apart',
    );
  }
  return { target: null, until };
}

function oddBackslashesBefore(line: string, at: number): boolean {
  let n = 0;
  for (let i = at - 1; i >= 0 && line.charCodeAt(i) === 0x5c; i--) n++;
  return n % 2 === 1;
}

const JSON_ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** nginx's escaping undone: `\xHH` (default) or JSON's `\"`, `\\`, `\n`, `\u00HH` (json). */
function unescapeValue(raw: string, escaping: LogEscape): string {
  if (escaping === 'none') return raw;
  if (escaping === 'default') {
    return raw.replace(/\\x([0-9A-Fa-f]{2})/g, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
  }
  return raw.replace(/\\(u[0-9A-Fa-f]{4}|.)/g, (whole, code: string) =>
    code.length === 5
      ? String.fromCharCode(Number.parseInt(code.slice(1), 16))
      : (JSON_ESCAPES[code] ?? whole),
  );
}
