/**
 * nginx-format error-log lines for limit_req events and upstream failures:
 * `2020/03/15 14:58:26 [error] 54#54: *6506 limiting requests, excess: 1.960 by zone "req_zone_10",
 * client: 192.168.1.254, server: cafe.example.com, request: "GET /coffee HTTP/1.0", host: "cafe.example.com"`
 * (a line about a proxied request adds `upstream: "http://127.0.0.1:8080/coffee"` before `host`).
 */
import type { Socket } from 'node:net';
import type { LimitReqLog } from '../engine/limit-req/limit-req.ts';
import type { DownstreamRequest } from './http/decision.ts';

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
  readonly requestLine: string;
  readonly host: string;
  /** nginx's `upstream:` field (scheme, server, URI sent) for a request that was being proxied. */
  readonly upstream?: string;
  /** The Referer header; nginx adds `, referrer: "…"` when the request has one. */
  readonly referrer?: string;
}

const kConnection = Symbol('connection');
let connectionSerial = 0;

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
  const socket = ctx.clientSocket as (Socket & { [kConnection]?: number }) | null;
  // A connection out of reach (see clientSocket) still gets a number, just not a shared one.
  let connection: number;
  if (socket === null) connection = ++connectionSerial;
  else {
    socket[kConnection] ??= ++connectionSerial;
    connection = socket[kConnection];
  }
  const referrer = req.headers.referer;
  return {
    connection,
    client: ctx.remoteAddr,
    server,
    requestLine: `${req.method} ${req.url} HTTP/${req.httpVersion}`,
    host: ctx.host,
    ...(upstream === undefined ? {} : { upstream }),
    ...(referrer === undefined ? {} : { referrer }),
  };
}

export class ErrorLog {
  readonly #threshold: number;
  readonly #write: (line: string) => void;
  readonly #pid = process.pid;

  /** `level` is nginx's `error_log … level` (default `error`: delays, logged at `warn`, stay silent). */
  constructor(write: (line: string) => void, level: ErrorLogLevel = 'error') {
    this.#write = write;
    this.#threshold = SEVERITY[level];
  }

  /** True when a line at `level` would be written (callers skip building the context otherwise). */
  enabled(level: ErrorLogLevel): boolean {
    return SEVERITY[level] <= this.#threshold;
  }

  /** A line without request context, e.g. `[emerg] … in FILE:LINE` for a configuration a reload refused. */
  message(level: ErrorLogLevel, text: string, now = new Date()): void {
    if (!this.enabled(level)) return;
    this.#write(`${timestamp(now)} [${level}] ${this.#pid}#${this.#pid}: ${text}\n`);
  }

  request(entry: LimitReqLog, ctx: RequestLogContext, now = new Date()): void {
    if (!this.enabled(entry.level)) return;
    const upstream = ctx.upstream === undefined ? '' : `, upstream: "${ctx.upstream}"`;
    const host = ctx.host === '' ? '' : `, host: "${ctx.host}"`;
    const referrer = ctx.referrer === undefined ? '' : `, referrer: "${ctx.referrer}"`;
    this.#write(
      `${timestamp(now)} [${entry.level}] ${this.#pid}#${this.#pid}: *${ctx.connection} ${entry.message}, client: ${ctx.client}, server: ${ctx.server}, request: "${ctx.requestLine}"${upstream}${host}${referrer}\n`,
    );
  }
}

function timestamp(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}/${p(now.getMonth() + 1)}/${p(now.getDate())} ${p(now.getHours())}:${p(now.getMinutes())}:${p(now.getSeconds())}`;
}
