/**
 * The one timer of an upstream connection (http1-client.ts), armed for one wait at a time as undici's
 * client times them: a connection within `connectTimeout`, the head within `headersTimeout` of the
 * request going out, each piece of the body within `bodyTimeout` of the last, and an idle connection
 * closed after its keep-alive time (http1-keep-alive.ts). One timer per connection, re-armed rather
 * than cleared and set for each wait.
 */
import { type CallbackKind, failpoint } from '../contract/fault-boundary.ts';

/** What the one timer is armed for. */
export const NO_TIMER = 0;
export const HEADERS_TIMER = 1;
export const BODY_TIMER = 2;
export const IDLE_TIMER = 3;
export const CONNECT_TIMER = 4;

/** The connection a timer runs out for. */
export interface TimedConnection {
  /** The timer ran out: what for is the timer's `kind`. */
  timedOut(): void;
  /** `timedOut` threw (fault-boundary.ts). */
  faulted(kind: CallbackKind, error: unknown): void;
}

function onTimer(connection: TimedConnection): void {
  try {
    failpoint('timer');
    connection.timedOut();
  } catch (error) {
    connection.faulted('timer', error);
  }
}

export class Http1ClientTimer {
  readonly #connection: TimedConnection;
  #timer: NodeJS.Timeout | null = null;
  #kind = NO_TIMER;
  /** The delay the timer was last set with (a re-arm with the same one only refreshes it). */
  #delayMs = 0;

  constructor(connection: TimedConnection) {
    this.#connection = connection;
  }

  /** What the timer is armed for: `NO_TIMER` when it runs out for nothing. */
  get kind(): number {
    return this.#kind;
  }

  arm(kind: number, delayMs: number): void {
    this.#kind = kind;
    if (!(delayMs > 0)) {
      this.clear();
      return;
    }
    const timer = this.#timer;
    if (timer !== null && this.#delayMs === delayMs) {
      timer.refresh();
      return;
    }
    if (timer !== null) clearTimeout(timer);
    this.#delayMs = delayMs;
    this.#timer = setTimeout(onTimer, delayMs, this.#connection);
    this.#timer.unref();
  }

  /** The wait starts again, as long as it was. */
  refresh(): void {
    this.#timer?.refresh();
  }

  /** Armed for nothing; the timer stays, so that the next `arm` re-arms it (no clear and set per request). */
  disarm(): void {
    this.#kind = NO_TIMER;
  }

  /** Disarmed and gone (a closed connection's). */
  clear(): void {
    this.#kind = NO_TIMER;
    if (this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
    }
  }
}
