/**
 * A request body on its way from the client to a server. With nginx's `proxy_request_buffering on` it
 * is read whole before any server is contacted: a client that stalls its body holds no upstream
 * connection, and the body can go to the next server if the first fails. It stays in memory when it
 * fits nginx's body buffer (`$request_body`), else it goes to a file (body-file.ts,
 * `$request_body_file`), as does every body under `client_body_in_file_only`. With `off` it streams.
 * Either way `client_body_timeout` runs between the client's reads: a client that sends nothing of its
 * body for that long is timed out (nginx: 408, the connection closed without an answer). A body held
 * back because the server takes nothing more is not the client's wait (`proxy_send_timeout`'s).
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BodyTempPath, ClientTimers } from '../../../engine/http/client-timers.ts';
import type { ClientBodyStream } from '../contract/client-request.ts';
import type { ClientFault } from '../contract/decision.ts';
import { containFault, failpoint } from '../contract/fault-boundary.ts';
import type { ProgressRecord } from '../contract/request-progress.ts';
import { BodyFile } from './body-file.ts';

/** Where a body read whole is kept: in memory up to `memoryBytes`, else in a file. */
export interface BodyKeeping {
  /** The most a body kept in memory may have; -1: every body goes to a file. */
  readonly memoryBytes: number;
  readonly tempPath: BodyTempPath;
  /** `client_body_in_file_only`: whether the file stays after the request (`on`) or goes (`clean`). */
  readonly fileOnly: 'off' | 'on' | 'clean';
}

function onTimer(body: ClientBody): void {
  try {
    failpoint('timer');
    body.timerFired();
  } catch (error) {
    const socket = body.req.socket ?? null;
    containFault('timer', error, socket, socket);
  }
}

/**
 * nginx's rule for where a body read whole stays (ngx_http_read_client_request_body): a body whose
 * length is known stays in memory when it is under `client_body_buffer_size` and a quarter, the buffer
 * then being made to its size; a chunked one while it fits the buffer.
 */
export function bodyKeeping(timers: ClientTimers, contentLength: number): BodyKeeping {
  const size = timers.bodyBufferBytes;
  const memoryBytes =
    timers.bodyInFileOnly !== 'off'
      ? -1
      : contentLength === -1
        ? size
        : contentLength < size + (size >> 2)
          ? contentLength
          : 0;
  // without `client_body_temp_path`, the system's temporary folder
  const tempPath = timers.bodyTempPath ?? { path: join(tmpdir(), 'limitswitch-client-body'), levels: [] };
  return { memoryBytes, tempPath, fileOnly: timers.bodyInFileOnly };
}

export class ClientBody {
  readonly req: ClientBodyStream;
  /** The whole body, once read first into memory (null while it is read, when it streams or went to a file). */
  buffered: Buffer | null = null;
  /** The file it went to (read whole, too large for memory or `client_body_in_file_only`); null: none. */
  file: BodyFile | null = null;
  /** What had come of a body that streams when the request went (sent with the head). */
  preread: Buffer | null = null;
  /** The read of its file going to a server now. */
  sending: ClientBodyStream | null = null;
  readonly #timeoutMs: number;
  /** `client_max_body_size` for a chunked body, counted as it goes out (0: no limit), and what went. */
  readonly #maxBytes: number;
  #sentBytes = 0;
  /** The client's fault: nothing of the body within the timeout (408), a chunked one too large (413). */
  readonly #failed: (code: number, fault: ClientFault | null) => void;
  #timer: NodeJS.Timeout | null = null;
  #stopReading: (() => void) | null = null;

  constructor(
    req: ClientBodyStream,
    timeoutMs: number,
    maxBytes: number,
    failed: (code: number, fault: ClientFault | null) => void,
  ) {
    this.req = req;
    this.#timeoutMs = timeoutMs;
    this.#maxBytes = maxBytes;
    this.#failed = failed;
  }

  /**
   * Reads the whole body into memory or a file as `keeping` says, then calls `ready` (not if `stop()`
   * came first). With `unbuffered` (nginx's `proxy_request_buffering off`) only what has come already
   * is read, as nginx reads what the socket holds: a body whole by then is kept all the same, else
   * what came is `preread` and `unbuffered` is called, the rest to stream after it.
   */
  readWhole(
    keeping: BodyKeeping,
    progress: ProgressRecord | undefined,
    ready: () => void,
    unbuffered?: () => void,
  ): void {
    let chunks: Buffer[] = [];
    let bytes = 0;
    const req = this.req;
    const toFile = (): BodyFile => {
      const file = new BodyFile(keeping.tempPath, keeping.fileOnly);
      this.file = file;
      for (const chunk of chunks) file.write(chunk);
      chunks = [];
      return file;
    };
    // what the client sent so far has been read by the end of this turn of the event loop
    const available =
      unbuffered === undefined
        ? null
        : setImmediate(() => {
            this.stop();
            req.pause();
            this.preread = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
            unbuffered();
          });
    if (keeping.memoryBytes < 0 && available === null) toFile();
    const onData = (chunk: Buffer): void => {
      this.#timer?.refresh();
      const fault = this.#counted(chunk);
      if (fault !== null) {
        if (available !== null) clearImmediate(available);
        this.stop();
        this.#failed(413, fault);
        return;
      }
      bytes += chunk.length;
      if (this.file === null && bytes > keeping.memoryBytes && available === null) toFile();
      if (this.file !== null) this.file.write(chunk);
      else chunks.push(chunk);
    };
    const onEnd = (): void => {
      this.stop();
      if (available !== null) {
        clearImmediate(available);
        if (bytes > keeping.memoryBytes) toFile();
      }
      if (this.file === null) this.buffered = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
      progress?.keptBody(this.buffered, this.file?.name ?? '');
      ready();
    };
    req.on('data', onData);
    req.on('end', onEnd);
    this.#stopReading = () => {
      req.off('data', onData);
      req.off('end', onEnd);
    };
    this.#arm();
  }

  /** The body streams to the server from now on: its timer runs while the client is read. */
  streaming(): void {
    this.#arm();
  }

  /** `chunk` of it went on; the client's fault when that passed `client_max_body_size` (else null). */
  progressed(chunk: Buffer): ClientFault | null {
    this.#timer?.refresh();
    // a body read whole was counted as it was read
    return this.buffered === null && this.file === null ? this.#counted(chunk) : null;
  }

  #counted(chunk: Buffer): ClientFault | null {
    if (this.#maxBytes === 0) return null;
    const before = this.#sentBytes;
    this.#sentBytes += chunk.length;
    if (this.#sentBytes <= this.#maxBytes) return null;
    // nginx checks each chunk's declared size as it reads it (bytes so far + this chunk); the
    // parser hands over data, not chunk sizes, so the second figure is the piece that passed.
    return {
      level: 'error',
      message: `client intended to send too large chunked body: ${before}+${chunk.length} bytes`,
    };
  }

  /** The body for one try of a server: in memory, its file read afresh, or null (it streams). */
  outgoing(): Buffer | ClientBodyStream | null {
    if (this.file === null) return this.buffered;
    this.sending = this.file.stream();
    return this.sending;
  }

  /** Read whole first, into memory or a file (else it streams, or is still being read). */
  get whole(): boolean {
    return this.buffered !== null || this.file !== null;
  }

  /** The request is over: a file it went to is closed (and removed, unless nginx keeps it). */
  release(): void {
    this.stop();
    this.file?.release();
  }

  /** It all arrived, or the request is over: no timer, nothing more read for it here. */
  stop(): void {
    this.#stopReading?.();
    this.#stopReading = null;
    if (this.#timer === null) return;
    clearTimeout(this.#timer);
    this.#timer = null;
  }

  #arm(): void {
    if (this.#timer === null && this.#timeoutMs > 0) this.#timer = setTimeout(onTimer, this.#timeoutMs, this);
  }

  /** @internal nothing of the body came within the timeout. */
  timerFired(): void {
    if (this.#timer === null) return;
    // paused by the stream to a server that takes nothing more: that wait is the server's
    if (this.buffered === null && this.file === null && this.#stopReading === null && this.req.isPaused()) {
      this.#timer.refresh();
      return;
    }
    this.#timer = null;
    this.stop();
    this.#failed(408, null);
  }
}
