/**
 * `add_header` as ngx_http_headers_filter adds it, once the answer's head is known: only to answers
 * with a status nginx deems safe unless `always`, each value evaluated for the request, an empty value
 * adding nothing, a name already present added again. `ETag` and `Last-Modified` have their own
 * handlers there: they replace the answer's field, and an empty value removes it. `expires` goes
 * first (expires.ts); the answer's rate (answer-rate.ts) is bound with the lines, to the same request.
 */

import type { RequestContext } from '../variables/request-context.ts';
import type { VariableGetter } from '../variables/variable-table.ts';
import { type AnswerRate, answerRate, type CompiledAnswerRate } from './answer-rate.ts';
import { type AnswerClock, type CompiledExpires, expiresFields } from './expires.ts';

/** One `add_header` line, compiled. */
export interface CompiledAddHeader {
  readonly name: string;
  /** null: written empty. */
  readonly value: VariableGetter | null;
  readonly always: boolean;
  /** `ETag`, `Last-Modified` (ngx_http_set_response_header): the answer's field is replaced. */
  readonly replaces: boolean;
}

/** A field to put into an answer's head; `replaces` with an empty value removes the field. */
export interface AddedField {
  readonly name: string;
  readonly value: string;
  readonly replaces: boolean;
  /** `expires`'s Cache-Control: written over the answer's first such field, the others dropped. */
  readonly sole?: boolean;
}

/**
 * The `add_header` lines, `expires` and the rate in force for one request, bound to it: asked once
 * the status is known (with the answer's clock, for `expires`), and when the body starts.
 */
export interface AnswerHeaders {
  forStatus(status: number, clock?: AnswerClock): readonly AddedField[];
  /** The rate of the answer's body; `setRate`: an upstream's X-Accel-Limit-Rate, else none (null). */
  rate(setRate: number | null): AnswerRate;
}

/** What a location gives every answer (location-handler.ts). */
export interface AnswerFilters {
  readonly addHeaders: readonly CompiledAddHeader[];
  readonly expires: CompiledExpires | null;
  readonly answerRate: CompiledAnswerRate;
}

/** The statuses ngx_http_headers_filter adds to without `always`. */
const SAFE_STATUSES: ReadonlySet<number> = new Set([200, 201, 204, 206, 301, 302, 303, 304, 307, 308]);

/** The names with a handler of their own in ngx_http_set_headers that replaces rather than adds. */
const REPLACING: ReadonlySet<string> = new Set(['etag', 'last-modified']);

export function compileAddHeader(
  name: string,
  value: VariableGetter | null,
  always: boolean,
): CompiledAddHeader {
  return { name, value, always, replaces: REPLACING.has(name.toLowerCase()) };
}

/** The filters bound to the request's context; null when they would do nothing. */
export function bindAddHeaders(filters: AnswerFilters, ctx: RequestContext): AnswerHeaders | null {
  const { addHeaders, expires, answerRate: rate } = filters;
  const rated = rate.limitRate !== null || rate.limitRateAfter !== null || ctx.limitRate !== null;
  if (addHeaders.length === 0 && expires === null && !rated) return null;
  return {
    forStatus: (status, clock) => addedFields(filters, ctx, status, clock),
    rate: (setRate) => answerRate(rate, ctx, setRate ?? ctx.limitRate),
  };
}

/** What the filters add to an answer with `status`: `expires`'s fields, then the lines in their order. */
export function addedFields(
  filters: Pick<AnswerFilters, 'addHeaders' | 'expires'>,
  ctx: RequestContext,
  status: number,
  clock?: AnswerClock,
): AddedField[] {
  const safe = SAFE_STATUSES.has(status);
  const fields: AddedField[] = [];
  const expires =
    safe && filters.expires !== null && clock !== undefined
      ? expiresFields(filters.expires, ctx, clock)
      : null;
  if (expires !== null) {
    // ngx_http_set_expires: the answer's Expires (the last, which headers_out points at) is replaced
    fields.push({ name: 'Expires', value: expires.expires, replaces: true });
    fields.push({ name: 'Cache-Control', value: expires.cacheControl, replaces: true, sole: true });
  }
  for (const line of filters.addHeaders) {
    if (!safe && !line.always) continue;
    const value = line.value === null ? '' : line.value(ctx);
    if (value === '' && !line.replaces) continue;
    fields.push({ name: line.name, value, replaces: line.replaces });
  }
  return fields;
}

/** How `addFields` writes into a head. */
export interface FieldWriting {
  /**
   * The answer's `Last-Modified` is not a field of nginx's list but the header filter's, from a time
   * (a file's): a replacement goes with the added fields.
   */
  readonly filterLastModified: boolean;
  /** A value as the head can hold it. */
  readonly fieldValue: (value: string) => string;
}

/**
 * Puts `added` into a head's `[name, value, …]` list: appended, or for a replacing name written over
 * the answer's own field in its place (the last one, which nginx's `headers_out` points at), which an
 * empty value removes.
 */
export function addFields(headers: string[], added: readonly AddedField[], writing: FieldWriting): void {
  const { filterLastModified, fieldValue } = writing;
  for (const field of added) {
    const value = fieldValue(field.value);
    let at =
      field.sole === true
        ? firstOnly(headers, field.name)
        : field.replaces
          ? lastIndexOfName(headers, field.name)
          : -1;
    if (at !== -1 && filterLastModified && field.name.toLowerCase() === 'last-modified') {
      headers.splice(at, 2);
      at = -1;
    }
    if (at === -1) {
      if (value !== '') headers.push(field.name, value);
    } else if (value === '') headers.splice(at, 2);
    else headers.splice(at, 2, field.name, value);
  }
}

/** Drops every field named `name` but the first, whose index it gives (-1: none). */
function firstOnly(headers: string[], name: string): number {
  const lower = name.toLowerCase();
  let first = -1;
  for (let i = 0; i < headers.length; ) {
    if (headers[i]!.toLowerCase() !== lower) i += 2;
    else if (first === -1) {
      first = i;
      i += 2;
    } else headers.splice(i, 2);
  }
  return first;
}

function lastIndexOfName(headers: readonly string[], name: string): number {
  const lower = name.toLowerCase();
  for (let i = headers.length - 2; i >= 0; i -= 2) if (headers[i]!.toLowerCase() === lower) return i;
  return -1;
}
