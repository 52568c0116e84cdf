/**
 * What the data path learns of one request after its decision, kept for the variables that read it
 * (src/engine/variables/request-progress.ts): the servers tried, the upstream answer's head, the
 * answer's status, the time since the request began — on the loop's clock, as nginx's times are.
 */
import type { RequestProgress, UpstreamState } from '../../../engine/variables/request-progress.ts';
import { loopClock } from '../../../shared/clock.ts';
import { timeIso8601, timeLocal } from './log-time.ts';

export class ProgressRecord implements RequestProgress {
  readonly upstreamStates: UpstreamState[] = [];
  upstreamHeaders: readonly string[] | null = null;
  status = 0;
  sentHeaders: readonly string[] | null = null;
  proxyHost = '';
  proxyPort = '';
  bodyBytesSent = 0;
  limitRate = 0;
  keepAlive = false;
  keepAliveHeaderS: number | null = null;
  /** The body read whole into memory, and the file one went to instead (`$request_body`, `$request_body_file`). */
  #body: Buffer | null = null;
  requestBodyFile = '';
  /** When the request began (nginx's `r->start_msec`). */
  readonly startedMs = loopClock.nowMs();

  /** The body was read whole: into memory (`body`), else into the file `file`. */
  keptBody(body: Buffer | null, file: string): void {
    this.#body = body;
    this.requestBodyFile = file;
  }

  get requestBody(): string {
    return this.#body?.toString('latin1') ?? '';
  }

  get elapsedMs(): number {
    return loopClock.nowMs() - this.startedMs;
  }

  get timeLocal(): string {
    return timeLocal(new Date(loopClock.nowMs()));
  }

  get timeIso8601(): string {
    return timeIso8601(new Date(loopClock.nowMs()));
  }
}
