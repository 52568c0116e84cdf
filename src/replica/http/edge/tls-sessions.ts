/**
 * An address's TLS sessions as its TLS servers use them: kept when `ssl_session_cache` is `builtin` or
 * `shared` (one cache here either way), nothing kept with `none` or `off` (tickets still resume unless
 * `ssl_session_tickets off`).
 *
 * TLSv1.2 resumes by session ID. TLSv1.3 with `ssl_session_tickets off` resumes as nginx's OpenSSL
 * does, by a stateful ticket: the ticket a client offers (its `pre_shared_key` identity) is the ID
 * the session was stored under. node:tls asks for a session by the hello's `legacy_session_id` alone
 * (32 random bytes in TLSv1.3's compatibility mode, which OpenSSL and browsers use), so the edge,
 * which reads the hello first, says which ticket comes with which such ID ({@link expectTicket}).
 */
import { TlsSessionCache } from './tls-session-cache.ts';

/** Where the sessions are kept: this thread's cache, or the replica's (worker threads). */
export interface TlsSessionBackend {
  store(key: string, data: Buffer, timeoutMs: number): void;
  find(key: string, answer: (data: Buffer | null) => void): void;
}

/** A cache of this thread's own. */
export function localSessions(): TlsSessionBackend {
  const cache = new TlsSessionCache();
  return {
    store: (key, data, timeoutMs) => cache.store(key, data, timeoutMs),
    find: (key, answer) => answer(cache.find(key)),
  };
}

export class TlsSessions {
  readonly #backend: TlsSessionBackend;
  #enabled = false;
  #timeoutMs = 300_000;
  /** A hello's `legacy_session_id` → the TLSv1.3 ticket it offered, until its handshake asks. */
  readonly #tickets = new Map<string, string>();

  constructor(backend: TlsSessionBackend) {
    this.#backend = backend;
  }

  configure(enabled: boolean, timeoutS: number): void {
    this.#enabled = enabled;
    this.#timeoutMs = timeoutS * 1000;
    if (!enabled) this.#tickets.clear();
  }

  store(id: Buffer, data: Buffer): void {
    if (this.#enabled) this.#backend.store(id.toString('hex'), data, this.#timeoutMs);
  }

  /**
   * A hello with `sessionId` offers the TLSv1.3 `ticket`: the session is looked up by it when the
   * handshake asks by `sessionId`. Returns what forgets it (the connection closed first).
   */
  expectTicket(sessionId: Buffer, ticket: Buffer): () => void {
    if (!this.#enabled || sessionId.length === 0) return () => {};
    const id = sessionId.toString('hex');
    this.#tickets.set(id, ticket.toString('hex'));
    return () => this.#tickets.delete(id);
  }

  /** The session asked for by a hello's session ID (or by the ticket that hello offered). */
  find(id: Buffer, answer: (data: Buffer | null) => void): void {
    if (!this.#enabled) {
      answer(null);
      return;
    }
    const asked = id.toString('hex');
    const ticket = this.#tickets.get(asked);
    if (ticket !== undefined) this.#tickets.delete(asked);
    this.#backend.find(ticket ?? asked, answer);
  }
}
