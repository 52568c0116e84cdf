/**
 * The replica's counters on their way to the store (counter-flusher.ts): a flush every interval and
 * a last one at stop. Batches the store did not take by then go to the state file, and the next
 * process sends them before anything of its own. After each flush the status view follows the
 * cluster's counter resets (counter-resets.ts).
 */
import type { Site } from '../../engine/http/site.ts';
import { LIMIT_CONN, type LimitConnZone } from '../../engine/limit-conn/limit-conn-zone.ts';
import { LIMIT_REQ, type LimitReqZone } from '../../engine/limit-req/limit-req-zone.ts';
import type { CounterStore } from '../../store/counter-store.ts';
import type { StateFile } from '../../store/state-file.ts';
import type { StoreTrouble } from '../../store/store-trouble.ts';
import type { ProcessLog } from '../logs/process-log.ts';
import { CounterFlusher } from './counter-flusher.ts';
import { CounterResets } from './counter-resets.ts';

export const COUNTER_FLUSH_INTERVAL_MS = 1000;

export interface CounterReportingOptions {
  readonly replicaId: string;
  readonly store: Pick<CounterStore, 'add' | 'resets'>;
  /** The site running now (a reload swaps it). */
  site(): Site;
  readonly stateFile: StateFile | null;
  readonly intervalMs?: number;
  /** Failed flushes are said once per outage, with the heartbeats' failures. */
  readonly storeTrouble: StoreTrouble;
  readonly log: ProcessLog;
}

export class CounterReporting {
  readonly #options: CounterReportingOptions;
  readonly #flusher: CounterFlusher;
  readonly #resets: CounterResets;
  #timer: NodeJS.Timeout | null = null;
  /** The state file still holds counter batches of an earlier process (cleared once they are flushed). */
  #stateHoldsCounters = false;
  /** The state file's write that drops those batches, once they are flushed. */
  #countersCleared: Promise<void> = Promise.resolve();

  constructor(options: CounterReportingOptions) {
    this.#options = options;
    this.#flusher = new CounterFlusher(options.store, options.replicaId, [
      { family: LIMIT_REQ, zones: () => options.site().limitReqZones.values() },
      { family: LIMIT_CONN, zones: () => options.site().limitConnZones.values() },
    ]);
    this.#resets = new CounterResets(options.store, options.site);
  }

  /** Counter batches an earlier process kept in the state file go out first. */
  async resendSaved(): Promise<void> {
    const { stateFile, log } = this.#options;
    if (!stateFile) return;
    try {
      const saved = (await stateFile.load()).counters;
      this.#flusher.resend(saved);
      this.#stateHoldsCounters = saved.length !== 0;
      if (saved.length !== 0) {
        log('info', 'counter batches of an earlier run found in the state file; flushing them first', {
          batches: saved.length,
        });
      }
    } catch (err) {
      // The sync reports a damaged state file as its last error; counters from it are lost.
      log('warn', 'could not read counter batches from the state file', { err: String(err) });
    }
  }

  /** The periodic flushes. */
  start(): void {
    this.#timer = setInterval(
      () => void this.#flush(),
      this.#options.intervalMs ?? COUNTER_FLUSH_INTERVAL_MS,
    );
    this.#timer.unref();
  }

  /** Ends the periodic flushes; `flushLast()` sends what the listeners counted until they closed. */
  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
  }

  /** The last flush; what the store does not take goes to the state file, else is lost (and said). */
  async flushLast(): Promise<void> {
    if (!(await this.#flush())) await this.#keepUnsent();
  }

  /** A reload is about to drop these zones: their last counts still go out. */
  retireDropped(running: Site, next: Site): void {
    const keptReq = new Set(next.limitReqZones.values());
    this.#flusher.retire(
      LIMIT_REQ,
      [...running.limitReqZones.values()].filter((zone: LimitReqZone) => !keptReq.has(zone)),
    );
    const keptConn = new Set(next.limitConnZones.values());
    this.#flusher.retire(
      LIMIT_CONN,
      [...running.limitConnZones.values()].filter((zone: LimitConnZone) => !keptConn.has(zone)),
    );
  }

  /** This replica's counters of `zone` as its status API shows them: since the last cluster reset. */
  statusCounters(zone: { readonly counters: Readonly<Record<string, number>> }): Record<string, number> {
    return this.#resets.statusCounters(zone);
  }

  /** One counter flush; false when the store did not take it (the deltas stay for the next one). */
  async #flush(): Promise<boolean> {
    const { stateFile, storeTrouble } = this.#options;
    try {
      await this.#flusher.flush();
    } catch (err) {
      storeTrouble.failed('counter flush', err, 'counter deltas kept for the next flush');
      return false;
    }
    if (this.#stateHoldsCounters && stateFile) {
      this.#stateHoldsCounters = false;
      this.#countersCleared = stateFile.save({ counters: [] }).catch(() => {});
    }
    // A flush that shared another's (a stop during the periodic one) waits for its write as well.
    await this.#countersCleared;
    await this.#resets.follow();
    return true;
  }

  /** Stopping while the store is away: what it did not take goes to the state file, else is lost. */
  async #keepUnsent(): Promise<void> {
    const { stateFile, log } = this.#options;
    const unsent = this.#flusher.unsent();
    if (unsent.length === 0) return;
    if (!stateFile) {
      log('error', 'store unreachable at shutdown and no --state-file: counter deltas lost', {
        batches: unsent,
      });
      return;
    }
    try {
      await stateFile.save({ counters: unsent });
      log('warn', 'store unreachable at shutdown: counter deltas kept in the state file for the next start', {
        stateFile: stateFile.path,
        batches: unsent.length,
      });
    } catch (err) {
      log('error', 'store unreachable at shutdown and the state file not writable: counter deltas lost', {
        err: String(err),
        batches: unsent,
      });
    }
  }
}
