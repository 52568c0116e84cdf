/**
 * ngx_http_log_module's `log_format` strings, compiled as ngx_http_log_compile_format reads them: the
 * format's arguments are joined, `$name` and `${name}` are variables, the rest is literal text. The
 * predefined `combined` format is nginx's own (ngx_http_combined_fmt).
 */
import { LimitswitchError } from '../shared/errors.ts';
import type { LogEscape, LogFormatPart, LogFormatSpec } from './model.ts';

/** nginx's `combined` format, the one `access_log FILE` writes when it names no format. */
export const COMBINED_FORMAT_TEXT =
  '$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent"';

const ESCAPES: readonly LogEscape[] = ['default', 'json', 'none'];

/** A format nginx refuses: the text is nginx's message (the directive handler adds `file:line`). */
function syntax(text: string): LimitswitchError {
  return new LimitswitchError('RL_ERR_VALUE_SYNTAX', text);
}

/**
 * `escape=…` (optional) and the format strings after the name. Adjacent literals are merged, so the
 * parts alternate between text and variables wherever a variable is followed by text.
 */
export function compileLogFormat(args: readonly string[]): { escape: LogEscape; parts: LogFormatPart[] } {
  let first = 0;
  let escaping: LogEscape = 'default';
  if (args[0]?.startsWith('escape=')) {
    const value = args[0].slice(7);
    const known = ESCAPES.find((e) => e === value);
    if (known === undefined) throw syntax(`unknown log format escaping "${value}"`);
    escaping = known;
    first = 1;
  }
  const parts: LogFormatPart[] = [];
  const pushText = (text: string): void => {
    const last = parts.at(-1);
    if (last !== undefined && 'text' in last) parts[parts.length - 1] = { text: last.text + text };
    else parts.push({ text });
  };
  for (const arg of args.slice(first)) {
    let i = 0;
    while (i < arg.length) {
      if (arg[i] !== '$') {
        const next = arg.indexOf('$', i + 1);
        const end = next === -1 ? arg.length : next;
        pushText(arg.slice(i, end));
        i = end;
        continue;
      }
      const start = i;
      i++;
      const bracket = arg[i] === '{';
      if (bracket) i++;
      if (i >= arg.length) throw syntax(`invalid parameter "${arg.slice(start)}"`);
      const nameStart = i;
      while (i < arg.length && /[A-Za-z0-9_]/.test(arg[i]!)) i++;
      const name = arg.slice(nameStart, i);
      if (bracket) {
        if (arg[i] !== '}') {
          throw syntax(`the closing bracket in "${name}" variable is missing`);
        }
        i++;
      }
      if (name.length === 0) throw syntax(`invalid parameter "${arg.slice(start)}"`);
      parts.push({ variable: name });
    }
  }
  return { escape: escaping, parts };
}

/** The format called `name`: one of the config's, or nginx's predefined `combined`; else undefined. */
export function findLogFormat(formats: readonly LogFormatSpec[], name: string): LogFormatSpec | undefined {
  if (name === 'combined') return COMBINED;
  return formats.find((format) => format.name === name);
}

const COMBINED: LogFormatSpec = Object.freeze({
  name: 'combined',
  ...compileLogFormat([COMBINED_FORMAT_TEXT]),
  source: { file: '', line: 0 },
});
