/**
 * API Priority and Fairness on the data path: a request classified into a priority level takes a seat
 * of it at once, waits in the level's queue set until it is dispatched (or its `queue_timeout` passes,
 * or its client goes away), or is rejected — 429 (`priority_level_status`) with `Retry-After: 1`, as
 * kube-apiserver answers. An exempt level only counts. The seat is given back when the exchange ends.
 * A dry run lets a rejected request through (counted, logged) without a seat.
 */
import type { PriorityLevelRule } from '../../engine/http/location-handler.ts';
import type { LogLine } from '../../engine/log-line.ts';
import type { PriorityLevel } from '../../engine/priority/priority-level.ts';
import type { FairRequest, RejectReason } from '../../engine/priority/queue-set.ts';
import { flowHash } from '../../engine/priority/shuffle-shard.ts';
import type { Clock } from '../../shared/clock.ts';
import {
  type Decision,
  type HeldUntilEnd,
  heldTogether,
  type PassDecision,
  type ProxyDecision,
  type WaitDecision,
} from '../http/contract/decision.ts';
import { admissionTimer, INTERNAL_ERROR } from '../http/contract/fault-boundary.ts';

/** The header that names the level a request went to (`priority_level_headers on`). */
export const PRIORITY_LEVEL_HEADER = 'X-Limitswitch-Priority-Level';

/** What admission reads of a request's classification: its level and flow, and its rule's answers. */
export interface PriorityClass {
  readonly level: PriorityLevel;
  readonly flow: string;
  readonly rule: Pick<PriorityLevelRule, 'status' | 'logLevel' | 'dryRun' | 'headers'>;
}

export interface PriorityAdmission {
  readonly classification: PriorityClass;
  readonly clock: Clock;
  /** What to do once admitted: the location's forward decision (its `slots` are kept). */
  readonly proceed: PassDecision | ProxyDecision;
  /** Writes a line to the error log, with the request's context. */
  readonly log: (line: LogLine) => void;
}

/** A decision that waits for the priority level. */
export function priorityWait(admission: PriorityAdmission): WaitDecision {
  return { action: 'wait', wait: (settle) => admit(admission, settle) };
}

const NOTHING = (): void => {};

function admit(a: PriorityAdmission, settle: (next: Decision) => void): () => void {
  const { level, flow, rule } = a.classification;
  const headers = rule.headers ? [PRIORITY_LEVEL_HEADER, level.name] : null;
  const proceed = (release: HeldUntilEnd | null): void => {
    const slots = heldTogether(a.proceed.slots ?? null, release);
    const responseHeaders =
      headers === null ? a.proceed.responseHeaders : [...(a.proceed.responseHeaders ?? []), ...headers];
    settle({ ...a.proceed, slots: slots ?? undefined, responseHeaders });
  };
  const set = level.queueSet;
  if (set === null) {
    level.exemptExecuting++;
    level.exemptDispatched++;
    proceed({ release: () => void level.exemptExecuting-- });
    return NOTHING;
  }
  const arrivedMs = a.clock.nowMs();
  let timer: NodeJS.Timeout | null = null;
  const seat = (request: FairRequest): HeldUntilEnd => ({
    release: () => set.finish(request, a.clock.nowMs()),
  });
  const waitedS = () => (a.clock.nowMs() - arrivedMs) / 1000;
  const dispatched = (request: FairRequest): void => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    level.observeWait(waitedS(), true);
    proceed(seat(request));
  };
  const request = set.start(flow, flowHash(level.name, flow), arrivedMs, dispatched);
  if (request.state === 'executing') {
    level.observeWait(0, true);
    proceed(seat(request));
    return NOTHING;
  }
  const refused = (reason: RejectReason): void => {
    level.observeWait(waitedS(), false);
    const dryRun = rule.dryRun;
    a.log({
      level: rule.logLevel,
      message: `limiting requests${dryRun ? ', dry run,' : ''} by priority level "${level.name}": ${reason}`,
    });
    if (dryRun) {
      level.rejectedDryRun++;
      proceed(null);
      return;
    }
    a.proceed.slots?.release();
    settle({ action: 'reject', code: rule.status, retryAfterS: 1, headers: headers ?? undefined });
  };
  if (request.state === 'rejected') {
    refused(level.spec.queuing === null ? 'concurrency-limit' : 'queue-full');
    return NOTHING;
  }
  timer = setTimeout(
    admissionTimer(
      () => {
        timer = null;
        if (set.withdraw(request, a.clock.nowMs(), 'time-out')) refused('time-out');
      },
      () => settle(INTERNAL_ERROR),
    ),
    level.spec.queueTimeoutMs,
  );
  return () => {
    if (!set.withdraw(request, a.clock.nowMs(), 'cancelled')) return;
    if (timer !== null) clearTimeout(timer);
    timer = null;
    level.observeWait(waitedS(), false);
    a.proceed.slots?.release();
  };
}
