/**
 * The `add_header` fields put into a head the replica writes (engine/http/add-headers.ts), each value
 * kept to one field value as a `return` URL is (field-value.ts): nginx writes the CR LF of a decoded
 * `$uri` raw, which splits the response; node:http refuses to write it at all.
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
): void {
  if (lines !== null) addFields(headers, lines.forStatus(status), own ? OWN_ANSWER : RELAYED_ANSWER);
}
