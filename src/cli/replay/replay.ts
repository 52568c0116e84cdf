/**
 * `limitswitch replay`'s core: access-log lines in, the engine's decisions summed out. Every request
 * goes through `simulate`'s decision path (`decideRequest`), so a replay decides exactly what simulate
 * decides for the same timeline; the switches are applied as simulate's keyval lines, at the first
 * request's time.
 */
import type { Site } from '../../engine/http/site.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import {
  decideRequest,
  type SimulatedKeyval,
  type SimulatedResult,
  simulatedResult,
  simulateKeyval,
} from '../simulate.ts';
import type { AccessLogParser } from './access-log-parser.ts';
import { RecordReader, type TimeSource, timeSourceOf } from './log-record.ts';
import { ReplayTally, type Tallies } from './replay-tally.ts';
import { type PlacedRequest, ReplayTimeline, type SameSecond } from './replay-timeline.ts';

/** How many unreadable lines are quoted in the report. */
export const BAD_LINES_QUOTED = 5;

export type Switch = SimulatedKeyval['keyval'];

export interface ReplayOptions {
  readonly site: Site;
  readonly parser: AccessLogParser;
  readonly switches: readonly Switch[];
  readonly defaultPort: number;
  readonly sameSecond: SameSecond;
  /** For lines whose format has no host or port. */
  readonly defaults?: { readonly host?: string; readonly port?: number };
  /** Request fields the limits read that the log lacks (`unloggedVariables`): named in the report. */
  readonly unloggedVariables?: readonly string[];
  /** Called with simulate's output line for each request, in replay order. */
  readonly onDecision?: (result: SimulatedResult) => void;
}

export interface BadLine {
  readonly line: number;
  readonly reason: string;
  /** The line, cut at 200 characters. */
  readonly text: string;
}

export interface ReplaySummary extends Tallies {
  readonly logFormat: string;
  readonly time: {
    readonly field: TimeSource;
    readonly resolutionMs: 1 | 1000;
    readonly sameSecond: SameSecond | null;
  };
  readonly switches: readonly Switch[];
  /** Request fields the limits read that the log lacks: replayed as empty. */
  readonly unloggedVariables: readonly string[];
  readonly lines: number;
  /** Lines logged for a connection that sent no request line (nginx logs those too): not replayed. */
  readonly skipped: number;
  readonly badLines: { readonly count: number; readonly first: readonly BadLine[] };
  /** Requests replayed later than they came in (see replay-timeline.ts). */
  readonly late: number;
  /** The first and last request's arrival, ISO 8601 (null: no request). */
  readonly fromTime: string | null;
  readonly toTime: string | null;
}

export class Replay {
  readonly #options: ReplayOptions;
  readonly #reader: RecordReader;
  readonly #timeline: ReplayTimeline;
  readonly #tally = new ReplayTally();
  readonly #timeSource: TimeSource;
  readonly #badLines: BadLine[] = [];
  #badLineCount = 0;
  #lines = 0;
  #skipped = 0;
  #firstT: number | null = null;
  #lastT: number | null = null;

  /** Throws `RL_ERR_CLI_USAGE` for a format without the client, the request or its time. */
  constructor(options: ReplayOptions) {
    this.#options = options;
    this.#timeSource = checkFormat(options.parser);
    this.#reader = new RecordReader(this.#timeSource, options.defaults);
    this.#timeline = new ReplayTimeline(this.#timeSource !== 'msec', options.sameSecond, (placed) =>
      this.#decide(placed),
    );
  }

  /** One access-log line; empty lines are not counted. */
  line(text: string, lineNumber: number): void {
    if (text === '') return;
    this.#lines++;
    const values = this.#options.parser.parse(text);
    if (values === null) {
      this.#bad(lineNumber, `does not match log_format "${this.#options.parser.format}"`, text);
      return;
    }
    const logged = this.#reader.read(values);
    if (typeof logged === 'string') {
      if (logged === 'no request line') this.#skipped++;
      else this.#bad(lineNumber, logged, text);
      return;
    }
    this.#timeline.push(logged);
  }

  /** The end of the log: replays what is still held, and sums up. */
  finish(top: number): ReplaySummary {
    this.#timeline.finish();
    const tallies = this.#tally.result(this.#options.site, top);
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return {
      logFormat: this.#options.parser.format,
      time: {
        field: this.#timeSource,
        resolutionMs: this.#timeSource === 'msec' ? 1 : 1000,
        sameSecond: this.#timeSource === 'msec' ? null : this.#options.sameSecond,
      },
      switches: this.#options.switches,
      unloggedVariables: this.#options.unloggedVariables ?? [],
      lines: this.#lines,
      skipped: this.#skipped,
      badLines: { count: this.#badLineCount, first: this.#badLines },
      late: this.#timeline.late,
      fromTime: iso(this.#firstT),
      toTime: iso(this.#lastT),
      ...tallies,
    };
  }

  #decide(placed: PlacedRequest): void {
    const { site, defaultPort, onDecision } = this.#options;
    const t = placed.t;
    if (this.#firstT === null) {
      this.#firstT = t;
      for (const change of this.#options.switches) simulateKeyval(site, t, change);
    }
    this.#lastT = t;
    const request = placed.logged.request;
    request.t = t;
    const { verdict, route } = decideRequest(site, request, defaultPort);
    this.#tally.add(t, request.addr, verdict, route);
    onDecision?.(simulatedResult(t, verdict));
  }

  #bad(line: number, reason: string, text: string): void {
    this.#badLineCount++;
    if (this.#badLines.length < BAD_LINES_QUOTED)
      this.#badLines.push({ line, reason, text: text.slice(0, 200) });
  }
}

/** The time field of a format that has what a replay needs, or `RL_ERR_CLI_USAGE` naming what it lacks. */
function checkFormat(parser: AccessLogParser): TimeSource {
  const lacks = (what: string) =>
    new LimitswitchError(
      'RL_ERR_CLI_USAGE',
      `limitswitch replay: log_format "${parser.format}" has no ${what}`,
    );
  const source = timeSourceOf(parser.has);
  if (source === null) throw lacks('$msec, $time_local or $time_iso8601: requests cannot be placed in time');
  if (!parser.has.has('remote_addr')) throw lacks('$remote_addr');
  if (!parser.has.has('request') && !parser.has.has('request_uri')) throw lacks('$request or $request_uri');
  return source;
}
