/**
 * Header rewriting on the proxy path, done as one pass over the raw header list into the flat
 * `[name, value, …]` arrays that the upstream client and `writeHead` take (no header objects on the
 * hot path).
 *
 * A request's head is ngx_http_proxy_create_request's: the `proxy_set_header` set's lines (nginx's
 * defaults among them: `Host $proxy_host`), then the client's lines but those whose names the set
 * holds (src/engine/http/proxy-headers.ts). No X-Forwarded-* is added unless the set says so. An
 * answer loses what nginx does not relay (`responseDropped`).
 */

import {
  type BoundProxyHeaders,
  DEFAULT_PROXY_HEADERS,
  writeProxyHeaders,
} from '../../../engine/http/proxy-headers.ts';
import { DEFAULT_PROXY_RULES, type ProxyRules } from '../../../engine/http/proxy-rules.ts';
import { isUnixAddress, UNIX_HOST } from '../../../engine/net/address-text.ts';

/** What the decision and the forwarder read of a request head (`readRequestFacts`, once a request). */
export interface RequestHeaderFacts {
  /** The Host header as received, `""` when absent. */
  host: string;
  /** The request has a body (Content-Length > 0 or Transfer-Encoding). */
  hasBody: boolean;
  /** The Content-Length value (node:http accepts one, of digits only); -1 when absent. */
  contentLength: number;
}

const HOST = 1;
const CONTENT_LENGTH = 2;
const TRANSFER_ENCODING = 3;

/** The request header names the facts are read from; 0 for any other. */
function factKind(name: string): number {
  switch (name.length) {
    case 4:
      return isNamed(name, 'host', 'Host') ? HOST : 0;
    case 14:
      return isNamed(name, 'content-length', 'Content-Length') ? CONTENT_LENGTH : 0;
    case 17:
      return name.toLowerCase() === 'transfer-encoding' ? TRANSFER_ENCODING : 0;
  }
  return 0;
}

/** `name` is `lower` in any case; its two usual spellings are matched without making a lower-cased copy. */
function isNamed(name: string, lower: string, usual: string): boolean {
  return name === usual || name === lower || name.toLowerCase() === lower;
}

/**
 * What the decision reads of the head before anything is forwarded: a request answered or refused
 * never has its headers rewritten.
 */
export function readRequestFacts(rawHeaders: readonly string[], facts: RequestHeaderFacts): void {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    switch (factKind(rawHeaders[i]!)) {
      case HOST:
        if (facts.host === '') facts.host = rawHeaders[i + 1]!;
        break;
      case CONTENT_LENGTH: {
        const value = rawHeaders[i + 1]!;
        facts.contentLength = Number(value);
        if (value !== '0') facts.hasBody = true;
        break;
      }
      case TRANSFER_ENCODING:
        facts.hasBody = true;
        break;
    }
  }
}

/** The `proxy_pass` URL's scheme: its default port, and how the log's `upstream: "…"` begins. */
export interface UpstreamScheme {
  readonly prefix: 'http://' | 'https://';
  readonly defaultPort: string;
}

export const HTTP_SCHEME: UpstreamScheme = Object.freeze({ prefix: 'http://', defaultPort: '80' });
export const HTTPS_SCHEME: UpstreamScheme = Object.freeze({ prefix: 'https://', defaultPort: '443' });

/**
 * A log line's `upstream: "…"`: the scheme, the server (or the group) and the URI sent — parted from a
 * UNIX-domain path by a `:`, as nginx writes it (`http://unix:/run/app.sock:/uri`).
 */
export function upstreamLogText(scheme: UpstreamScheme, server: string, uri: string): string {
  return `${scheme.prefix}${server}${isUnixAddress(server) ? ':' : ''}${uri}`;
}

/**
 * `$proxy_host` of a group (ngx_http_proxy_set_vars): the `proxy_pass` target's host as a URL writes it
 * (an IPv6 address in brackets, as an implicit group's name does not keep them; `localhost` for
 * `unix:/path`), its port left out
 * when it is the scheme's default (80, or 443 for `https://`).
 */
export function proxyHostOf(group: string, scheme: UpstreamScheme = HTTP_SCHEME): string {
  if (isUnixAddress(group)) return UNIX_HOST;
  const colon = group.lastIndexOf(':');
  if (colon === -1) return group;
  const host = group.slice(0, colon);
  const port = group.slice(colon + 1);
  const written = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return port === scheme.defaultPort ? written : `${written}:${port}`;
}

/** The set bound to no request: nginx's defaults alone (a decision made without the engine's). */
const DEFAULTS = DEFAULT_PROXY_HEADERS.unbound;

/**
 * The headers to send upstream, as a flat list: the set's lines with a value (`proxyHost`: the
 * default Host's, `$proxy_host`), then the client's lines but those the set names. The client's
 * `Content-Length` stays (nginx's `Content-Length: $proxy_internal_body_length`): the upstream client
 * frames the body by it, and writes `Transfer-Encoding` and `Connection` itself.
 */
export function upstreamRequestHeaders(
  rawHeaders: readonly string[],
  bound: BoundProxyHeaders = DEFAULTS,
  proxyHost = '',
): string[] {
  const out: string[] = [];
  writeProxyHeaders(bound, proxyHost, out);
  const { names, nameLengths } = bound.headers;
  let length = false;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (!nameLengths.has(name.length) || !names.has(name.toLowerCase())) {
      out.push(name, rawHeaders[i + 1]!);
    } else if (!length && name.length === 14 && name.toLowerCase() === 'content-length') {
      length = true;
      out.push('content-length', rawHeaders[i + 1]!);
    }
  }
  return out;
}

/**
 * True when a response header is not relayed: what nginx's upstream module does not copy (Connection,
 * Keep-Alive, Transfer-Encoding) or its `proxy_hide_header` defaults hide (Date, Server, X-Pad and
 * five X-Accel-* headers); also TE and Trailer, which node:http and HTTP/2 clients cannot be given as
 * nginx gives them. Headers an answer's Connection names, Proxy-* and other X-Accel-* are relayed,
 * as nginx relays them.
 */
function responseDropped(name: string): boolean {
  if (knownResponseDropped(name)) return true;
  const c = name.charCodeAt(0) | 0x20;
  return c === 0x78 /* x */ && name.length > 8 && HIDDEN_X_ACCEL.has(name.toLowerCase());
}

/** nginx's `proxy_hide_header` defaults among the X-Accel-* headers. */
const HIDDEN_X_ACCEL = new Set([
  'x-accel-expires',
  'x-accel-redirect',
  'x-accel-limit-rate',
  'x-accel-buffering',
  'x-accel-charset',
]);

function knownResponseDropped(name: string): boolean {
  switch (name.length) {
    case 2:
      return name.toLowerCase() === 'te';
    case 4:
      return name.toLowerCase() === 'date';
    case 5:
      return name.toLowerCase() === 'x-pad';
    case 6:
      return name.toLowerCase() === 'server';
    case 7:
      // `Upgrade` is relayed, as nginx relays it: a 426 needs it (RFC 9110 §15.5.22), a 101 too
      return name.toLowerCase() === 'trailer';
    case 10: {
      const lower = name.toLowerCase();
      return lower === 'connection' || lower === 'keep-alive';
    }
    case 17:
      return name.toLowerCase() === 'transfer-encoding';
  }
  return false;
}

/** latin1 keeps every byte as it came; Node writes header strings back as latin1. */
function latin1(raw: Buffer | string): string {
  return typeof raw === 'string' ? raw : raw.toString('latin1');
}

/** What `proxy_hide_header` and `proxy_pass_header` change of what is relayed (proxy-rules.ts). */
export type RelayedFieldRules = Pick<ProxyRules, 'hideHeaders' | 'passHeaders'>;

/**
 * The upstream response headers to relay to the client, as a flat list of strings; `rules`: the
 * location's `proxy_hide_header` and `proxy_pass_header` (a passed field wins over a hidden one, as
 * nginx takes it out of the list to hide; the hop-by-hop fields are never relayed).
 */
export function clientResponseHeaders(
  rawHeaders: readonly (Buffer | string)[],
  rules: RelayedFieldRules = DEFAULT_PROXY_RULES,
): string[] {
  const out: string[] = [];
  const custom = rules.hideHeaders.size !== 0 || rules.passHeaders.size !== 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = latin1(rawHeaders[i]!);
    // a dropped header's value is not read (Date and Keep-Alive come with nearly every answer)
    const dropped = custom ? droppedUnder(name, rules) : responseDropped(name);
    if (!dropped) out.push(name, latin1(rawHeaders[i + 1]!));
  }
  return out;
}

/**
 * nginx's own `Server` first in a relayed answer's fields — unless `proxy_pass_header Server` relays
 * the server's, as its header filter adds one only when the answer has none.
 */
export function withOwnServer(headers: string[], rules: RelayedFieldRules | undefined, server: string): void {
  const relayed =
    rules?.passHeaders.has('server') === true &&
    headers.some((field, i) => i % 2 === 0 && field.toLowerCase() === 'server');
  if (!relayed) headers.unshift('Server', server);
}

function droppedUnder(name: string, rules: RelayedFieldRules): boolean {
  const lower = name.toLowerCase();
  if (HOP_BY_HOP.has(lower)) return true;
  if (rules.passHeaders.has(lower)) return false;
  return rules.hideHeaders.has(lower) || responseDropped(name);
}

/** What is never relayed, whatever `proxy_pass_header` says (nginx does not copy them). */
const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
]);

/**
 * The headers relayed with a 101 (Switching Protocols): `Connection: upgrade`, as nginx's header
 * filter writes it, then the upstream's as for any response (its `Upgrade` among them, in its place).
 */
export function switchingProtocolsHeaders(rawHeaders: readonly string[]): string[] {
  const out = ['Connection', 'upgrade'];
  for (const header of clientResponseHeaders(rawHeaders)) out.push(header);
  return out;
}
