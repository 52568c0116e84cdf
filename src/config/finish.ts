/**
 * Checks nginx makes once the whole http block is read (ngx_http_block after parsing, and cycle
 * initialisation), in nginx's order: the core module's merge of each server (header buffers, reported
 * at the closing `}` of http), upstream targets, duplicate locations, unknown variables, server names;
 * then shared memory zones that were referenced but never declared.
 *
 * nginx prints "unknown variable", "zero size shared memory zone" and some upstream errors without a
 * position; limitswitch adds the file:line of the first directive concerned.
 */
import { listenAddressText } from '../engine/net/address-text.ts';
import { parseIpv4, parseIpv6 } from '../engine/net/ip-text.ts';
import { isBuiltinVariable } from '../engine/variables/builtin-names.ts';
import type { HttpBuilder, LocationBuilder } from './builders.ts';
import { configError } from './config-error.ts';
import type { Session } from './directives/types.ts';
import { hostnameHashKeys } from './hostname-keys.ts';
import { LARGE_CLIENT_HEADER_BUFFERS } from './merge.ts';
import type { SourceRef } from './model.ts';

export function finishHttp(http: HttpBuilder, session: Session, end: SourceRef): void {
  checkHeaderBuffers(http, end);
  checkProxyTargets(http);
  for (const server of http.servers) checkDuplicateLocations(server.locations);
  checkVariables(http);
  checkServerNames(http, session);
}

/** nginx's default `connection_pool_size` (64 pointers). */
const CONNECTION_POOL_SIZE = 512;

/** ngx_http_core_merge_srv_conf: every server's large header buffers hold at least a connection pool. */
function checkHeaderBuffers(http: HttpBuilder, end: SourceRef): void {
  for (const server of http.servers) {
    const buffers =
      server.largeClientHeaderBuffers ?? http.largeClientHeaderBuffers ?? LARGE_CLIENT_HEADER_BUFFERS;
    const poolBytes = server.connectionPoolSize ?? http.connectionPoolSize ?? CONNECTION_POOL_SIZE;
    if (buffers.bytes < poolBytes) {
      throw configError(
        'the "large_client_header_buffers" size must be equal to or greater than "connection_pool_size"',
        end,
      );
    }
  }
}

/**
 * A static proxy_pass host must be an upstream (without a port), an IP address, `localhost` or a DNS
 * name with a dot. nginx resolves other names while loading; limitswitch resolves nothing then, and
 * takes a bare word that is no upstream for a misspelt upstream name.
 */
function checkProxyTargets(http: HttpBuilder): void {
  for (const target of http.proxyTargets) {
    const upstream = http.upstreams.find((u) => u.name.toLowerCase() === target.host.toLowerCase());
    if (upstream) {
      if (target.port !== null)
        throw configError(`upstream "${target.host}" may not have port ${target.port}`, target.source);
      continue;
    }
    const address = parseIpv4(target.host) >= 0 || parseIpv6(target.host) !== null;
    if (!address && target.host !== 'localhost' && !target.host.includes('.'))
      throw configError(`host not found in upstream "${target.host}"`, target.source);
  }
}

/** Two exact (`=`) or two prefix (plain or `^~`) locations with the same URI on one level. */
function checkDuplicateLocations(locations: readonly LocationBuilder[]): void {
  const seen = new Set<string>();
  for (const location of locations) {
    if (location.match === '~' || location.match === '~*' || location.named) continue;
    const key = `${location.match === '=' ? '=' : 'prefix'} ${location.pattern}`;
    if (seen.has(key)) throw configError(`duplicate location "${location.pattern}"`, location.source);
    seen.add(key);
  }
  for (const location of locations) checkDuplicateLocations(location.locations);
}

/**
 * nginx's variables that cannot be had here: `$ssl_curve` (node:tls tells a server nothing of the key
 * exchange's group).
 */
const UNSUPPORTED_VARIABLES: ReadonlySet<string> = new Set(['ssl_curve']);

/** Every variable used must be built in or made by a map, geo, keyval or named capture (anywhere). */
function checkVariables(http: HttpBuilder): void {
  for (const use of http.variableUses) {
    if (isBuiltinVariable(use.name) || http.variables.has(use.name)) continue;
    if (UNSUPPORTED_VARIABLES.has(use.name))
      throw configError(`the "$${use.name}" variable is not supported by limitswitch`, use.source);
    throw configError(`unknown "${use.name}" variable`, use.source);
  }
}

/**
 * Where several servers share an address, nginx builds a name hash: an invalid wildcard is an error,
 * a name already taken is a warning and is ignored for that address.
 */
function checkServerNames(http: HttpBuilder, session: Session): void {
  const byAddress = new Map<string, typeof http.servers>();
  for (const server of http.servers) {
    const addresses = server.listen.length
      ? server.listen.map((l) => listenAddressText(l.host, l.port))
      : ['0.0.0.0:80'];
    for (const address of new Set(addresses))
      byAddress.set(address, [...(byAddress.get(address) ?? []), server]);
  }
  for (const [address, servers] of byAddress) {
    if (servers.length < 2) continue;
    const taken = new Set<string>();
    for (const server of servers) {
      for (const name of server.serverNames.length ? server.serverNames : ['']) {
        if (name.startsWith('~')) continue;
        const keys = hostnameHashKeys(name);
        if (!keys)
          throw configError(`invalid server name or wildcard "${name}" on ${address}`, server.source);
        if (keys.some((key) => taken.has(key))) {
          session.warn(`conflicting server name "${name}" on ${address}, ignored`, { file: '', line: 0 });
          continue;
        }
        for (const key of keys) taken.add(key);
      }
    }
  }
}

/** `limit_req zone=x` or `keyval … zone=x` with no zone directive declaring `x`. */
export function checkSharedMemory(http: HttpBuilder): void {
  for (const [name, zone] of http.sharedMemory)
    if (zone.sizeBytes === 0) throw configError(`zero size shared memory zone "${name}"`, zone.firstUse);
  for (const use of http.apiRateLimitUses) {
    if (!http.apiRateLimitZones.some((zone) => zone.name === use.zone))
      throw configError(`unknown api_rate_limit_zone "${use.zone}"`, use.source);
  }
  for (const { level, source } of http.priorityLevelUses) {
    const literal = level.parts.every((part) => 'text' in part);
    if (literal && !http.priorityLevelZones.some((zone) => zone.name === level.raw))
      throw configError(`unknown priority_level_zone "${level.raw}"`, source);
  }
}
