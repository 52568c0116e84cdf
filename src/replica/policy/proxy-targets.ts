/**
 * `proxy_pass` on the replica: which upstream group a location forwards to, and how the request URI is
 * rewritten. `proxy_pass http://name` with a matching `upstream` block uses that group; any other
 * `http://host:port` gets an implicit one-server group, which a `proxy_pass` with variables finds too. With a URI part (`http://b/v2/`), the part of
 * the normalised URI that matched the location prefix is replaced by it, as nginx does.
 */

import type { UpstreamServerSpec, UpstreamSpec } from '../../config/model.ts';
import type { LocationHandler } from '../../engine/http/location-handler.ts';
import type { Site } from '../../engine/http/site.ts';
import type { SiteLocation } from '../../engine/http/site-server.ts';
import { escapeUri } from '../../engine/http/uri.ts';
import { isUnixAddress, splitUnixUrl, unixAddressOf, unixPathError } from '../../engine/net/address-text.ts';
import { parseIpv4, parseIpv6 } from '../../engine/net/ip-text.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import type { UpstreamGroupSpec } from '../http/upstream/upstream-group.ts';
import {
  DEFAULT_KEEPALIVE,
  type KeepaliveSettings,
  REPLICA_DEFAULT_KEEPALIVE,
} from '../http/upstream/upstream-keepalive.ts';

export interface ProxyTarget {
  /** The group; empty for a `proxy_pass` with variables (see `dynamicTarget`). */
  readonly upstream: string;
  /** `https://`: TLS to the servers. */
  readonly tls: boolean;
  /** Set when `proxy_pass` has a URI part: it replaces `prefix` at the start of `$uri`. */
  readonly rewrite: { readonly prefix: string; readonly uri: string } | null;
}

export interface ProxyTargets {
  readonly byHandler: ReadonlyMap<LocationHandler, ProxyTarget>;
  /** Every group to create: the config's upstreams plus implicit ones. */
  readonly groups: readonly UpstreamGroupSpec[];
  /** The groups a `proxy_pass` with variables may name (see `dynamicTarget`). */
  readonly upstreamNames: UpstreamNames;
}

/**
 * The groups nginx's variable `proxy_pass` looks its host up in (ngx_http_upstream_init_request): an
 * `upstream` block by its name when the URL gives no port; an implicit group, one that another
 * `proxy_pass host[:port]` made, by its host and port (80 when none is given). Hosts in any case.
 */
export class UpstreamNames {
  /** `upstream` blocks by lower-cased name. */
  readonly #blocks = new Map<string, string>();
  /** Implicit groups by lower-cased host, then port. */
  readonly #implicit = new Map<string, Map<number, string>>();

  addBlock(name: string): void {
    this.#blocks.set(name.toLowerCase(), name);
  }

  addImplicit(server: UpstreamServerSpec, group: string): void {
    const host = server.host.toLowerCase();
    let ports = this.#implicit.get(host);
    if (ports === undefined) {
      ports = new Map();
      this.#implicit.set(host, ports);
    }
    ports.set(server.port, group);
  }

  /**
   * The group for an evaluated `host[:port]` (`defaultPort`: the scheme's, when it gives none); null
   * when none (nginx would resolve the host).
   */
  find(authority: string, defaultPort = 80): string | null {
    const match = AUTHORITY.exec(authority);
    if (match === null) return null;
    const host = match[1]!.replace(/^\[|\]$/g, '').toLowerCase();
    const port = match[2] === undefined ? null : Number(match[2]);
    if (port === null) {
      const block = this.#blocks.get(match[1]!.toLowerCase());
      if (block !== undefined) return block;
    }
    return this.#implicit.get(host)?.get(port ?? defaultPort) ?? null;
  }
}

/** `host[:port]`, the host a name, an IPv4 address or an IPv6 one in brackets. */
const AUTHORITY = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/;

/** An `upstream` block's keepalive settings; without `keepalive`, the replica's default cache size. */
function keepaliveOf(upstream: UpstreamSpec): KeepaliveSettings {
  return {
    connections: upstream.keepalive ?? REPLICA_DEFAULT_KEEPALIVE,
    requests: upstream.keepaliveRequests,
    timeMs: upstream.keepaliveTimeMs,
    timeoutMs: upstream.keepaliveTimeoutMs,
  };
}

export function resolveProxyTargets(site: Site, upstreams: readonly UpstreamSpec[]): ProxyTargets {
  const groups = new Map<string, UpstreamGroupSpec>(
    upstreams.map((u) => [
      u.name,
      { name: u.name, servers: u.servers, keepalive: keepaliveOf(u), queue: u.queue },
    ]),
  );
  const byHandler = new Map<LocationHandler, ProxyTarget>();
  const upstreamNames = new UpstreamNames();
  for (const upstream of upstreams) upstreamNames.addBlock(upstream.name);

  // an `if` block's or limit_except's configuration proxies where its location does, or to its own proxy_pass
  const visit = (handler: LocationHandler, prefix: string | null): void => {
    target(handler, prefix);
    const inner = handler.script.codes.flatMap((code) =>
      code.op === 'if' && code.handler !== null ? [code.handler] : [],
    );
    if (handler.limitExcept !== null) inner.push(handler.limitExcept.handler);
    for (const block of inner) {
      const same = block.proxyPass === handler.proxyPass && byHandler.has(handler);
      if (same) byHandler.set(block, byHandler.get(handler)!);
      else target(block, null);
    }
  };
  const target = (handler: LocationHandler, prefix: string | null): void => {
    if (handler.proxyPass === null) return;
    if (handler.proxyPassUrl !== null) {
      byHandler.set(handler, { upstream: '', tls: false, rewrite: null });
      return;
    }
    const { authority, uri, tls } = splitProxyPass(handler.proxyPass);
    let name = authority;
    if (!groups.has(authority)) {
      const server = parseAuthority(authority, tls ? 443 : 80);
      name = isUnixAddress(server.host) ? server.host : `${server.host}:${server.port}`;
      // an implicit group has no upstream block, so nginx's defaults and the replica's cache size
      if (!groups.has(name)) groups.set(name, { name, servers: [server], keepalive: DEFAULT_KEEPALIVE });
      upstreamNames.addImplicit(server, name);
    }
    byHandler.set(handler, {
      upstream: name,
      tls,
      rewrite: uri !== null && prefix !== null ? { prefix, uri } : null,
    });
  };
  const walk = (locations: readonly SiteLocation[]): void => {
    for (const location of locations) {
      const prefix = location.match === '~' || location.match === '~*' ? null : location.pattern;
      visit(location.handler, prefix);
      walk(location.locations);
    }
  };
  for (const server of site.servers) {
    visit(server.handler, null);
    walk(server.locations);
  }
  return { byHandler, groups: [...groups.values()], upstreamNames };
}

/** The request-target sent upstream for a rewriting `proxy_pass`. */
export function rewriteTarget(
  target: ProxyTarget,
  uri: string,
  args: string,
  hasArgs: boolean,
): string | undefined {
  if (target.rewrite === null) return undefined;
  const rest = uri.startsWith(target.rewrite.prefix) ? uri.slice(target.rewrite.prefix.length) : uri;
  return `${target.rewrite.uri}${rest}${hasArgs ? `?${args}` : ''}`;
}

/**
 * The request-target sent upstream once a `rewrite` changed the URI (ngx_http_proxy_create_request with
 * r->internal): the URI escaped, after the `proxy_pass` URI part in place of the location's prefix —
 * unless a `break` cleared r->valid_location, which sends the whole URI without it — and the arguments.
 */
export function rewrittenTarget(
  target: ProxyTarget,
  uri: string,
  args: string,
  validLocation: boolean,
): string {
  const replaced = target.rewrite !== null && validLocation ? target.rewrite : null;
  const path =
    replaced === null ? escapeUri(uri) : replaced.uri + escapeUri(uri.slice(replaced.prefix.length));
  return args.length === 0 ? path : `${path}?${args}`;
}

/**
 * Where a `proxy_pass` with variables goes for one request: nginx looks the evaluated host up among the
 * `upstream` blocks and the implicit groups (`UpstreamNames`); else an IP address is connected to as it
 * is (`address`); else nginx resolves the host with `resolver` — which the replica has not, so any
 * other host is nginx's "no resolver defined" 502. A URI part, when given, is sent as is instead of the
 * request's.
 */
export function dynamicTarget(
  url: string,
  upstreamNames: UpstreamNames,
): {
  readonly host: string;
  readonly upstream: string | null;
  readonly address: UpstreamServerSpec | null;
  readonly path: string | undefined;
  readonly tls: boolean;
} {
  const { authority, uri, tls } = splitProxyPass(url);
  const defaultPort = tls ? 443 : 80;
  const upstream = upstreamNames.find(authority, defaultPort);
  const address = upstream === null ? ipAuthority(authority, defaultPort) : null;
  return { host: authority, upstream, address, path: uri ?? undefined, tls };
}

/**
 * `address[:port]` with an IPv4 or a bracketed IPv6 address (`defaultPort` when none), or
 * `unix:/path`; null for a name.
 */
function ipAuthority(authority: string, defaultPort: number): UpstreamServerSpec | null {
  const unix = unixAddressOf(authority);
  if (unix !== null) return unixPathError(unix) === null ? { host: unix, port: 0, weight: 1 } : null;
  const match = AUTHORITY.exec(authority);
  if (match === null) return null;
  const text = match[1]!;
  const v6 = text.startsWith('[');
  if (v6 ? parseIpv6(text, 1, text.length - 1) === null : parseIpv4(text) < 0) return null;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (port < 1 || port > 65535) return null;
  return { host: v6 ? text.slice(1, -1) : text, port, weight: 1 };
}

/**
 * A `proxy_pass` URL's parts: `https://` (in any case, as nginx reads it) is `tls`; a `unix:/path`
 * authority ends at the path's first `:`, what follows is the URI (ngx_parse_unix_domain_url).
 */
function splitProxyPass(value: string): { authority: string; uri: string | null; tls: boolean } {
  const tls = value.slice(0, 8).toLowerCase() === 'https://';
  const withoutScheme = value.replace(/^https?:\/\//i, '');
  if (unixAddressOf(withoutScheme) !== null) {
    const { address, uri } = splitUnixUrl(withoutScheme);
    return { authority: address, uri: uri === '' ? null : uri, tls };
  }
  const slash = withoutScheme.indexOf('/');
  return slash === -1
    ? { authority: withoutScheme, uri: null, tls }
    : { authority: withoutScheme.slice(0, slash), uri: withoutScheme.slice(slash), tls };
}

function parseAuthority(authority: string, defaultPort: number): UpstreamServerSpec {
  const unix = unixAddressOf(authority);
  if (unix !== null) return { host: unix, port: 0, weight: 1 };
  const match = AUTHORITY.exec(authority);
  // The config checked proxy_pass already; this is its own parse failing.
  if (match === null) throw new LimitswitchError('InternalError', `invalid proxy_pass host "${authority}"`);
  const host = match[1]!.replace(/^\[|\]$/g, '');
  return { host, port: match[2] === undefined ? defaultPort : Number(match[2]), weight: 1 };
}
