/**
 * Routing a request to its server (ngx_http_find_virtual_server) and location (FIND_CONFIG), from
 * its target, `Host` and the address and port it came in on.
 */

import type { NginxRegex } from '../nginx-regex.ts';
import { findLocationMatch } from './find-location.ts';
import { normalizeHost, type ServerSelector } from './find-server.ts';
import type { LocationHandler } from './location-handler.ts';
import type { SiteServer } from './site-server.ts';
import { type ParsedTarget, parseRequestTarget } from './uri.ts';

export interface Route {
  readonly server: SiteServer;
  readonly handler: LocationHandler;
  readonly target: ParsedTarget;
  readonly host: string;
  readonly serverName: string;
  /** The regex location's regex that matched the URI (its captures are `$1`… from then on). */
  readonly locationRegex: NginxRegex | null;
  /** The `server_name` regex that selected the server (its captures are the request's). */
  readonly serverRegex?: NginxRegex | null;
  /**
   * A `rewrite` changed the URI (r->internal, the target as received no longer the request's);
   * `validLocation` false after a `break` (proxy_pass then sends the whole URI without its own).
   */
  readonly rewritten?: { readonly validLocation: boolean } | undefined;
  /** FIND_CONFIG's NGX_DONE: the URI is `handler`'s location name without its `/` (a 301 to it). */
  readonly autoRedirect?: boolean;
  /** `handler` is a named location's (`@name`): its phases start at its own REWRITE. */
  readonly named?: boolean;
}

/**
 * `$server_name` (ngx_http_core_merge_srv_conf): the first name, without the leading dot of a
 * `.example.com` one; `""` for a server without names.
 */
function serverNameOf(server: SiteServer): string {
  const first = server.serverNames[0] ?? '';
  return first.charCodeAt(0) === 46 ? first.slice(1) : first;
}

export class Router {
  readonly #selector: ServerSelector<SiteServer>;
  #lastHostHeader: string | undefined = undefined;
  #lastHost = '';

  constructor(selector: ServerSelector<SiteServer>) {
    this.#selector = selector;
  }

  /** Finds server and location; null when nginx would answer 400 (bad target) or nothing listens. */
  route(target: string, hostHeader: string | undefined, serverAddr: string, port: number): Route | null {
    const parsed = parseRequestTarget(target);
    if (parsed === null) return null;
    const host = this.#normalizedHost(hostHeader);
    const server = this.#selector.select(serverAddr, port, host);
    if (server === null) return null;
    const serverName = serverNameOf(server);
    const { location, regex, autoRedirect } = findLocationMatch(server.locations, parsed.uri);
    return {
      server,
      handler: location === null ? server.handler : location.handler,
      target: parsed,
      host: host.length !== 0 ? host : serverName,
      serverName,
      locationRegex: regex,
      autoRedirect,
      serverRegex: this.#selector.matchedRegex,
    };
  }

  /**
   * A request whose target nginx could not read (its 400): the address's default server, at its
   * server level, with no URI — what the log phase logs it under (`$uri` empty). Null: none listens.
   */
  badTargetRoute(serverAddr: string, port: number): Route | null {
    const server = this.#selector.defaultServer(serverAddr, port);
    if (server === null) return null;
    const serverName = serverNameOf(server);
    const target = { uri: '', args: '', hasArgs: false };
    return { server, handler: server.handler, target, host: serverName, serverName, locationRegex: null };
  }

  /**
   * `normalizeHost`, remembering the last header: requests in a row mostly carry the same `Host`, and
   * the remembered result is one string whose hash the name lookups already know.
   */
  #normalizedHost(hostHeader: string | undefined): string {
    if (hostHeader === this.#lastHostHeader) return this.#lastHost;
    const host = normalizeHost(hostHeader);
    this.#lastHostHeader = hostHeader;
    this.#lastHost = host;
    return host;
  }
}
