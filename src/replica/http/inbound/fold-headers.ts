/**
 * node:http's rule for a request's `headers` object (what `IncomingMessage` does with each header
 * line), written out so that requests the replica reads itself fold duplicates exactly as node:http's
 * do: the fields below keep their first value, `set-cookie` becomes a list, `cookie` values are
 * joined with "; ", every other field's with ", ". Names are lower-cased.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Fields of which node:http keeps the first line and drops the others. */
const FIRST_ONLY: ReadonlySet<string> = new Set([
  'age',
  'authorization',
  'content-length',
  'content-type',
  'etag',
  'expires',
  'from',
  'host',
  'if-modified-since',
  'if-unmodified-since',
  'last-modified',
  'location',
  'max-forwards',
  'proxy-authorization',
  'referer',
  'retry-after',
  'server',
  'user-agent',
]);

/** `[name, value, …]` as received, folded into node:http's `headers`. */
export function foldHeaders(rawHeaders: readonly string[]): IncomingHttpHeaders {
  const headers: Record<string, string | string[]> = {};
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    const value = rawHeaders[i + 1]!;
    const seen = headers[name];
    if (name === 'set-cookie') {
      if (seen === undefined) headers[name] = [value];
      else (seen as string[]).push(value);
    } else if (seen === undefined) headers[name] = value;
    else if (!FIRST_ONLY.has(name)) headers[name] = `${seen}${name === 'cookie' ? '; ' : ', '}${value}`;
  }
  return headers;
}
