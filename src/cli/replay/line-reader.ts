/**
 * Reads a log file line by line, fast: big chunks, split by hand, one synchronous call per line (no
 * promise per line). Bytes are read as latin1, so a line is the byte string the engine works on (nginx
 * logs bytes, not characters). A `.gz` file is gunzipped; `-` is stdin.
 */
import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

const CHUNK_BYTES = 1 << 20;

/** Calls `onLine` for every line (without its `\n` or `\r\n`), numbered from 1; rejects on a read error. */
export async function readLines(
  path: string,
  onLine: (text: string, lineNumber: number) => void,
): Promise<number> {
  const input: Readable =
    path === '-' ? process.stdin : createReadStream(path, { highWaterMark: CHUNK_BYTES });
  const stream = path.endsWith('.gz') ? input.pipe(createGunzip()) : input;
  if (stream !== input) input.once('error', (err) => stream.destroy(err));
  stream.setEncoding('latin1');
  let rest = '';
  let lineNumber = 0;
  for await (const chunk of stream as AsyncIterable<string>) {
    const text = rest === '' ? chunk : rest + chunk;
    let start = 0;
    for (;;) {
      const end = text.indexOf('\n', start);
      if (end === -1) break;
      const stop = end > start && text.charCodeAt(end - 1) === 0x0d ? end - 1 : end;
      onLine(text.slice(start, stop), ++lineNumber);
      start = end + 1;
    }
    rest = text.slice(start);
  }
  if (rest !== '') onLine(rest.endsWith('\r') ? rest.slice(0, -1) : rest, ++lineNumber);
  return lineNumber;
}
