/**
 * `ssl_session_cache builtin|shared`: TLS sessions the server remembers for `ssl_session_timeout`,
 * so a returning client resumes without a full handshake. One replica is one process, so nginx's
 * `shared` (across workers) and `builtin` are the same cache here. Off (`none`, nginx's default, or
 * `off`): nothing is kept; tickets (`ssl_session_tickets`) still resume.
 *
 * TLSv1.2 resumes by session ID. TLSv1.3 with `ssl_session_tickets off` resumes as nginx's OpenSSL
 * does, by a stateful ticket: the ticket a client offers (its `pre_shared_key` identity) is the ID
 * the session was stored under. node:tls asks for a session by the hello's `legacy_session_id` alone
 * (32 random bytes in TLSv1.3's compatibility mode, which OpenSSL and browsers use), so the edge,
 * which reads the hello first, says which ticket comes with which such ID ({@link expectTicket}).
 */

/** nginx's `builtin` default size, in sessions. */
const MAX_SESSIONS = 20_480;

export class TlsSessionCache {
  #enabled = false;
  #timeoutMs = 300_000;
  readonly #sessions = new Map<string, { readonly data: Buffer; readonly expiresMs: number }>();
  /** A hello's `legacy_session_id` → the TLSv1.3 ticket it offered, until its handshake asks. */
  readonly #tickets = new Map<string, string>();

  configure(enabled: boolean, timeoutS: number): void {
    this.#enabled = enabled;
    this.#timeoutMs = timeoutS * 1000;
    if (!enabled) {
      this.#sessions.clear();
      this.#tickets.clear();
    }
  }

  store(id: Buffer, data: Buffer): void {
    if (!this.#enabled) return;
    // the oldest goes first, as in nginx's cache when it is full
    if (this.#sessions.size >= MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    this.#sessions.set(id.toString('hex'), { data, expiresMs: Date.now() + this.#timeoutMs });
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
  find(id: Buffer): Buffer | null {
    const asked = id.toString('hex');
    const ticket = this.#tickets.get(asked);
    if (ticket !== undefined) this.#tickets.delete(asked);
    const key = ticket ?? asked;
    const session = this.#sessions.get(key);
    if (session === undefined) return null;
    if (session.expiresMs <= Date.now()) {
      this.#sessions.delete(key);
      return null;
    }
    return session.data;
  }
}
