/**
 * nginx's `r->upstream_states` as one request's tries make them (ngx_http_upstream.c): a state per
 * server tried, its times from the try's start on the loop's clock (connect, head, end), the status
 * the server answered or nginx gave its failure, the bytes each way. The `$upstream_*` variables read
 * them (src/engine/variables/late-variables.ts).
 */
import { isUnixAddress } from '../../../engine/net/address-text.ts';
import { newUpstreamState, type UpstreamState } from '../../../engine/variables/request-progress.ts';
import { loopClock } from '../../../shared/clock.ts';
import type { ProgressRecord } from '../contract/request-progress.ts';
import { HTTP_SCHEME, proxyHostOf, type UpstreamScheme } from './forward-headers.ts';

export class TryRecord {
  readonly #progress: ProgressRecord;
  #state: UpstreamState | null = null;
  #startMs = 0;

  /** `group`: the group the request goes to, whose name is the `proxy_pass` target's host. */
  constructor(progress: ProgressRecord, group: string, scheme: UpstreamScheme = HTTP_SCHEME) {
    this.#progress = progress;
    // ngx_http_proxy_set_vars: the scheme's port when the URL gives none, and only another one is shown
    const port = /:(\d+)$/.exec(group)?.[1];
    // a UNIX-domain socket has no port: empty
    progress.proxyPort = isUnixAddress(group) ? '' : (port ?? scheme.defaultPort);
    progress.proxyHost = proxyHostOf(group, scheme);
  }

  /** ngx_http_upstream_connect: the try before ends now (if it had not), a state for `peer` begins. */
  started(peer: string): void {
    const now = loopClock.nowMs();
    this.#end(now);
    const state = newUpstreamState(peer);
    this.#state = state;
    this.#startMs = now;
    this.#progress.upstreamStates.push(state);
    this.#progress.upstreamHeaders = null;
  }

  /**
   * The connection is there (a cached one at once): `$upstream_connect_time`; the server is named by
   * the address connected to, as nginx names a resolved one (`localhost:80` is `127.0.0.1:80`).
   */
  connected(address: string | undefined, port: number | undefined): void {
    const state = this.#state;
    if (state === null) return;
    if (state.connectMs === -1) state.connectMs = loopClock.nowMs() - this.#startMs;
    if (address !== undefined && port !== undefined)
      state.peer = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  }

  /** The answer's head: `$upstream_header_time`, `$upstream_status`, `$upstream_http_*`. */
  head(status: number, rawHeaders: readonly (Buffer | string)[]): void {
    const state = this.#state;
    if (state === null) return;
    state.headerMs = loopClock.nowMs() - this.#startMs;
    if (state.status === 0) state.status = status;
    this.#progress.upstreamHeaders = rawHeaders.map(String);
  }

  /** Body bytes relayed: `$upstream_response_length`. */
  data(bytes: number): void {
    if (this.#state !== null) this.#state.responseLength += bytes;
  }

  /** The bytes the try's connection read and wrote for it. */
  bytes(received: number, sent: number): void {
    const state = this.#state;
    if (state === null) return;
    state.bytesReceived += received;
    state.bytesSent = sent;
  }

  /** ngx_http_upstream_next: the try failed before its answer's head; nginx's status for it. */
  failed(status: number): void {
    if (this.#state !== null) this.#state.status = status;
  }

  /** A try that found no live server: nginx names it by the group, 502, ended at once. */
  noLiveServer(group: string): void {
    this.started(group);
    this.failed(502);
    this.finished();
  }

  /** ngx_http_upstream_finalize_request: the try's end, `$upstream_response_time`. */
  finished(): void {
    this.#end(loopClock.nowMs());
  }

  #end(now: number): void {
    const state = this.#state;
    if (state !== null && state.responseMs === -1) state.responseMs = now - this.#startMs;
  }
}
