/**
 * A request body on its way from the client to a server. One that fits `client_body_buffer_size` is
 * read whole before any server is contacted (nginx's `proxy_request_buffering on`): a client that
 * stalls its body holds no upstream connection, and the body can go to the next server if the first
 * fails. A larger one (or a chunked one) streams, as with nginx's `proxy_request_buffering off`.
 * Either way `client_body_timeout` runs between the client's reads: a client that sends nothing of its
 * body for that long is timed out (nginx: 408, the connection closed without an answer). A body held
 * back because the server takes nothing more is not the client's wait (`proxy_send_timeout`'s).
 */
import type { ClientBodyStream } from '../contract/client-request.ts';
import type { ClientFault } from '../contract/decision.ts';
import { containFault, failpoint } from '../contract/fault-boundary.ts';

function onTimer(body: ClientBody): void {
  try {
    failpoint('timer');
    body.timerFired();
  } catch (error) {
    const socket = body.req.socket ?? null;
    containFault('timer', error, socket, socket);
  }
}

export class ClientBody {
  readonly req: ClientBodyStream;
  /** The whole body, once read first (null while it is read, or when it streams). */
  buffered: Buffer | null = null;
  readonly #timeoutMs: number;
  /** `client_max_body_size` for a chunked body, counted as it goes out (0: no limit), and what went. */
  readonly #maxBytes: number;
  #sentBytes = 0;
  readonly #timedOut: () => void;
  #timer: NodeJS.Timeout | null = null;
  #stopReading: (() => void) | null = null;

  constructor(req: ClientBodyStream, timeoutMs: number, maxBytes: number, timedOut: () => void) {
    this.req = req;
    this.#timeoutMs = timeoutMs;
    this.#maxBytes = maxBytes;
    this.#timedOut = timedOut;
  }

  /** Reads the whole body, then calls `ready` (not if `stop()` came first). */
  readWhole(ready: () => void): void {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const req = this.req;
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      bytes += chunk.length;
      this.#timer?.refresh();
    };
    const onEnd = (): void => {
      this.stop();
      this.buffered = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, bytes);
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
    if (this.buffered === null && this.#stopReading === null && this.req.isPaused()) {
      this.#timer.refresh();
      return;
    }
    this.#timer = null;
    this.stop();
    this.#timedOut();
  }
}
