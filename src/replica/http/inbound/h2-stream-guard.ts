/**
 * Guards against an HTTP/2 client that opens streams faster than it lets them run — the rapid reset
 * attack (CVE-2023-44487: HEADERS then RST_STREAM, again and again, each stream costing the server
 * its request's work and the client nothing).
 *
 * nginx's two, as in 1.25.3 (backported to 1.22): a connection takes at most twice
 * `http2_max_concurrent_streams` new streams in one turn of the event loop and refuses the rest
 * (`REFUSED_STREAM`, nginx's `client sent too many streams at once`); a connection that had more
 * refused than that is sent GOAWAY (`client sent too many refused streams`). Past
 * `keepalive_requests` streams a connection is sent GOAWAY too (proxy-server.ts).
 *
 * One more, as Envoy has it: requests run at the end of the turn they arrived in (proxy-server.ts),
 * so a stream whose client reset it in the meantime was reset before it ran. A connection that opened
 * 100 streams or more, half or more of them reset so, is sent GOAWAY: node:http2 spends ~0.1 ms on
 * each stream it makes and resets before any check of ours can refuse it, so the ~1000 streams
 * nginx's guards let in would hold the event loop ~0.1 s a connection.
 */

/** What to do with a new stream; `close-*` name the guard that closes the connection. */
export type StreamAdmission = 'take' | 'refuse' | 'close-refused' | 'close-reset';

/** Streams a connection opens before the share reset early counts. */
const RESET_RATIO_MIN_STREAMS = 100;

export class H2StreamGuard {
  readonly #perTurn: number;
  readonly #refusedMax: number;
  #thisTurn = 0;
  #refused = 0;
  #refusedThisTurn = 0;
  #turnScheduled = false;
  /** Streams taken, and those found reset before they ran. */
  #taken = 0;
  #resetEarly = 0;
  /** The stream taken last, looked at when the next one comes. */
  #previous: { readonly closed: boolean } | null = null;

  /** `maxConcurrentStreams`: the session's `http2_max_concurrent_streams`. */
  constructor(maxConcurrentStreams: number) {
    this.#perTurn = 2 * maxConcurrentStreams;
    this.#refusedMax = Math.max(maxConcurrentStreams, 100);
  }

  /** A new stream arrived. */
  admit(stream: { readonly closed: boolean }): StreamAdmission {
    if (!this.#turnScheduled) {
      this.#turnScheduled = true;
      setImmediate(() => {
        this.#turnScheduled = false;
        this.#thisTurn = 0;
        this.#refusedThisTurn = 0;
      });
    }
    // the one before it has not run yet (its turn is not over) unless an earlier turn ended
    if (this.#previous?.closed === true) this.#resetEarly++;
    this.#previous = null;
    if (++this.#thisTurn > this.#perTurn) {
      this.#refusedThisTurn++;
      return ++this.#refused > this.#refusedMax ? 'close-refused' : 'refuse';
    }
    this.#taken++;
    this.#previous = stream;
    if (this.#taken >= RESET_RATIO_MIN_STREAMS && this.#resetEarly * 2 >= this.#taken) return 'close-reset';
    return 'take';
  }

  /** The stream just refused is the turn's first refused one (nginx logs once a read). */
  refusedOnce(): boolean {
    return this.#refusedThisTurn === 1;
  }
}
