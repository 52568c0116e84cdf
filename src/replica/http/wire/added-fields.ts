/**
 * The `add_header` fields put into a head the replica writes (engine/http/add-headers.ts), each value
 * kept to one field value as a `return` URL is (field-value.ts): nginx writes the CR LF of a decoded
 * `$uri` raw, which splits the response; node:http refuses to write it at all. `expires` is given
 * the time now and the answer's Last-Modified.
 */
import { type AnswerHeaders, addFields, type FieldWriting } from '../../../engine/http/add-headers.ts';
import { uriFieldValue } from './field-value.ts';

/** An answer of the replica's own: its `Last-Modified` (a file's) is the header filter's. */
const OWN_ANSWER: FieldWriting = { filterLastModified: true, fieldValue: uriFieldValue };
const RELAYED_ANSWER: FieldWriting = { filterLastModified: false, fieldValue: uriFieldValue };

export function addAnswerHeaders(
  headers: string[],
  lines: AnswerHeaders | null,
  status: number,
  own: boolean,
  nowMs: number,
): void {
  if (lines === null) return;
  const clock = { nowMs, lastModifiedMs: lastModifiedMs(headers), httpTime, nextLocalTime };
  addFields(headers, lines.forStatus(status, clock), own ? OWN_ANSWER : RELAYED_ANSWER);
}

function httpTime(epochS: number): string {
  return new Date(epochS * 1000).toUTCString();
}

/** ngx_next_time: today's `daySeconds` past local midnight if still ahead, else tomorrow's. */
function nextLocalTime(daySeconds: number, nowS: number): number {
  const at = new Date(nowS * 1000);
  at.setHours(0, 0, daySeconds, 0);
  if (at.getTime() / 1000 > nowS) return at.getTime() / 1000;
  at.setDate(at.getDate() + 1);
  at.setHours(0, 0, daySeconds, 0);
  return at.getTime() / 1000;
}

/** The answer's Last-Modified as a time (`expires modified`); NaN: none, or not a date. */
function lastModifiedMs(headers: readonly string[]): number {
  for (let i = headers.length - 2; i >= 0; i -= 2)
    if (headers[i]!.toLowerCase() === 'last-modified') return Date.parse(headers[i + 1]!);
  return Number.NaN;
}
