/**
 * ngx_http_range_filter_module's reading of `Range` for a 200 answer of known length: the whole
 * answer (no or foreign `Range`, a stale `If-Range`, ranges that add up to more than the file), the
 * ranges to send (206), or 416. nginx's default `max_ranges` (no limit).
 */
import { parseHttpTime } from './http-time.ts';
import type { HeaderOf, Validators } from './preconditions.ts';

/** `[start, end)` of the file. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export type RangeOutcome =
  | { readonly kind: 'whole' }
  | { readonly kind: 'partial'; readonly ranges: readonly ByteRange[] }
  | { readonly kind: 'unsatisfiable' };

const WHOLE: RangeOutcome = Object.freeze({ kind: 'whole' });
const UNSATISFIABLE: RangeOutcome = Object.freeze({ kind: 'unsatisfiable' });

export function byteRanges(header: HeaderOf, v: Validators, size: number): RangeOutcome {
  const range = header('range');
  if (range === undefined || range.length < 7 || range.slice(0, 6).toLowerCase() !== 'bytes=') return WHOLE;
  const ifRange = header('if-range');
  if (ifRange !== undefined) {
    if (ifRange.length >= 2 && ifRange.endsWith('"')) {
      if (ifRange !== v.etag) return WHOLE;
    } else if (parseHttpTime(ifRange) !== v.mtimeS) return WHOLE;
  }
  return parseRanges(range, size);
}

const MAX_OFF_T = 2n ** 63n - 1n;

/** ngx_http_range_parse from after `bytes=`; the value ends as nginx's NUL-terminated one does. */
export function parseRanges(value: string, size: number): RangeOutcome {
  const at = (i: number): string => (i < value.length ? value[i]! : '\0');
  const isDigit = (c: string): boolean => c >= '0' && c <= '9';
  const ranges: ByteRange[] = [];
  let total = 0;
  let p = 6;
  for (;;) {
    let start = 0n;
    let end = 0n;
    let suffix = false;
    let openEnded = false;
    while (at(p) === ' ') p++;
    if (at(p) !== '-') {
      if (!isDigit(at(p))) return UNSATISFIABLE;
      while (isDigit(at(p))) {
        start = start * 10n + BigInt(at(p++).charCodeAt(0) - 48);
        if (start > MAX_OFF_T) return UNSATISFIABLE;
      }
      while (at(p) === ' ') p++;
      if (at(p++) !== '-') return UNSATISFIABLE;
      while (at(p) === ' ') p++;
      if (at(p) === ',' || at(p) === '\0') {
        end = BigInt(size);
        openEnded = true;
      }
    } else {
      suffix = true;
      p++;
    }
    if (!openEnded) {
      if (!isDigit(at(p))) return UNSATISFIABLE;
      while (isDigit(at(p))) {
        end = end * 10n + BigInt(at(p++).charCodeAt(0) - 48);
        if (end > MAX_OFF_T) return UNSATISFIABLE;
      }
      while (at(p) === ' ') p++;
      if (at(p) !== ',' && at(p) !== '\0') return UNSATISFIABLE;
      const length = BigInt(size);
      if (suffix) {
        start = end < length ? length - end : 0n;
        end = length - 1n;
      }
      end = end >= length ? length : end + 1n;
    }
    if (start < end) {
      ranges.push({ start: Number(start), end: Number(end) });
      total += Number(end - start);
    } else if (start === 0n) return WHOLE;
    if (at(p++) !== ',') break;
  }
  if (ranges.length === 0) return UNSATISFIABLE;
  if (total > size) return WHOLE;
  return { kind: 'partial', ranges };
}
