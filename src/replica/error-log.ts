/**
 * nginx-format error-log lines for limit_req events:
 * `2020/03/15 14:58:26 [error] 54#54: *6506 limiting requests, excess: 1.960 by zone "req_zone_10",
 * client: 192.168.1.254, server: cafe.example.com, request: "GET /coffee HTTP/1.0", host: "cafe.example.com"`
 */
import type { LimitReqLog } from '../engine/limit-req/limit-req.ts';

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

  request(entry: LimitReqLog, ctx: RequestLogContext, now = new Date()): void {
    if (!this.enabled(entry.level)) return;
    const host = ctx.host === '' ? '' : `, host: "${ctx.host}"`;
    this.#write(
      `${timestamp(now)} [${entry.level}] ${this.#pid}#${this.#pid}: *${ctx.connection} ${entry.message}, client: ${ctx.client}, server: ${ctx.server}, request: "${ctx.requestLine}"${host}\n`,
    );
  }
}

function timestamp(now: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}/${p(now.getMonth() + 1)}/${p(now.getDate())} ${p(now.getHours())}:${p(now.getMinutes())}:${p(now.getSeconds())}`;
}
