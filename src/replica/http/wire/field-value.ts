/**
 * What a header field value (and a reason phrase) may hold on the wire — RFC 9110 §5.5: HTAB, SP,
 * visible ASCII and obs-text (0x80–0xff, as llhttp reads it) — and how a value made from request data
 * is kept to it.
 */

/** `text[from, to)` may be (part of) a field value: no controls but HTAB (obs-text allowed). */
export function isFieldValue(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if ((c < 0x20 && c !== 0x09) || c === 0x7f || c > 0xff) return false;
  }
  return true;
}

/**
 * A URI made from request data as one field value (a `return` redirect with a decoded `$uri`): each
 * character a field value cannot hold is percent-encoded (its UTF-8 bytes), so `%0d%0a` sent in a
 * URI stays inside the Location header instead of ending it. nginx writes such bytes raw, which
 * splits the response (header injection); node:http refuses to write them at all.
 */
export function uriFieldValue(value: string): string {
  if (isFieldValue(value, 0, value.length)) return value;
  let out = '';
  for (const ch of value) {
    const c = ch.codePointAt(0)!;
    if ((c < 0x20 && c !== 0x09) || c === 0x7f || c > 0xff) {
      for (const byte of Buffer.from(ch, 'utf8'))
        out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    } else out += ch;
  }
  return out;
}
