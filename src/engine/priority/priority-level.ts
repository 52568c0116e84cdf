/**
 * A priority level (APF's PriorityLevelConfiguration) as a replica runs it: exempt (never limited,
 * only counted), or limited with its nominal seats and either a queue set (`limit_response=queue`)
 * or none (`reject`). It keeps what APF reports of a level: requests waiting and executing, seats,
 * dispatches, rejections by reason, and how long requests waited (APF's histogram buckets).
 */
import { type FlowLoad, noRejections, QueueSet, type QueuingConfig, type RejectReason } from './queue-set.ts';
import { nominalSeats } from './seats.ts';

export interface PriorityLevelSpec {
  readonly name: string;
  /** APF's `type: Exempt`. */
  readonly exempt: boolean;
  /** `shares` (APF's nominalConcurrencyShares, default 30). */
  readonly shares: number;
  /** `limit_response=queue` (default) with its queuing, or `reject` (null). */
  readonly queuing: QueuingConfig | null;
  /** `queue_timeout` (15s): the longest a request waits in a queue before its 429. */
  readonly queueTimeoutMs: number;
}

/** apiserver_flowcontrol_request_wait_duration_seconds's buckets. */
export const WAIT_BUCKETS_S: readonly number[] = [0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30];

/** Waits of one outcome: cumulative bucket counts (le each of WAIT_BUCKETS_S), their sum and count. */
export interface WaitHistogram {
  readonly buckets: number[];
  sumS: number;
  count: number;
}

function emptyHistogram(): WaitHistogram {
  return { buckets: WAIT_BUCKETS_S.map(() => 0), sumS: 0, count: 0 };
}

/** A level's state as a replica reports it (heartbeat, status API, metrics). */
export interface PriorityLevelInfo {
  readonly name: string;
  readonly exempt: boolean;
  readonly seats: number;
  readonly executing: number;
  readonly waiting: number;
  readonly dispatched: number;
  readonly rejected: Readonly<Record<RejectReason, number>>;
  readonly rejectedDryRun: number;
  readonly waits: { readonly executed: WaitHistogram; readonly rejected: WaitHistogram };
  /** The busiest flows now (most requests waiting, then executing), at most FLOWS_REPORTED. */
  readonly flows: readonly { readonly flow: string; readonly waiting: number; readonly executing: number }[];
}

/** How many of a level's flows a report names. */
export const FLOWS_REPORTED = 20;

export class PriorityLevel {
  readonly name: string;
  readonly spec: PriorityLevelSpec;
  /** APF's nominal_limit_seats (0 for an exempt level). */
  readonly seats: number;
  /** Null for an exempt level. */
  readonly queueSet: QueueSet | null;
  /** Requests of an exempt level executing now. */
  exemptExecuting = 0;
  exemptDispatched = 0;
  /** Requests a dry run let through that would have been rejected. */
  rejectedDryRun = 0;
  /** Waits of requests that then executed (`execute="true"`) and of those that did not. */
  readonly waits = { executed: emptyHistogram(), rejected: emptyHistogram() };

  constructor(spec: PriorityLevelSpec, seats: number) {
    this.name = spec.name;
    this.spec = spec;
    this.seats = spec.exempt ? 0 : seats;
    this.queueSet = spec.exempt ? null : new QueueSet(seats, spec.queuing);
  }

  get executing(): number {
    return this.queueSet?.executing ?? this.exemptExecuting;
  }

  get waiting(): number {
    return this.queueSet?.waiting ?? 0;
  }

  get dispatched(): number {
    return this.queueSet?.counters.dispatched ?? this.exemptDispatched;
  }

  info(): PriorityLevelInfo {
    const rejected = this.queueSet?.counters.rejected ?? noRejections();
    return {
      name: this.name,
      exempt: this.spec.exempt,
      seats: this.seats,
      executing: this.executing,
      waiting: this.waiting,
      dispatched: this.dispatched,
      rejected: { ...rejected },
      rejectedDryRun: this.rejectedDryRun,
      waits: structuredClone(this.waits),
      flows: busiestFlows(this.queueSet?.flows ?? new Map()),
    };
  }

  /** A request's wait ended, `executed` or not. */
  observeWait(seconds: number, executed: boolean): void {
    const histogram = executed ? this.waits.executed : this.waits.rejected;
    histogram.sumS += seconds;
    histogram.count++;
    for (let i = 0; i < WAIT_BUCKETS_S.length; i++)
      if (seconds <= WAIT_BUCKETS_S[i]!) histogram.buckets[i]!++;
  }
}

function busiestFlows(flows: ReadonlyMap<string, FlowLoad>): PriorityLevelInfo['flows'] {
  return [...flows]
    .map(([flow, load]) => ({ flow: printable(flow), waiting: load.waiting, executing: load.executing }))
    .sort(busiestFirst)
    .slice(0, FLOWS_REPORTED);
}

/** Most waiting first, then most executing, then by name. */
export function busiestFirst(
  a: PriorityLevelInfo['flows'][number],
  b: PriorityLevelInfo['flows'][number],
): number {
  return b.waiting - a.waiting || b.executing - a.executing || (a.flow < b.flow ? -1 : 1);
}

/** A flow distinguisher as text: bytes outside printable ASCII as `\xHH`, as nginx's logs escape them. */
function printable(flow: string): string {
  let out = '';
  for (let i = 0; i < flow.length; i++) {
    const code = flow.charCodeAt(i);
    out +=
      code >= 0x20 && code < 0x7f && code !== 0x5c
        ? flow[i]
        : `\\x${code.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * The levels of a config: seats from shares over every limited level (exempt ones take none), each
 * `ceil(total × shares / Σ shares)`.
 */
export function buildPriorityLevels(
  specs: readonly PriorityLevelSpec[],
  totalSeats: number,
): Map<string, PriorityLevel> {
  let sumShares = 0;
  for (const spec of specs) if (!spec.exempt) sumShares += spec.shares;
  const levels = new Map<string, PriorityLevel>();
  for (const spec of specs) {
    const seats = nominalSeats(totalSeats, spec.shares, sumShares);
    levels.set(spec.name, new PriorityLevel(spec, seats));
  }
  return levels;
}
