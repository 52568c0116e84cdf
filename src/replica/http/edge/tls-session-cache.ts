/**
 * `ssl_session_cache builtin|shared`: TLS session IDs the server remembers for `ssl_session_timeout`,
 * so a returning client resumes without a full handshake. One replica is one process, so nginx's
 * `shared` (across workers) and `builtin` are the same cache here. Off (`none`, nginx's default, or
 * `off`): nothing is kept; tickets (`ssl_session_tickets`) still resume.
 */

/** nginx's `builtin` default size, in sessions. */
const MAX_SESSIONS = 20_480;

export class TlsSessionCache {
  #enabled = false;
  #timeoutMs = 300_000;
  readonly #sessions = new Map<string, { readonly data: Buffer; readonly expiresMs: number }>();

  configure(enabled: boolean, timeoutS: number): void {
    this.#enabled = enabled;
    this.#timeoutMs = timeoutS * 1000;
    if (!enabled) this.#sessions.clear();
  }

  store(id: Buffer, data: Buffer): void {
    if (!this.#enabled) return;
    // the oldest goes first, as in nginx's cache when it is full
    if (this.#sessions.size >= MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    this.#sessions.set(id.toString('hex'), { data, expiresMs: Date.now() + this.#timeoutMs });
  }

  find(id: Buffer): Buffer | null {
    const key = id.toString('hex');
    const session = this.#sessions.get(key);
    if (session === undefined) return null;
    if (session.expiresMs <= Date.now()) {
      this.#sessions.delete(key);
      return null;
    }
    return session.data;
  }
}
