/**
 * `proxy_pass` on the replica: which upstream group a location forwards to, and how the request URI is
 * rewritten. `proxy_pass http://name` with a matching `upstream` block uses that group; any other
 * `http://host:port` gets an implicit one-server group. With a URI part (`http://b/v2/`), the part of
 * the normalised URI that matched the location prefix is replaced by it, as nginx does.
 */

import type { UpstreamServerSpec, UpstreamSpec } from '../../config/model.ts';
import type { LocationHandler } from '../../engine/http/location-handler.ts';
import type { Site } from '../../engine/http/site.ts';
import type { SiteLocation } from '../../engine/http/site-server.ts';
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
  /** Set when `proxy_pass` has a URI part: it replaces `prefix` at the start of `$uri`. */
  readonly rewrite: { readonly prefix: string; readonly uri: string } | null;
}

export interface ProxyTargets {
  readonly byHandler: ReadonlyMap<LocationHandler, ProxyTarget>;
  /** Every group to create: the config's upstreams plus implicit ones. */
  readonly groups: readonly UpstreamGroupSpec[];
  /** The `upstream` blocks by lower-cased name, for `proxy_pass` with variables (nginx ignores case). */
  readonly upstreamNames: ReadonlyMap<string, string>;
}

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

  const visit = (handler: LocationHandler, prefix: string | null): void => {
    if (handler.proxyPass === null) return;
    if (handler.proxyPassUrl !== null) {
      byHandler.set(handler, { upstream: '', rewrite: null });
      return;
    }
    const { authority, uri } = splitProxyPass(handler.proxyPass);
    let name = authority;
    if (!groups.has(authority)) {
      const server = parseAuthority(authority);
      name = `${server.host}:${server.port}`;
      // an implicit group has no upstream block, so nginx's defaults and the replica's cache size
      if (!groups.has(name)) groups.set(name, { name, servers: [server], keepalive: DEFAULT_KEEPALIVE });
    }
    byHandler.set(handler, {
      upstream: name,
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
  const upstreamNames = new Map(upstreams.map((u) => [u.name.toLowerCase(), u.name]));
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
 * Where a `proxy_pass` with variables goes for one request: nginx looks the evaluated host up among the
 * `upstream` blocks, else resolves it with `resolver` — which the replica has not, so any other host
 * is nginx's "no resolver defined" 502. A URI part, when given, is sent as is instead of the request's.
 */
export function dynamicTarget(
  url: string,
  upstreamNames: ReadonlyMap<string, string>,
): { readonly host: string; readonly upstream: string | null; readonly path: string | undefined } {
  const { authority, uri } = splitProxyPass(url);
  return {
    host: authority,
    upstream: upstreamNames.get(authority.toLowerCase()) ?? null,
    path: uri ?? undefined,
  };
}

function splitProxyPass(value: string): { authority: string; uri: string | null } {
  const withoutScheme = value.replace(/^https?:\/\//, '');
  const slash = withoutScheme.indexOf('/');
  return slash === -1
    ? { authority: withoutScheme, uri: null }
    : { authority: withoutScheme.slice(0, slash), uri: withoutScheme.slice(slash) };
}

function parseAuthority(authority: string): UpstreamServerSpec {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(authority);
  // The config checked proxy_pass already; this is its own parse failing.
  if (match === null) throw new LimitswitchError('InternalError', `invalid proxy_pass host "${authority}"`);
  const host = match[1]!.replace(/^\[|\]$/g, '');
  return { host, port: match[2] === undefined ? 80 : Number(match[2]), weight: 1 };
}
