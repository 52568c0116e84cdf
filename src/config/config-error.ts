/**
 * Configuration errors and warnings, worded and placed like `nginx -t` reports them:
 * `[emerg] <text> in <file>:<line>`.
 */
import { LimitswitchError } from '../shared/errors.ts';
import type { SourceRef } from './model.ts';

/** A rejected configuration. `line` is 0 when nginx names no position (e.g. the main file is missing). */
export class ConfigError extends LimitswitchError {
  /** nginx's text alone, without level or position. */
  readonly text: string;
  readonly file: string;
  readonly line: number;

  constructor(text: string, file: string, line: number) {
    super('RL_ERR_CONFIG_INVALID', formatConfigMessage('emerg', text, file, line));
    this.name = 'ConfigError';
    this.text = text;
    this.file = file;
    this.line = line;
  }

  /** `text in file:line` (or the text alone without a position), as the error log writes it after `[emerg]`. */
  get located(): string {
    return locate(this.text, this.file, this.line);
  }
}

/** A `[warn]` line: the configuration loads, but nginx would say something about it. */
export interface ConfigWarning {
  readonly text: string;
  /** Empty with line 0 when nginx prints the warning without a position. */
  readonly file: string;
  readonly line: number;
}

/** `[level] text in file:line`, or `[level] text` without a position. */
export function formatConfigMessage(
  level: 'emerg' | 'warn',
  text: string,
  file: string,
  line: number,
): string {
  return `[${level}] ${locate(text, file, line)}`;
}

function locate(text: string, file: string, line: number): string {
  return line > 0 ? `${text} in ${file}:${line}` : text;
}

/** Shorthand for an error at a directive or any other source position. */
export function configError(text: string, at: SourceRef): ConfigError {
  return new ConfigError(text, at.file, at.line);
}

const ERRNO: Record<string, [number, string]> = {
  ENOENT: [2, 'No such file or directory'],
  EACCES: [13, 'Permission denied'],
  ENOTDIR: [20, 'Not a directory'],
  EISDIR: [21, 'Is a directory'],
  ELOOP: [40, 'Too many levels of symbolic links'],
};

/** `(2: No such file or directory)`, the errno suffix nginx appends to failed system calls. */
export function errnoSuffix(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  const known = typeof code === 'string' ? ERRNO[code] : undefined;
  if (known) return `(${known[0]}: ${known[1]})`;
  return `(${err instanceof Error ? err.message : String(err)})`;
}
