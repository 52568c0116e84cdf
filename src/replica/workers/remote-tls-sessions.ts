/**
 * A worker thread's TLS session cache is the replica's, on the main thread (tls-sessions-desk.ts), as
 * nginx's workers share `ssl_session_cache shared`: a session one worker stored resumes at any. A
 * store is a message; a lookup waits for the main thread's answer, as the handshake waits on any
 * session lookup (it is made only for a hello that offers a session).
 */
import type { TlsSessionBackend } from '../http/edge/tls-sessions.ts';
import type { WorkerEventBatch } from './worker-events.ts';

export class RemoteTlsSessions {
  readonly #events: WorkerEventBatch;
  readonly #asked = new Map<number, (data: Buffer | null) => void>();
  readonly #byPort = new Map<number, TlsSessionBackend>();
  #lastAsk = 0;

  constructor(events: WorkerEventBatch) {
    this.#events = events;
  }

  /** The cache of one configured port (its default server's settings decide what is kept). */
  forPort(port: number): TlsSessionBackend {
    let backend = this.#byPort.get(port);
    if (backend === undefined) {
      backend = {
        store: (key, data, timeoutMs) =>
          this.#events.push({ kind: 'tls-session', op: 'store', port, key, data, timeoutMs }),
        find: (key, answer) => {
          const ask = ++this.#lastAsk;
          this.#asked.set(ask, answer);
          this.#events.push({ kind: 'tls-session', op: 'find', port, key, ask });
        },
      };
      this.#byPort.set(port, backend);
    }
    return backend;
  }

  /** The main thread's answer to a lookup. */
  answer(ask: number, data: Uint8Array | null): void {
    const answer = this.#asked.get(ask);
    this.#asked.delete(ask);
    answer?.(data === null ? null : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }
}
