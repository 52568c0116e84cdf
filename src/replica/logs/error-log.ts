/**
 * nginx-format error-log lines for limit_req events and upstream failures:
 * `2020/03/15 14:58:26 [error] 54#54: *6506 limiting requests, excess: 1.960 by zone "req_zone_10",
 * client: 192.168.1.254, server: cafe.example.com, request: "GET /coffee HTTP/1.0", host: "cafe.example.com"`
 * (a line about a proxied request adds `upstream: "http://127.0.0.1:8080/coffee"` before `host`).
 */
import type { Socket } from 'node:net';
import type { LogLine } from '../../engine/log-line.ts';
import { connectionOf, unsharedConnectionNumber } from '../http/contract/client-connection.ts';
import type { DownstreamRequest } from '../http/contract/decision.ts';

export type ErrorLogLevel = 'debug' | 'info' | 'notice' | 'warn' | 'error' | 'crit' | 'alert' | 'emerg';

const SEVERITY: Record<ErrorLogLevel, number> = {
  debug: 7,
  info: 6,
  notice: 5,
  warn: 4,
  error: 3,
  crit: 2,
  alert: 1,
  emerg: 0,
};

export interface RequestLogContext {
  readonly connection: number;
  readonly client: string;
  readonly server: string;
  /** nginx's `request:` field; null before a request line was read (nginx then leaves it out). */
  readonly requestLine: string | null;
  /** nginx's `host:` field, the Host header as sent (`""` is printed); null without one. */
  readonly host: string | null;
  /** nginx's `upstream:` field (scheme, server, URI sent) for a request that was being proxied. */
  readonly upstream?: string;
  /** The Referer header; nginx adds `, referrer: "…"` when the request has one. */
  readonly referrer?: string;
}

/** nginx's error lines are at most NGX_MAX_ERROR_STR (2048) bytes, line feed included. */
const MAX_LINE = 2047;

/**
 * The connection number nginx prints (`*N`): given to a connection the first time one of its lines
 * is written, so its lines share it. A connection out of reach (null) still gets one, not shared.
 */
export function connectionNumber(socket: Socket | null): number {
  return socket === null ? unsharedConnectionNumber() : connectionOf(socket).number;
}

/**
 * The context nginx's log handler appends to a request's lines. The connection number (`*N`) is given
 * to a connection the first time one of its requests is logged, so its lines share it, as in nginx.
 */
export function requestLogContext(
  ctx: DownstreamRequest,
  server: string,
  upstream?: string,
): RequestLogContext {
  const req = ctx.req;
  const referrer = req.headers.referer;
  return {
    connection: ctx.connection.number,
    client: ctx.remoteAddr,
    server,
    // HTTP/0.9's simple request (version '') has none on its line
    requestLine: `${req.method} ${req.url}${req.httpVersion === '' ? '' : ` HTTP/${req.httpVersion}`}`,
    // a request that got this far has a valid Host or (HTTP/1.0) none
    host: ctx.host === '' ? null : ctx.host,
    ...(upstream === undefined ? {} : { upstream }),
    ...(referrer === undefined ? {} : { referrer }),
  };
}

export class ErrorLog {
  readonly level: ErrorLogLevel;
  readonly #threshold: number;
  readonly #write: (line: string) => void;
  readonly #pid = process.pid;

  /** `level` is nginx's `error_log … level` (default `error`: delays, logged at `warn`, stay silent). */
  constructor(write: (line: string) => void, level: ErrorLogLevel = 'error') {
    this.#write = write;
    this.level = level;
    this.#threshold = SEVERITY[level];
  }

  /** A line a worker thread's log wrote (already filtered by this level and cut). */
  forward(line: string): void {
    this.#write(line);
  }

  /** True when a line at `level` would be written (callers skip building the context otherwise). */
  enabled(level: ErrorLogLevel): boolean {
    return SEVERITY[level] <= this.#threshold;
  }

  /** A line without request context, e.g. `[emerg] … in FILE:LINE` for a configuration a reload refused. */
  message(level: ErrorLogLevel, text: string, now = new Date()): void {
    if (!this.enabled(level)) return;
    this.#line(`${timestamp(now)} [${level}] ${this.#pid}#${this.#pid}: ${text}`);
  }

  request(entry: LogLine, ctx: RequestLogContext, now = new Date()): void {
    if (!this.enabled(entry.level)) return;
    const request = ctx.requestLine === null ? '' : `, request: "${ctx.requestLine}"`;
    const upstream = ctx.upstream === undefined ? '' : `, upstream: "${ctx.upstream}"`;
    const host = ctx.host === null ? '' : `, host: "${ctx.host}"`;
    const referrer = ctx.referrer === undefined ? '' : `, referrer: "${ctx.referrer}"`;
    this.#line(
      `${timestamp(now)} [${entry.level}] ${this.#pid}#${this.#pid}: *${ctx.connection} ${entry.message}, client: ${ctx.client}, server: ${ctx.server}${request}${upstream}${host}${referrer}`,
    );
  }

  /** One line, cut where nginx's buffer ends. */
  #line(text: string): void {
    this.#write(`${text.length > MAX_LINE ? text.slice(0, MAX_LINE) : text}\n`);
  }
}

function timestamp(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}/${p(now.getMonth() + 1)}/${p(now.getDate())} ${p(now.getHours())}:${p(now.getMinutes())}:${p(now.getSeconds())}`;
}
