/**
 * The RequestFacts the engine reads a request's variables through, taken from the data path's
 * exchange.
 */

import { statSync } from 'node:fs';
import type { FileStat, RequestFacts, TlsFacts } from '../../engine/variables/request-context.ts';
import type { RequestProgress } from '../../engine/variables/request-progress.ts';
import type { DownstreamRequest } from '../http/contract/decision.ts';
import { connectionTls } from '../http/edge/tls-facts.ts';
import { realIpStep } from './realip-phases.ts';

/**
 * What the engine needs of a request, read from the exchange. `headers` is built only when a variable
 * reads one: node:http builds `req.headers` lazily from the raw headers, and most configs never ask.
 */
export class ExchangeFacts implements RequestFacts {
  readonly method: string;
  readonly scheme: 'http' | 'https';
  readonly target: string;
  readonly socketAddr: string;
  readonly socketPort: number;
  readonly serverAddr: string;
  readonly serverPort: number;
  readonly #ctx: DownstreamRequest;

  /** `method`: what the request goes on with after an error page (GET), when not its own. */
  constructor(ctx: DownstreamRequest, serverPort: number, method?: string) {
    const req = ctx.req;
    this.#ctx = ctx;
    this.method = method ?? req.method ?? 'GET';
    this.target = req.url ?? '/';
    this.socketAddr = ctx.realipRemoteAddr;
    this.socketPort = ctx.realipRemotePort;
    this.serverAddr = ctx.connection.serverAddr;
    this.serverPort = serverPort;
    if (ctx.contentLength !== -1) this.contentLength = ctx.contentLength;
    const encrypted = (ctx.clientSocket as { encrypted?: boolean } | null)?.encrypted === true;
    this.scheme = encrypted ? 'https' : 'http';
  }

  readonly contentLength?: number;

  /** Read when asked: realip may set it after the facts were made (its PREACCESS step). */
  get remoteAddr(): string {
    return this.#ctx.remoteAddr;
  }

  get remotePort(): number {
    return this.#ctx.remotePort;
  }

  /** realip's PREACCESS step, with the location's settings. */
  realIpAt(realIp: Parameters<typeof realIpStep>[1]): void {
    realIpStep(this.#ctx, realIp);
  }

  /** Built only when a variable asks (`$server_protocol`); empty for HTTP/0.9's simple request. */
  get protocol(): string {
    const version = this.#ctx.req.httpVersion;
    return version === '' ? '' : `HTTP/${version}`;
  }

  /** `if (-f …)` and its kin: nginx stats the path as the request is processed (ngx_open_cached_file). */
  statFile(path: string): FileStat | null {
    try {
      const st = statSync(path);
      const kind = st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other';
      return { kind, exec: (st.mode & 0o100) !== 0 };
    } catch {
      return null;
    }
  }

  get tls(): TlsFacts | null {
    return connectionTls(this.#ctx.connection);
  }

  get progress(): RequestProgress | undefined {
    return this.#ctx.progress;
  }

  get connectionNumber(): number {
    return this.#ctx.connection.number;
  }

  get connectionRequests(): number {
    return this.#ctx.connection.requests;
  }

  get connectionMs(): number {
    return performance.now() - this.#ctx.connection.startedMs;
  }

  get headers(): Readonly<Record<string, string | undefined>> {
    return this.#ctx.req.headers as Record<string, string | undefined>;
  }
}
