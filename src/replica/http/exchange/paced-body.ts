/**
 * An answer's body written at `limit_rate` (ngx_http_write_filter): each write may take what the
 * rate allows since the request began, less what the connection carried of it (head and body,
 * nginx's `c->sent`, past `limit_rate_after`), and is followed by the pause the rate asks for. The
 * arithmetic is the engine's (answer-rate.ts); this holds the bytes that wait, and the timer.
 */
import { type AnswerRate, delayAfterWrite, writeLimit } from '../../../engine/http/answer-rate.ts';
import type { Clock } from '../../../shared/clock.ts';
import type { ClientResponse } from '../contract/client-response.ts';

type WriteCallback = (err?: Error | null) => void;

/** Where a body goes: the response itself, or a `PacedBody` in front of it. */
export interface BodyOut {
  write(chunk: Buffer, callback?: WriteCallback): boolean;
  end(chunk?: Buffer | string, callback?: () => void): unknown;
  once(event: 'drain', listener: () => void): unknown;
}

/** Hears the client connection hold the body up, and take it again (`send_timeout` runs between). */
export interface ClientWaits {
  blocked(): void;
  unblocked(): void;
}

interface Waiting {
  chunk: Buffer;
  readonly callback: WriteCallback | undefined;
}

/**
 * Where an answer's body goes: the response itself, or, at a rate (`rate` null or 0: none; a HEAD's
 * answer, nginx's header_only, has no body to pace), a `PacedBody` in front of it. `startMs`: when
 * the request began.
 */
export function bodyOut(
  res: ClientResponse,
  rate: AnswerRate | null,
  startMs: number,
  clock: Clock,
  clientWaits: ClientWaits,
): BodyOut {
  if (rate === null || rate.bytesPerS === 0) return res;
  return new PacedBody(res, rate, startMs, clock, clientWaits);
}

export class PacedBody implements BodyOut {
  readonly #res: ClientResponse;
  readonly #rate: AnswerRate;
  readonly #clock: Clock;
  /** The request's start and what its connection carried of it, as ngx_http_write_filter counts. */
  readonly #startS: number;
  #sentBytes = 0;
  /** The head's bytes (where the writer knows them), counted with the first write that carries it. */
  #headBytes: number;
  readonly #queue: Waiting[] = [];
  #timer: NodeJS.Timeout | null = null;
  /** The client connection takes no more for now. */
  #blocked = false;
  #end: { readonly callback: (() => void) | undefined } | null = null;
  #drainListeners: (() => void)[] = [];
  readonly #clientWaits: ClientWaits;

  constructor(
    res: ClientResponse,
    rate: AnswerRate,
    startMs: number,
    clock: Clock,
    clientWaits: ClientWaits,
  ) {
    this.#res = res;
    this.#rate = rate;
    this.#clock = clock;
    this.#clientWaits = clientWaits;
    this.#startS = Math.floor(startMs / 1000);
    this.#headBytes = res.headBytes ?? 0;
    res.once('close', () => this.#stop());
  }

  write(chunk: Buffer, callback?: WriteCallback): boolean {
    if (chunk.length === 0) return this.#res.write(chunk, callback);
    this.#queue.push({ chunk, callback });
    this.#pump();
    return this.#queue.length === 0 && !this.#blocked;
  }

  end(chunk?: Buffer | string, callback?: () => void): void {
    if (chunk !== undefined && chunk.length !== 0)
      this.#queue.push({
        chunk: typeof chunk === 'string' ? Buffer.from(chunk) : chunk,
        callback: undefined,
      });
    this.#end = { callback };
    this.#pump();
  }

  once(_event: 'drain', listener: () => void): void {
    this.#drainListeners.push(listener);
  }

  /** Writes what the rate allows now; else waits for the time it names, or for the client. */
  #pump(): void {
    while (this.#timer === null && !this.#blocked && this.#queue.length !== 0) {
      const allowed = writeLimit(this.#rate, this.#startS, this.#nowS(), this.#sentBytes);
      if ('waitMs' in allowed) {
        this.#wait(allowed.waitMs);
        return;
      }
      const before = this.#sentBytes;
      const head = this.#headBytes;
      this.#headBytes = 0;
      const waiting = this.#queue[0]!;
      const take = Math.max(1, Math.min(waiting.chunk.length, allowed.sendBytes - head));
      const last = take === waiting.chunk.length;
      const piece = last ? waiting.chunk : waiting.chunk.subarray(0, take);
      if (last) this.#queue.shift();
      else waiting.chunk = waiting.chunk.subarray(take);
      this.#sentBytes += head + take;
      const more = this.#res.write(piece, last ? waiting.callback : undefined);
      const delayMs = delayAfterWrite(this.#rate, before, this.#sentBytes);
      if (!more) this.#block();
      if (delayMs > 0) this.#wait(delayMs);
    }
    if (this.#queue.length !== 0 || this.#blocked) return;
    if (this.#end !== null) {
      const { callback } = this.#end;
      this.#end = null;
      if (callback === undefined) this.#res.end();
      else this.#res.end(Buffer.alloc(0), callback);
      return;
    }
    this.#drained();
  }

  #wait(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#pump();
    }, ms);
  }

  #block(): void {
    this.#blocked = true;
    this.#clientWaits.blocked();
    this.#res.once('drain', () => {
      this.#blocked = false;
      this.#clientWaits.unblocked();
      this.#pump();
    });
  }

  #drained(): void {
    const listeners = this.#drainListeners;
    if (listeners.length === 0) return;
    this.#drainListeners = [];
    for (const listener of listeners) listener();
  }

  #nowS(): number {
    return Math.floor(this.#clock.nowMs() / 1000);
  }

  /** The response closed (ended, or its client went away): nothing more is written. */
  #stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#queue.length = 0;
    this.#end = null;
    this.#drainListeners = [];
  }
}
