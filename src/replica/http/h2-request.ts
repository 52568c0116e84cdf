/**
 * An HTTP/2 stream as the exchange sees a request: node:http2's compatibility objects, with the
 * request's head in HTTP/1.1's shape — `:authority` as `Host`, no pseudo-headers, the cookie
 * crumbs joined (RFC 9113 §8.2.3; nginx joins them with "; ") — and a response that leaves out what
 * HTTP/2 forbids (the connection-specific headers and the reason phrase). A body without a length
 * is marked as chunked, so it is forwarded as one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { ClientRequestHead } from './decision.ts';

/** The request came on an HTTP/2 stream (not an HTTP/1 request line that says `HTTP/2.0`). */
export function isH2Request(req: ClientRequestHead): boolean {
  return (req as ClientRequestHead & { stream?: unknown }).stream !== undefined;
}

/** Connection-specific fields (RFC 9113 §8.2.2): a response carrying them is malformed in h2. */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

export function h2Head(req: Http2ServerRequest): string[] {
  const raw = req.rawHeaders;
  const out: string[] = [];
  let authority: string | null = null;
  let hasHost = false;
  let cookies: string | null = null;
  let hasLength = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const value = raw[i + 1]!;
    if (name.charCodeAt(0) === 58 /* ':' */) {
      if (name === ':authority') authority = value;
      continue;
    }
    if (name === 'cookie') {
      cookies = cookies === null ? value : `${cookies}; ${value}`;
      continue;
    }
    if (name === 'host') hasHost = true;
    else if (name === 'content-length') hasLength = true;
    out.push(name, value);
  }
  if (!hasHost && authority !== null) out.unshift('host', authority);
  if (cookies !== null) out.push('cookie', cookies);
  if (!hasLength && !req.stream.endAfterHeaders) out.push('transfer-encoding', 'chunked');
  return out;
}

/** A flat header list as an HTTP/2 response may carry it. */
function h2Headers(headers: readonly string[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!.toLowerCase();
    if (CONNECTION_SPECIFIC.has(name)) continue;
    const value = headers[i + 1]!;
    const seen = out[name];
    out[name] = seen === undefined ? value : Array.isArray(seen) ? [...seen, value] : [seen, value];
  }
  return out;
}

const writeHead = Http2ServerResponse.prototype.writeHead as (
  this: Http2ServerResponse,
  status: number,
  headers: Record<string, string | string[]>,
) => Http2ServerResponse;

/** `writeHead(status, reason, flatHeaders)` as the exchange calls it, for a stream. */
function h2WriteHead(
  this: Http2ServerResponse,
  status: number,
  _reason: string,
  headers?: readonly string[],
): Http2ServerResponse {
  return writeHead.call(this, status, headers === undefined ? {} : h2Headers(headers));
}

/**
 * The stream's request and response, shaped for the exchange. The head is computed once here (the
 * exchange and the engine read `rawHeaders` and `headers` several times).
 */
export function adaptH2(
  req: Http2ServerRequest,
  res: Http2ServerResponse,
): [IncomingMessage, ServerResponse] {
  const raw = h2Head(req);
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    headers[name] = headers[name] === undefined ? raw[i + 1]! : `${headers[name]}, ${raw[i + 1]}`;
  }
  Object.defineProperty(req, 'rawHeaders', { value: raw });
  Object.defineProperty(req, 'headers', { value: headers });
  Object.defineProperty(res, 'writeHead', { value: h2WriteHead });
  return [req as unknown as IncomingMessage, res as unknown as ServerResponse];
}
