/**
 * Header rewriting on the proxy path, done as one pass over the raw header list into the flat
 * `[name, value, …]` arrays that undici and `writeHead` take (no header objects on the hot path).
 *
 * A request loses the hop-by-hop headers (Connection, Keep-Alive, Proxy-*, TE, Trailer,
 * Transfer-Encoding, Upgrade, and every header the Connection header names); an answer what nginx
 * does not relay (`responseDropped`). Upstream, the request gets
 * `X-Forwarded-For` = incoming list + `$remote_addr` (nginx's `$proxy_add_x_forwarded_for`),
 * `X-Forwarded-Proto` and `X-Forwarded-Host` (replacing what the client sent); Host is kept.
 */

/** What the decision and the forwarder read of a request head (`readRequestFacts`, once a request). */
export interface RequestHeaderFacts {
  /** The Host header as received, `""` when absent. */
  host: string;
  /** The request has a body (Content-Length > 0 or Transfer-Encoding). */
  hasBody: boolean;
  /** The Content-Length value (node:http accepts one, of digits only); -1 when absent. */
  contentLength: number;
}

const DROP = 1;
const HOST = 2;
const XFF = 3;
const CONNECTION = 4;
const CONTENT_LENGTH = 5;
const TRANSFER_ENCODING = 6;

/** Classifies a request header name; 0 means "copy as is". Lower-cases only names of suspect length. */
function requestKind(name: string): number {
  const kind = knownRequestKind(name);
  return kind === 0 && isProxyPrefixed(name) ? DROP : kind;
}

function knownRequestKind(name: string): number {
  switch (name.length) {
    case 2:
      return name.toLowerCase() === 'te' ? DROP : 0;
    case 4:
      return isNamed(name, 'host', 'Host') ? HOST : 0;
    case 6:
      // undici refuses `expect`; 100-continue is answered by this server, not relayed.
      return name.toLowerCase() === 'expect' ? DROP : 0;
    case 7: {
      const lower = name.toLowerCase();
      return lower === 'trailer' || lower === 'upgrade' ? DROP : 0;
    }
    case 10:
      if (isNamed(name, 'connection', 'Connection')) return CONNECTION;
      return name.toLowerCase() === 'keep-alive' ? DROP : 0;
    case 14:
      return isNamed(name, 'content-length', 'Content-Length') ? CONTENT_LENGTH : 0;
    case 15:
      return name.toLowerCase() === 'x-forwarded-for' ? XFF : 0;
    case 16:
      return name.toLowerCase() === 'x-forwarded-host' ? DROP : 0;
    case 17: {
      const lower = name.toLowerCase();
      if (lower === 'transfer-encoding') return TRANSFER_ENCODING;
      return lower === 'x-forwarded-proto' ? DROP : 0;
    }
  }
  return 0;
}

/** `name` is `lower` in any case; its two usual spellings are matched without making a lower-cased copy. */
function isNamed(name: string, lower: string, usual: string): boolean {
  return name === usual || name === lower || name.toLowerCase() === lower;
}

function isProxyPrefixed(name: string): boolean {
  const c = name.charCodeAt(0) | 0x20;
  return c === 0x70 /* p */ && name.length > 6 && name.slice(0, 6).toLowerCase() === 'proxy-';
}

/** Connection tokens other than close/keep-alive, lower-cased; null when there are none (the usual case). */
function connectionTokens(value: string, into: string[] | null): string[] | null {
  // the usual values name no header: skip the split
  if (value.length === 10 || value.length === 5) {
    const lower = value.toLowerCase();
    if (lower === 'keep-alive' || lower === 'close') return into;
  }
  for (const part of value.split(',')) {
    const token = part.trim().toLowerCase();
    if (token === '' || token === 'close' || token === 'keep-alive') continue;
    into ??= [];
    into.push(token);
  }
  return into;
}

function withoutNamed(headers: string[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < headers.length; i += 2) {
    if (!names.includes(headers[i]!.toLowerCase())) out.push(headers[i]!, headers[i + 1]!);
  }
  return out;
}

/**
 * What the decision reads of the head before anything is forwarded: a request answered or refused
 * never has its headers rewritten.
 */
export function readRequestFacts(rawHeaders: readonly string[], facts: RequestHeaderFacts): void {
  for (let i = 0; i < rawHeaders.length; i += 2) {
    switch (knownRequestKind(rawHeaders[i]!)) {
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

/**
 * The headers to send upstream, as a flat list: the client's but the hop-by-hop ones, then
 * X-Forwarded-For (the incoming list and `remoteAddr`, the final `$remote_addr`), -Proto and -Host
 * (`host`: the request's Host, from `readRequestFacts`).
 */
export function upstreamRequestHeaders(
  rawHeaders: readonly string[],
  host: string,
  remoteAddr: string,
  scheme: string,
): string[] {
  let out: string[] = [];
  let named: string[] | null = null;
  let forwardedFor = '';
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    switch (requestKind(name)) {
      case 0:
      case HOST:
      case CONTENT_LENGTH:
        out.push(name, rawHeaders[i + 1]!);
        break;
      case XFF:
        forwardedFor = forwardedFor === '' ? rawHeaders[i + 1]! : `${forwardedFor}, ${rawHeaders[i + 1]!}`;
        break;
      case CONNECTION:
        named = connectionTokens(rawHeaders[i + 1]!, named);
        break;
    }
  }
  if (named !== null) {
    // `Connection: Host` does not take the Host the request was routed by away from the server (it
    // would get its own address instead; nginx passes Host on whatever Connection names)
    out = withoutNamed(
      out,
      named.filter((token) => token !== 'host'),
    );
  }
  out.push(
    'x-forwarded-for',
    forwardedFor === '' ? remoteAddr : `${forwardedFor}, ${remoteAddr}`,
    'x-forwarded-proto',
    scheme,
  );
  if (host !== '') out.push('x-forwarded-host', host);
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

/** The upstream response headers to relay to the client, as a flat list of strings. */
export function clientResponseHeaders(rawHeaders: readonly (Buffer | string)[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = latin1(rawHeaders[i]!);
    // a dropped header's value is not read (Date and Keep-Alive come with nearly every answer)
    if (!responseDropped(name)) out.push(name, latin1(rawHeaders[i + 1]!));
  }
  return out;
}

/**
 * The headers relayed with a 101 (Switching Protocols): `Connection: upgrade`, as nginx's header
 * filter writes it, then the upstream's as for any response (its `Upgrade` among them, in its place).
 */
export function switchingProtocolsHeaders(rawHeaders: readonly string[]): string[] {
  const out = ['Connection', 'upgrade'];
  for (const header of clientResponseHeaders(rawHeaders)) out.push(header);
  return out;
}
