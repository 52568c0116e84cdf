/**
 * A file answer's body as a stream: its pieces in order, the file's ranges read as they are sent
 * (never the whole file at once); the file is closed when the stream ends or is destroyed.
 */
import { closeSync, createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { BodyPiece } from '../contract/decision.ts';

async function* pieces(fd: number, body: readonly BodyPiece[]): AsyncGenerator<Buffer> {
  try {
    for (const piece of body) {
      if (typeof piece === 'string') yield Buffer.from(piece, 'latin1');
      else if (piece.end > piece.start)
        yield* createReadStream('', { fd, start: piece.start, end: piece.end - 1, autoClose: false });
    }
  } finally {
    closeSync(fd);
  }
}

/** null when there is no body to send (the file, if any, was closed already). */
export function fileBody(fd: number, body: readonly BodyPiece[] | null): Readable | null {
  if (body === null) return null;
  return Readable.from(pieces(fd, body), { objectMode: false });
}
