/**
 * node:http2 sends some field names once only (ERR_HTTP2_HEADER_SINGLE_VALUE: `content-type`,
 * `etag`, `x-content-type-options`, …) where nginx writes a field per line — an `add_header` beside
 * the server's own field of that name, say. Such a name's lines go as one field, joined with ", " as
 * a client joins repeated lines; the others stay a field each.
 */

type H2Fields = Record<string, string | string[]>;

/** `write(fields)`, again with a once-only name's lines joined each time node:http2 refuses one. */
export function writeJoiningSingles(write: (fields: H2Fields) => void, fields: H2Fields): void {
  for (;;) {
    try {
      write(fields);
      return;
    } catch (err) {
      const name = singleValueName(err);
      const lines = name === null ? undefined : fields[name];
      if (name === null || !Array.isArray(lines)) throw err;
      fields[name] = lines.join(', ');
    }
  }
}

/** The name node:http2 refused more than one value for, from its error; null for any other error. */
function singleValueName(err: unknown): string | null {
  if ((err as { code?: unknown } | null)?.code !== 'ERR_HTTP2_HEADER_SINGLE_VALUE') return null;
  return /"([^"]+)"/.exec((err as Error).message)?.[1] ?? null;
}
