/**
 * `ssl_session_cache builtin|shared`: TLS sessions the server remembers for `ssl_session_timeout`,
 * so a returning client resumes without a full handshake; by the hex of the session's ID (TLSv1.2's
 * session ID, or TLSv1.3's stateful ticket). The one cache of a replica: its worker threads keep
 * theirs in the main thread's (workers/tls-sessions-desk.ts), as nginx's workers share `shared`.
 */

/** nginx's `builtin` default size, in sessions. */
const MAX_SESSIONS = 20_480;

export class TlsSessionCache {
  readonly #sessions = new Map<string, { readonly data: Buffer; readonly expiresMs: number }>();

  store(key: string, data: Buffer, timeoutMs: number): void {
    // the oldest goes first, as in nginx's cache when it is full
    if (this.#sessions.size >= MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    this.#sessions.set(key, { data, expiresMs: Date.now() + timeoutMs });
  }

  find(key: string): Buffer | null {
    const session = this.#sessions.get(key);
    if (session === undefined) return null;
    if (session.expiresMs <= Date.now()) {
      this.#sessions.delete(key);
      return null;
    }
    return session.data;
  }

  clear(): void {
    this.#sessions.clear();
  }
}
