/**
 * The process log of `demo`, `control-plane` and `replica`: pino, as JSON lines with level names and
 * ISO times (for log collectors) when stdout is not a terminal, and one readable line per event on a
 * terminal (`14:03:07.412 INFO  replica listening id=r1 listen=0.0.0.0:8081`). `--log-level` and
 * `--log-format` choose; the nginx-format error and access logs are separate (`--error-log`,
 * `--access-log`).
 */
import type { Command } from 'commander';
import { type DestinationStream, type Logger, pino } from 'pino';
import { LimitswitchError } from '../shared/errors.ts';

export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LogFlags {
  readonly logLevel: string;
  readonly logFormat: string;
}

/** Adds `--log-level` and `--log-format`. */
export function logOptions(command: Command, defaultLevel: LogLevel = 'info'): Command {
  return command
    .option('--log-level <level>', `process log level: ${LOG_LEVELS.join(', ')}`, defaultLevel)
    .option(
      '--log-format <format>',
      'process log on stdout: json (one object a line), pretty (readable), auto (pretty on a terminal)',
      'auto',
    );
}

/** The process logger for `flags`; `RL_ERR_CLI_USAGE` for a level or format it does not know. */
export function processLogger(
  name: string,
  flags: LogFlags,
  out: NodeJS.WriteStream = process.stdout,
): Logger {
  const level = LOG_LEVELS.find((l) => l === flags.logLevel);
  if (level === undefined) {
    throw new LimitswitchError(
      'RL_ERR_CLI_USAGE',
      `--log-level ${flags.logLevel}: expected one of ${LOG_LEVELS.join(', ')}`,
    );
  }
  const format = LOG_FORMATS.find((f) => f === flags.logFormat);
  if (format === undefined) {
    throw new LimitswitchError(
      'RL_ERR_CLI_USAGE',
      `--log-format ${flags.logFormat}: expected json, pretty or auto`,
    );
  }
  const pretty = format === 'pretty' || (format === 'auto' && out.isTTY === true);
  const options = {
    name,
    level,
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return pino(options, pretty ? prettyDestination(out) : out);
}

/** Fields every line has, left out of the readable form's `key=value` tail. */
const SHOWN = new Set(['level', 'time', 'msg', 'name']);

/** `HH:MM:SS.mmm LEVEL message key=value …` from pino's JSON line. */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = typeof entry.time === 'string' ? entry.time.slice(11, 23) : '';
  const level = String(entry.level ?? '')
    .toUpperCase()
    .padEnd(5);
  const fields = Object.entries(entry)
    .filter(([key]) => !SHOWN.has(key))
    .map(([key, value]) => `${key}=${typeof value === 'string' ? quoted(value) : JSON.stringify(value)}`);
  return `${[time, level, String(entry.msg ?? ''), ...fields].join(' ')}\n`;
}

function quoted(value: string): string {
  return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
}

function prettyDestination(out: NodeJS.WritableStream): DestinationStream {
  return { write: (line: string) => void out.write(prettyLine(line.trimEnd())) };
}
