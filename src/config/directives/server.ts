/**
 * ngx_http_core_module's server level: `server { }`, `listen`, `server_name`.
 */
import { hostname } from 'node:os';
import {
  listenAddressText,
  parseHostPort,
  unixAddressOf,
  unixPathError,
} from '../../engine/net/address-text.ts';
import { newServer } from '../builders.ts';
import { configError } from '../config-error.ts';
import type { Directive } from '../directive.ts';
import { compileRegex, namedCaptures } from '../regex.ts';
import { defineVariable, httpOf, ref } from './helpers.ts';
import type { DirectiveSpec, Scope } from './types.ts';

/** listen parameters that change only socket tuning: accepted, no effect. */
const IGNORED_LISTEN =
  /^(reuseport|deferred|bind|backlog=.*|rcvbuf=.*|sndbuf=.*|ipv6only=.*|so_keepalive=.*|fastopen=.*|accept_filter=.*|setfib=.*)$/;
const UNSUPPORTED_LISTEN = new Set(['quic', 'proxy_protocol', 'spdy']);

function server(d: Directive, scope: Scope): void {
  const builder = newServer(ref(d));
  httpOf(scope).servers.push(builder);
  scope.session.walkBlock(d, { ...scope, kind: 'server', server: builder, location: null });
}

/** A port as ngx_atoi reads it: digits only; null for anything else. */
function atoiPort(text: string): number | null {
  return /^[0-9]+$/.test(text) ? Number(text) : null;
}

/**
 * A port range in a listen address, `first-last` (ngx_parse_inet_url/inet6_url, nginx 1.15.10+): the
 * address with its first port, and the last. Null when the address has no range (a bare `a-b` that is
 * not a number is a host name to nginx).
 */
function portRange(url: string): { text: string; lastPort: number } | { error: string } | null {
  const colon = url.startsWith('[') ? url.indexOf(']:') + 1 : url.lastIndexOf(':');
  const portText = colon > 0 ? url.slice(colon + 1) : url;
  const dash = portText.indexOf('-');
  if (dash === -1) return null;
  const last = atoiPort(portText.slice(dash + 1));
  if (colon <= 0 && (last === null || atoiPort(portText.slice(0, dash)) === null)) return null;
  if (last === null || last < 1 || last > 65535) return { error: 'invalid port' };
  const first = atoiPort(portText.slice(0, dash));
  if (first === null || first < 1 || first > 65535) return { error: 'invalid port' };
  if (first > last) return { error: 'invalid port range' };
  return { text: `${colon > 0 ? url.slice(0, colon + 1) : ''}${first}`, lastPort: last };
}

/**
 * `listen address[:port[-last]] | port[-last] | unix:path [default_server] [ssl] [http2] [socket
 * options];` — a range is a listening socket per port, each with this server.
 */
function listen(d: Directive, scope: Scope): void {
  const url = d.args[0]!;
  const unix = unixAddressOf(url);
  if (unix !== null) {
    listenUnix(d, scope, unix);
    return;
  }
  const range = portRange(url);
  if (range !== null && 'error' in range)
    throw configError(`${range.error} in "${url}" of the "listen" directive`, d);
  const parsed = parseHostPort(range?.text ?? url, true);
  if (parsed.error !== undefined)
    throw configError(`${parsed.error} in "${url}" of the "listen" directive`, d);
  const { defaultServer, ssl, http2 } = listenParams(d);
  const first = parsed.port ?? 80;
  for (let port = first; port <= (range?.lastPort ?? first); port++)
    addListen(d, scope, { host: parsed.host, port, defaultServer, ssl, http2, source: ref(d) });
}

/**
 * `listen unix:path …` (ngx_parse_unix_domain_url: the rest of the word is the path). The address has
 * no port: it is held as host `unix:path`, port 0. TLS and HTTP/2 are refused on it: the TLS edge
 * picks a certificate's server by the connection's TCP address.
 */
function listenUnix(d: Directive, scope: Scope, address: string): void {
  const error = unixPathError(address);
  if (error !== null) throw configError(`${error} in "${d.args[0]}" of the "listen" directive`, d);
  const { defaultServer, ssl, http2 } = listenParams(d);
  for (const [param, given] of [
    ['ssl', ssl],
    ['http2', http2],
  ] as const) {
    if (given)
      throw configError(
        `the "${param}" parameter of "listen unix:" is not supported by limitswitch (its TLS and HTTP/2 edge serves TCP addresses only)`,
        d,
      );
  }
  addListen(d, scope, { host: address, port: 0, defaultServer, ssl, http2, source: ref(d) });
}

type ListenBuilder = NonNullable<Scope['server']>['listen'][number];

function listenParams(d: Directive): { defaultServer: boolean; ssl: boolean; http2: boolean } {
  let defaultServer = false;
  let ssl = false;
  let http2 = false;
  for (const param of d.args.slice(1)) {
    if (param === 'default_server' || param === 'default') defaultServer = true;
    else if (param === 'ssl') ssl = true;
    else if (param === 'http2') http2 = true;
    else if (UNSUPPORTED_LISTEN.has(param))
      throw configError(`the "${param}" parameter of "listen" is not supported by limitswitch`, d);
    else if (!IGNORED_LISTEN.test(param)) throw configError(`invalid parameter "${param}"`, d);
  }
  return { defaultServer, ssl, http2 };
}

/** One listening address of the server (nginx's duplicate checks are per address text). */
function addListen(d: Directive, scope: Scope, listen: ListenBuilder): void {
  const address = listenAddressText(listen.host, listen.port);
  const server = scope.server!;
  if (server.listen.some((l) => listenAddressText(l.host, l.port) === address))
    throw configError(`a duplicate listen ${address}`, d);
  if (listen.defaultServer) {
    const defaults = httpOf(scope).defaultServers;
    if (defaults.has(address)) throw configError(`a duplicate default server for ${address}`, d);
    defaults.add(address);
  }
  server.listen.push(listen);
}

/** `server_name name …;` — exact names are lowercased as nginx does; `~regex` names are compiled. */
function serverName(d: Directive, scope: Scope): void {
  for (const name of d.args) {
    const first = name[0];
    if ((first === '*' && (name.length < 3 || name[1] !== '.')) || (first === '.' && name.length < 2))
      throw configError(`server name "${name}" is invalid`, d);
    if (name.includes('/')) scope.session.warn(`server name "${name}" has suspicious symbols`, ref(d));
    if (first === '~') {
      const pattern = name.slice(1);
      // nginx compiles server_name regexes caseless (the host is lower-cased before it is matched)
      const regex = compileRegex(pattern, true, d);
      for (const capture of namedCaptures(pattern))
        if (!httpOf(scope).variables.has(capture)) defineVariable(capture, {}, d, scope);
      scope.server!.serverNames.push(name);
      scope.server!.serverNameRegexes.push(regex);
      continue;
    }
    scope.server!.serverNames.push(
      name.toLowerCase() === '$hostname' ? hostname().toLowerCase() : name.toLowerCase(),
    );
  }
}

export const serverDirectives: readonly DirectiveSpec[] = [
  { name: 'server', contexts: ['http'], block: true, args: [0], handle: server },
  { name: 'listen', contexts: ['server'], args: '1+', handle: listen },
  { name: 'server_name', contexts: ['server'], args: '1+', handle: serverName },
];
