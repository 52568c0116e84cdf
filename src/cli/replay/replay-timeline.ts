/**
 * Puts logged requests back in the order their limits saw them. A line is written when its request
 * ends, so the log is in end order; a request came in `$request_time` before its line. Requests are
 * held in a heap until the log is `REORDER_WINDOW_MS` past them, then handed on by arrival time (ties
 * in log order). A request that arrives after the window (it took longer than the window, or its line
 * was written late) is replayed at the replay's current time and counted as late.
 *
 * With a 1 s time field, the n lines of one logged second are spread over it in log order (the i-th at
 * i·1000/n ms) or, with `burst`, all put at its start: the exact millisecond is not in the log.
 */
import type { LoggedRequest } from './log-record.ts';

/** How long after a request's arrival the log may still bring an earlier one. */
export const REORDER_WINDOW_MS = 60_000;

export type SameSecond = 'spread' | 'burst';

export interface PlacedRequest {
  /** The replay clock: ms since the epoch when the request came in. */
  readonly t: number;
  /** Log order, for ties. */
  readonly seq: number;
  readonly logged: LoggedRequest;
}

export class ReplayTimeline {
  /** Requests replayed later than they came in (see the header). */
  late = 0;
  readonly #secondResolution: boolean;
  readonly #sameSecond: SameSecond;
  readonly #emit: (placed: PlacedRequest) => void;
  readonly #heap: PlacedRequest[] = [];
  #second: LoggedRequest[] = [];
  #seq = 0;
  #loggedUntilMs = Number.NEGATIVE_INFINITY;
  #lastT = Number.NEGATIVE_INFINITY;

  constructor(secondResolution: boolean, sameSecond: SameSecond, emit: (placed: PlacedRequest) => void) {
    this.#secondResolution = secondResolution;
    this.#sameSecond = sameSecond;
    this.#emit = emit;
  }

  push(logged: LoggedRequest): void {
    if (!this.#secondResolution) {
      this.#place(logged, logged.loggedMs);
      return;
    }
    const current = this.#second[0];
    if (current !== undefined && current.loggedMs !== logged.loggedMs) this.#placeSecond();
    this.#second.push(logged);
  }

  /** The end of the log: everything still held is replayed. */
  finish(): void {
    this.#placeSecond();
    while (this.#heap.length !== 0) this.#emitNext();
  }

  #placeSecond(): void {
    const lines = this.#second;
    if (lines.length === 0) return;
    this.#second = [];
    const n = lines.length;
    for (let i = 0; i < n; i++) {
      const logged = lines[i]!;
      const offsetMs = this.#sameSecond === 'spread' ? Math.floor((i * 1000) / n) : 0;
      this.#place(logged, logged.loggedMs + offsetMs);
    }
  }

  #place(logged: LoggedRequest, loggedMs: number): void {
    const seq = this.#seq++;
    const t = loggedMs - logged.requestTimeMs;
    if (loggedMs > this.#loggedUntilMs) this.#loggedUntilMs = loggedMs;
    if (t < this.#lastT) {
      this.late++;
      this.#emit({ t: this.#lastT, seq, logged });
    } else heapPush(this.#heap, { t, seq, logged });
    const horizon = this.#loggedUntilMs - REORDER_WINDOW_MS;
    while (this.#heap.length !== 0 && this.#heap[0]!.t <= horizon) this.#emitNext();
  }

  #emitNext(): void {
    const next = heapPop(this.#heap);
    this.#lastT = next.t;
    this.#emit(next);
  }
}

function before(a: PlacedRequest, b: PlacedRequest): boolean {
  return a.t < b.t || (a.t === b.t && a.seq < b.seq);
}

function heapPush(heap: PlacedRequest[], item: PlacedRequest): void {
  let i = heap.push(item) - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if (!before(item, heap[parent]!)) break;
    heap[i] = heap[parent]!;
    i = parent;
  }
  heap[i] = item;
}

function heapPop(heap: PlacedRequest[]): PlacedRequest {
  const top = heap[0]!;
  const last = heap.pop()!;
  const n = heap.length;
  if (n === 0) return top;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= n) break;
    const right = left + 1;
    const child = right < n && before(heap[right]!, heap[left]!) ? right : left;
    if (!before(heap[child]!, last)) break;
    heap[i] = heap[child]!;
    i = child;
  }
  heap[i] = last;
  return top;
}
