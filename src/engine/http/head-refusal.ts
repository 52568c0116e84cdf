/**
 * What nginx refuses of request heads on a listening address, before routing: each head is read in
 * the header buffers of the servers there (see request-head.ts), and a refusal's error-log line names
 * the server that had the request.
 */

import { normalizeHost, type ServerSelector } from './find-server.ts';
import { type H2HeaderFault, h2HeaderFault } from './h2-header-limits.ts';
import { readH2RequestHead } from './h2-request-head.ts';
import type { HeadServers } from './header-buffers.ts';
import { type HeadFault, type RequestHead, readOversizedHead, readRequestHead } from './request-head.ts';
import type { SiteServer } from './site-server.ts';

/** A request head nginx would refuse, and the server whose name its error-log line carries. */
export interface RefusedHead {
  readonly fault: HeadFault;
  readonly serverName: string;
}

export class HeadRefusals {
  readonly #servers: readonly SiteServer[];
  readonly #selector: ServerSelector<SiteServer>;
  /** port → server address → the servers a head is read for (null: nothing listens there). */
  readonly #headServers = new Map<number, Map<string, HeadServers | null>>();

  constructor(servers: readonly SiteServer[], selector: ServerSelector<SiteServer>) {
    this.#servers = servers;
    this.#selector = selector;
  }

  /** What nginx refuses of a parsed head (see `readRequestHead`); null for a head it reads. */
  readHead(head: RequestHead, serverAddr: string, port: number): RefusedHead | null {
    const servers = this.#headServersFor(serverAddr, port);
    if (servers === null) return null;
    const fault = head.h2 === true ? readH2RequestHead(head) : readRequestHead(head, servers);
    return fault === null ? null : this.refusal(fault, serverAddr, port);
  }

  /**
   * What nginx makes of a head too large for the parser, from the bytes it was given (see
   * `readOversizedHead`); null when they do not show it.
   */
  readOversizedHead(bytes: string, serverAddr: string, port: number): RefusedHead | null {
    const servers = this.#headServersFor(serverAddr, port);
    if (servers === null) return null;
    const fault = readOversizedHead(bytes, servers);
    return fault === null ? null : this.refusal(fault, serverAddr, port);
  }

  /**
   * What nginx finds too large in an HTTP/2 header block (h2-header-limits.ts), read in the buffers of
   * the connection's server: the one its SNI name selected, else the address's default server — not
   * the one `:authority` names (ngx_http_v2 reads them from `hc->conf_ctx`).
   */
  readH2HeaderBlock(
    rawHeaders: readonly string[],
    serverAddr: string,
    port: number,
    sniName: string | null,
  ): H2HeaderFault | null {
    const server =
      (sniName === null ? null : this.#selector.named(serverAddr, port, sniName)) ??
      this.#selector.defaultServer(serverAddr, port);
    return server === null ? null : h2HeaderFault(rawHeaders, server.headerBuffers);
  }

  /**
   * At least the largest head nginx could take on `port`: a first buffer and every large buffer, the
   * largest of any server there (a Host line may switch a head to another server's buffers).
   */
  maxHeadBytes(port: number): number {
    let first = 0;
    let count = 0;
    let bytes = 0;
    for (const server of this.#servers) {
      if (!server.listen.some((l) => l.port === port)) continue;
      const b = server.headerBuffers;
      first = Math.max(first, b.firstBytes);
      count = Math.max(count, b.largeCount);
      bytes = Math.max(bytes, b.largeBytes);
    }
    return first + count * bytes;
  }

  /** A head fault with the name of the server that has the request (for its log line). */
  refusal(fault: HeadFault, serverAddr: string, port: number): RefusedHead {
    const server =
      fault.hostSelected && fault.host !== null
        ? this.#selector.select(serverAddr, port, normalizeHost(fault.host))
        : this.#selector.defaultServer(serverAddr, port);
    return { fault, serverName: server?.serverNames[0] ?? '' };
  }

  #headServersFor(serverAddr: string, port: number): HeadServers | null {
    let byAddress = this.#headServers.get(port);
    if (byAddress === undefined) {
      byAddress = new Map();
      this.#headServers.set(port, byAddress);
    }
    let servers = byAddress.get(serverAddr);
    if (servers === undefined) {
      const selector = this.#selector;
      const fallback = selector.defaultServer(serverAddr, port);
      servers =
        fallback === null
          ? null
          : {
              defaultBuffers: fallback.headerBuffers,
              buffersForHost: (host) =>
                (selector.select(serverAddr, port, normalizeHost(host)) ?? fallback).headerBuffers,
            };
      byAddress.set(serverAddr, servers);
    }
    return servers;
  }
}
