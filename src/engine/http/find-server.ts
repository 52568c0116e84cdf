/**
 * Virtual server selection (ngx_http_find_virtual_server): among the servers listening on the
 * connection's address:port (a UNIX-domain socket's `unix:/path` and port 0), the exact name, then
 * the longest leading wildcard, the longest trailing wildcard, the first matching regex; else the
 * `default_server` of that address:port, else the first server that listens there.
 */

import { HostnameMatcher } from '../hostname-matcher.ts';
import { isUnixAddress } from '../net/address-text.ts';
import type { NginxRegex } from '../nginx-regex.ts';

export interface ListenDefinition {
  readonly host: string | null;
  readonly port: number;
  readonly defaultServer: boolean;
}

export interface NamedServer {
  readonly listen: readonly ListenDefinition[];
  /** As written; a `~regex` name is matched through `serverNameRegexes`. */
  readonly serverNames: readonly string[];
  /** The `~regex` names of `serverNames`, compiled (case-insensitively), in the same order. */
  readonly serverNameRegexes: readonly NginxRegex[];
}

interface ListenGroup<S> {
  readonly host: string | null;
  readonly port: number;
  defaultServer: S;
  readonly names: HostnameMatcher<S>;
  readonly regexes: { re: NginxRegex; server: S }[];
}

const WILDCARD_HOSTS = new Set([null, '*', '0.0.0.0', '[::]']);

export class ServerSelector<S extends NamedServer> {
  private readonly groups: ListenGroup<S>[] = [];
  /** port → server address → its listen group (null: none), filled as connections arrive. */
  readonly #byPort = new Map<number, Map<string, ListenGroup<S> | null>>();

  constructor(servers: readonly S[]) {
    for (const server of servers) {
      for (const listen of server.listen) {
        const host = WILDCARD_HOSTS.has(listen.host) ? null : listen.host;
        let group = this.groups.find((g) => g.port === listen.port && g.host === host);
        if (group === undefined) {
          group = {
            host,
            port: listen.port,
            defaultServer: server,
            names: new HostnameMatcher(),
            regexes: [],
          };
          this.groups.push(group);
          this.addNames(group, server);
        } else {
          this.addNames(group, server);
        }
        if (listen.defaultServer) group.defaultServer = server;
      }
    }
  }

  /** TCP ports the configuration listens on, in order of appearance (UNIX-domain sockets have none). */
  ports(): number[] {
    return [...new Set(this.groups.filter((g) => !isUnixAddress(g.host)).map((g) => g.port))];
  }

  /** The regex name that selected the server in the last `select`; null when none did. */
  matchedRegex: NginxRegex | null = null;

  /** The server for a connection to `serverAddr:port` with `host` (lower-case, no port); null if none. */
  select(serverAddr: string, port: number, host: string): S | null {
    this.matchedRegex = null;
    const group = this.#groupFor(serverAddr, port);
    if (group === null) return null;
    return this.#named(group, host) ?? group.defaultServer;
  }

  /** The server a name selects on the address, without the default server's fallback (SNI). */
  named(serverAddr: string, port: number, host: string): S | null {
    const group = this.#groupFor(serverAddr, port);
    return group === null ? null : this.#named(group, host);
  }

  #named(group: ListenGroup<S>, host: string): S | null {
    const named = group.names.match(host);
    if (named !== undefined) return named;
    if (host.length !== 0) {
      for (const { re, server } of group.regexes) {
        if (!re.test(host)) continue;
        this.matchedRegex = re;
        return server;
      }
    }
    return null;
  }

  /** The default server of the connection's `serverAddr:port` (its buffers read the head); null if none. */
  defaultServer(serverAddr: string, port: number): S | null {
    return this.#groupFor(serverAddr, port)?.defaultServer ?? null;
  }

  /**
   * The listen group a connection lands in: exact address, else the wildcard, else any on the port.
   * Memoised by port, then address, so no key is built per request.
   */
  #groupFor(serverAddr: string, port: number): ListenGroup<S> | null {
    let byAddress = this.#byPort.get(port);
    if (byAddress === undefined) {
      byAddress = new Map();
      this.#byPort.set(port, byAddress);
    }
    let group = byAddress.get(serverAddr);
    if (group === undefined) {
      group =
        this.groups.find((g) => g.port === port && g.host === serverAddr) ??
        this.groups.find((g) => g.port === port && g.host === null) ??
        this.groups.find((g) => g.port === port) ??
        null;
      byAddress.set(serverAddr, group);
    }
    return group;
  }

  private addNames(group: ListenGroup<S>, server: S): void {
    for (const name of server.serverNames) if (!name.startsWith('~')) group.names.add(name, server);
    for (const re of server.serverNameRegexes) group.regexes.push({ re, server });
  }
}

/** `Host` header → nginx's `$host` candidate: lower-cased, port and one trailing dot removed. */
export function normalizeHost(header: string | undefined): string {
  if (header === undefined) return '';
  let host = header.toLowerCase();
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    host = end === -1 ? host : host.slice(0, end + 1);
  } else {
    const colon = host.indexOf(':');
    if (colon !== -1) host = host.slice(0, colon);
  }
  if (host.endsWith('.')) host = host.slice(0, -1);
  return host;
}
