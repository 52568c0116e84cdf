/**
 * A request body kept in a file, as ngx_create_temp_file makes one: in `client_body_temp_path`, under
 * its levels of subfolders (named by the file name's last digits, ngx_create_hashed_filename), a
 * 10-digit number for a name, opened with O_EXCL (a number taken gives the next one), the folders made
 * when missing. The writes are blocking, as nginx's are. A file nginx does not keep (a body too large
 * for memory under `client_body_in_file_only off`) is unlinked as soon as it is open
 * (ngx_open_tempfile): `$request_body_file` names it, and nothing can open it. `clean` removes the file
 * when the request is over; `on` leaves it.
 */
import { closeSync, mkdirSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import type { BodyTempPath } from '../../../engine/http/client-timers.ts';
import type { ClientBodyStream } from '../contract/client-request.ts';

/** ngx_temp_number: the next file's number, shared by every request of the thread. */
let tempNumber = Math.floor(Math.random() * 1_000_000);

/** The file's name: the path, each level's folder, then the number in 10 digits. */
export function tempFileName(temp: BodyTempPath, n: number): string {
  const digits = String(n >>> 0).padStart(10, '0');
  let end = digits.length;
  let folders = '';
  for (const level of temp.levels) {
    folders += `/${digits.slice(end - level, end)}`;
    end -= level;
  }
  return `${temp.path}${folders}/${digits}`;
}

/** A piece read back from the file at a time. */
const READ_BYTES = 64 * 1024;

/** A file's body read back as the upstream client streams one (no client connection behind it). */
type FileBodyStream = ClientBodyStream & Readable;

export class BodyFile {
  readonly name: string;
  /** What was written so far. */
  bytes = 0;
  readonly #fd: number;
  readonly #clean: boolean;
  #closed = false;

  /** `keep`: `on` or `clean` (`client_body_in_file_only`); `off` unlinks it at once. */
  constructor(temp: BodyTempPath, keep: 'off' | 'on' | 'clean') {
    for (;;) {
      const name = tempFileName(temp, ++tempNumber);
      try {
        this.#fd = openSync(name, 'wx+', 0o600);
        this.name = name;
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EEXIST') continue;
        if (code !== 'ENOENT') throw error;
        mkdirSync(dirname(name), { recursive: true, mode: 0o700 });
        tempNumber--;
      }
    }
    if (keep === 'off') unlinkSync(this.name);
    this.#clean = keep === 'clean';
  }

  write(chunk: Buffer): void {
    let done = 0;
    while (done < chunk.length)
      done += writeSync(this.#fd, chunk, done, chunk.length - done, this.bytes + done);
    this.bytes += chunk.length;
  }

  /**
   * The whole file, from its start, for one try of a server: read in pieces as the upstream socket
   * takes them, blocking (as nginx reads it back), so the file can be closed at any time.
   */
  stream(): FileBodyStream {
    let position = 0;
    const reader: Readable = new Readable({
      read: () => {
        if (this.#closed) {
          reader.destroy();
          return;
        }
        const length = Math.min(READ_BYTES, this.bytes - position);
        if (length === 0) {
          reader.push(null);
          return;
        }
        const piece = Buffer.allocUnsafe(length);
        const read = readSync(this.#fd, piece, 0, length, position);
        position += read;
        reader.push(read === length ? piece : piece.subarray(0, read));
      },
    });
    return Object.assign(reader, { socket: null });
  }

  /** The request is over: the file is closed, and removed when `clean`. */
  release(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeFile();
  }

  #closeFile(): void {
    closeSync(this.#fd);
    if (!this.#clean) return;
    try {
      unlinkSync(this.name);
    } catch {
      // gone already: nothing to clean
    }
  }
}
