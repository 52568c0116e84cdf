/**
 * What one access-log line says about its request, in `simulate`'s terms: the client, the request line,
 * host, port and header fields, and when nginx logged it. nginx writes a line when the request ends:
 * `$msec` (ms) and `$time_local` / `$time_iso8601` (s) are that moment, and `$request_time` — the time
 * since the request's first bytes — takes it back to when the request came in, which is when its limits
 * decided.
 */
import type { SimulatedRequest } from '../simulate.ts';
import type { LogField, LogValues } from './access-log-parser.ts';

/** A logged request, before it is placed on the replay's clock. */
export interface LoggedRequest {
  /** The logged moment: ms since the epoch, or the start of the logged second. */
  readonly loggedMs: number;
  /** `$request_time` in ms; 0 when the format has none. */
  readonly requestTimeMs: number;
  /** The request as `simulate` takes it; its `t` is set when it is placed on the replay's clock. */
  readonly request: SimulatedRequest;
}

/** Why a line that has the format's shape is not replayed. */
export type RecordFault = 'no client address' | 'bad time' | 'bad request time' | 'no request line';

/** Which of the format's fields give the time: `$msec` when it has it (ms), else a 1 s field. */
export type TimeSource = 'msec' | 'time_local' | 'time_iso8601';

export function timeSourceOf(has: ReadonlySet<LogField>): TimeSource | null {
  if (has.has('msec')) return 'msec';
  if (has.has('time_local')) return 'time_local';
  if (has.has('time_iso8601')) return 'time_iso8601';
  return null;
}

/** Turns parsed values into a logged request; remembers the last time text (lines share seconds). */
export class RecordReader {
  readonly #source: TimeSource;
  readonly #defaults: { readonly host?: string; readonly port?: number };
  #lastTimeText = '';
  #lastTimeMs = Number.NaN;

  constructor(source: TimeSource, defaults: { readonly host?: string; readonly port?: number } = {}) {
    this.#source = source;
    this.#defaults = defaults;
  }

  read(values: LogValues): LoggedRequest | RecordFault {
    const { fields, headers } = values;
    const addr = fields.remote_addr;
    if (addr === undefined || addr === '') return 'no client address';
    const loggedMs = this.#time(fields[this.#source] ?? '');
    if (Number.isNaN(loggedMs)) return 'bad time';
    let requestTimeMs = 0;
    if (fields.request_time !== undefined && fields.request_time !== '') {
      requestTimeMs = decimalMs(fields.request_time);
      if (Number.isNaN(requestTimeMs)) return 'bad request time';
    }
    const line = requestLine(fields);
    if (line === null) return 'no request line';
    const host = headers.host ?? nonEmpty(fields.host) ?? nonEmpty(fields.server_name) ?? this.#defaults.host;
    const portText = fields.server_port;
    const port =
      portText !== undefined && /^\d{1,5}$/.test(portText) ? Number(portText) : this.#defaults.port;
    return {
      loggedMs,
      requestTimeMs,
      request: { t: loggedMs, addr, method: line.method, uri: line.uri, host, port, headers },
    };
  }

  #time(text: string): number {
    if (text === this.#lastTimeText) return this.#lastTimeMs;
    const ms =
      this.#source === 'msec'
        ? decimalMs(text)
        : this.#source === 'time_local'
          ? timeLocalMs(text)
          : iso8601Ms(text);
    this.#lastTimeText = text;
    this.#lastTimeMs = ms;
    return ms;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** `$request` (`GET /tea HTTP/1.1`), or `$request_method` + `$request_uri`; null for none. */
function requestLine(fields: Partial<Record<LogField, string>>): { method: string; uri: string } | null {
  const request = fields.request;
  if (request !== undefined) {
    const space = request.indexOf(' ');
    if (space <= 0) return null;
    let end = request.length;
    const version = request.lastIndexOf(' HTTP/');
    if (version > space) end = version;
    const uri = request.slice(space + 1, end);
    return uri === '' ? null : { method: request.slice(0, space), uri };
  }
  const uri = fields.request_uri;
  if (uri === undefined || uri === '') return null;
  return { method: nonEmpty(fields.request_method) ?? 'GET', uri };
}

/** `1700000000.123` (seconds with ms, as `$msec` and `$request_time` are written) → ms; NaN if not. */
export function decimalMs(text: string): number {
  // by hand, not a regex: two of these per line
  const dot = text.indexOf('.');
  const end = dot === -1 ? text.length : dot;
  if (end === 0 || (dot !== -1 && (text.length - dot < 2 || text.length - dot > 4))) return Number.NaN;
  let ms = 0;
  for (let i = 0; i < text.length; i++) {
    if (i === dot) continue;
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return Number.NaN;
    ms = ms * 10 + digit;
  }
  // `1.5` is 1500 ms: the fraction's missing digits are zeros
  const fraction = dot === -1 ? 0 : text.length - dot - 1;
  return ms * 10 ** (3 - fraction);
}

const MONTHS: Record<string, number> = {
  Jan: 0,
  Feb: 1,
  Mar: 2,
  Apr: 3,
  May: 4,
  Jun: 5,
  Jul: 6,
  Aug: 7,
  Sep: 8,
  Oct: 9,
  Nov: 10,
  Dec: 11,
};

/** `$time_local`, `02/Dec/2026:13:21:05 +0100` → ms since the epoch; NaN if not. */
export function timeLocalMs(text: string): number {
  const match = /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2}) ([+-])(\d{2})(\d{2})$/.exec(text);
  if (match === null) return Number.NaN;
  const [, day, month, year, h, m, s, sign, tzH, tzM] = match;
  const monthIndex = MONTHS[month!];
  if (monthIndex === undefined) return Number.NaN;
  const offsetMs = (Number(tzH) * 60 + Number(tzM)) * 60_000 * (sign === '-' ? -1 : 1);
  return Date.UTC(Number(year), monthIndex, Number(day), Number(h), Number(m), Number(s)) - offsetMs;
}

/** `$time_iso8601`, `2026-12-02T13:21:05+01:00` → ms since the epoch; NaN if not. */
export function iso8601Ms(text: string): number {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[+-]\d{2}:\d{2}|Z)$/.test(text)) return Number.NaN;
  return Date.parse(text);
}
