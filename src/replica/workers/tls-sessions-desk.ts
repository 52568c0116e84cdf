/**
 * The main thread's side of the workers' TLS session caches (remote-tls-sessions.ts): one cache per
 * configured port for all the replica's workers, kept across reloads, as nginx's `shared` zone is.
 */
import { TlsSessionCache } from '../http/edge/tls-session-cache.ts';
import type { TlsSessionRequest, WorkerCommand } from './worker-events.ts';

export class TlsSessionsDesk {
  readonly #caches = new Map<number, TlsSessionCache>();

  take(request: TlsSessionRequest, reply: (command: WorkerCommand) => void): void {
    let cache = this.#caches.get(request.port);
    if (cache === undefined) {
      cache = new TlsSessionCache();
      this.#caches.set(request.port, cache);
    }
    if (request.op === 'store') {
      cache.store(request.key, Buffer.from(request.data), request.timeoutMs);
      return;
    }
    reply({ kind: 'tls-session', ask: request.ask, data: cache.find(request.key) });
  }
}
