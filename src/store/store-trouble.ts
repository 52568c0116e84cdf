/**
 * Store outages in the process log, said once rather than twice a second: the first failure is a
 * warning naming the store and the reason (`keyval store unavailable: redis://10.0.0.5:6379: connection
 * refused (connect ECONNREFUSED 10.0.0.5:6379)`); repeats of the same text are counted and summed up
 * at most every `repeatMs`; the first success after an outage says how long it lasted.
 */
import type { Clock } from '../shared/clock.ts';

export type TroubleLog = (level: 'info' | 'warn', message: string, fields: Record<string, unknown>) => void;

/** How often an ongoing outage with the same reason is reported again. Default 30 s. */
const REPEAT_MS = 30_000;

export class StoreTrouble {
  readonly #log: TroubleLog;
  readonly #clock: Clock;
  readonly #repeatMs: number;
  /** Since when the store fails (null: it answers). */
  #sinceMs: number | null = null;
  #lastText = '';
  #lastSaidMs = 0;
  #unsaid = 0;
  #failures = 0;

  constructor(log: TroubleLog, clock: Clock, repeatMs = REPEAT_MS) {
    this.#log = log;
    this.#clock = clock;
    this.#repeatMs = repeatMs;
  }

  /** A store call `op` failed with `err`; `consequence` says what the process does meanwhile. */
  failed(op: string, err: unknown, consequence: string): void {
    const nowMs = this.#clock.nowMs();
    const text = describeStoreError(err);
    this.#sinceMs ??= nowMs;
    this.#failures++;
    if (text === this.#lastText && nowMs - this.#lastSaidMs < this.#repeatMs) {
      this.#unsaid++;
      return;
    }
    const repeats = this.#unsaid === 0 ? '' : ` (${this.#unsaid} more failures since the last report)`;
    this.#log('warn', `${text}; ${consequence}${repeats}`, { op, err: text });
    this.#lastText = text;
    this.#lastSaidMs = nowMs;
    this.#unsaid = 0;
  }

  /** A store call succeeded: ends an outage, if there was one. */
  answered(): void {
    if (this.#sinceMs === null) return;
    const seconds = (this.#clock.nowMs() - this.#sinceMs) / 1000;
    this.#log('info', `keyval store reachable again after ${seconds.toFixed(1)} s`, {
      outageSeconds: seconds,
      failedCalls: this.#failures,
    });
    this.#sinceMs = null;
    this.#lastText = '';
    this.#unsaid = 0;
    this.#failures = 0;
  }
}

/** `message: cause message` (the store names itself and the reason in the cause). */
export function describeStoreError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
