/**
 * ngx_http_not_modified_filter_module on a 200 answer from disk: `If-Unmodified-Since` and
 * `If-Match` failing make 412; then `If-Modified-Since` (nginx's default `if_modified_since exact`)
 * and `If-None-Match` (weak comparison) both holding make 304.
 */
import { parseHttpTime } from './http-time.ts';

/** What the request's preconditions make of the answer: sent (200), 304 or 412. */
export type PreconditionOutcome = 200 | 304 | 412;

export interface Validators {
  /** Last-Modified, seconds. */
  readonly mtimeS: number;
  /** The ETag as sent, `"…"`. */
  readonly etag: string;
}

/** The first value of a header as nginx keeps it (the first line of a repeated one). */
export type HeaderOf = (lowerName: string) => string | undefined;

export function preconditions(header: HeaderOf, v: Validators): PreconditionOutcome {
  const ius = header('if-unmodified-since');
  if (ius !== undefined && !(parseHttpTime(ius) >= v.mtimeS)) return 412;
  const ifMatch = header('if-match');
  if (ifMatch !== undefined && !etagListHas(ifMatch, v.etag, false)) return 412;
  const ims = header('if-modified-since');
  const inm = header('if-none-match');
  if (ims === undefined && inm === undefined) return 200;
  if (ims !== undefined && parseHttpTime(ims) !== v.mtimeS) return 200;
  if (inm !== undefined && !etagListHas(inm, v.etag, true)) return 200;
  return 304;
}

const isBlank = (c: string | undefined): boolean => c === ' ' || c === '\t';

/** ngx_http_test_if_match: `*`, or the ETag among the list's entries (`W/` dropped when weak). */
export function etagListHas(list: string, etagSent: string, weak: boolean): boolean {
  if (list === '*') return true;
  let etag = etagSent;
  if (weak && etag.length > 2 && etag.startsWith('W/')) etag = etag.slice(2);
  const end = list.length;
  let p = 0;
  while (p < end) {
    if (weak && end - p > 2 && list[p] === 'W' && list[p + 1] === '/') p += 2;
    if (etag.length > end - p) return false;
    if (list.startsWith(etag, p)) {
      p += etag.length;
      while (p < end && isBlank(list[p])) p++;
      if (p === end || list[p] === ',') return true;
    }
    while (p < end && list[p] !== ',') p++;
    while (p < end && (isBlank(list[p]) || list[p] === ',')) p++;
  }
  return false;
}
