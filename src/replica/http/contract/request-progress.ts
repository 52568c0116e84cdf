/**
 * What the data path learns of one request after its decision, kept for the variables that read it
 * (src/engine/variables/request-progress.ts): the servers tried, the upstream answer's head, the
 * answer's status, the time since the request began — on the loop's clock, as nginx's times are.
 */
import type { RequestProgress, UpstreamState } from '../../../engine/variables/request-progress.ts';
import { loopClock } from '../../../shared/clock.ts';

export class ProgressRecord implements RequestProgress {
  readonly upstreamStates: UpstreamState[] = [];
  upstreamHeaders: readonly string[] | null = null;
  status = 0;
  proxyHost = '';
  proxyPort = '';
  bodyBytesSent = 0;
  /** When the request began (nginx's `r->start_msec`). */
  readonly startedMs = loopClock.nowMs();

  get elapsedMs(): number {
    return loopClock.nowMs() - this.startedMs;
  }

  get wallMs(): number {
    return loopClock.nowMs();
  }
}
