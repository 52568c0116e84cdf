/**
 * The PREACCESS handler of ngx_http_limit_conn_module: the `limit_conn` rules of a location checked in
 * order, each counting the request against its zone's key until the request ends. Past a limit the
 * slots taken so far are given back and the request is refused (`limit_conn_status`) — or, in dry
 * run, let through uncounted. Empty keys are not counted, keys over 255 bytes are skipped with an error
 * line, and a request is counted once however often its phases run (nginx's `r->main->limit_conn_status`).
 */
import type { LogLevel, LogLine } from '../log-line.ts';
import { type ConnNode, type LimitConnZone, PASSED, REJECTED, REJECTED_DRY_RUN } from './limit-conn-zone.ts';

export type LimitConnStatus = '' | 'PASSED' | 'REJECTED' | 'REJECTED_DRY_RUN';

/** nginx skips (does not count) a limit_conn key longer than this. */
export const MAX_CONN_KEY_BYTES = 255;

export interface LimitConnRule<C> {
  readonly zone: LimitConnZone;
  /** Evaluates the zone's key for a request (a byte string; empty = not counted). */
  readonly keyOf: (ctx: C) => string;
  /** The key expression as written, for the overlong-key line. */
  readonly keyText: string;
  /** `limit_conn zone number`: requests in progress allowed per key, 1..65535. */
  readonly conn: number;
}

export interface LimitConnPolicy<C> {
  readonly rules: readonly LimitConnRule<C>[];
  /** `limit_conn_status`, 400..599 (default 503). */
  readonly status: number;
  readonly logLevel: LogLevel;
  readonly dryRun: boolean;
  /** The `limit_conn_retry_after` extension: `Retry-After` on rejections, ms; null: none. */
  readonly retryAfterMs?: number | null;
}

/**
 * The slots a request holds, given back once when it ends: one link per zone that counted it, the
 * latest first (a location has one or two limit_conn rules; a request allocates a link for each).
 */
export class ConnectionSlots {
  readonly #zone: LimitConnZone;
  /** The key's node in the zone; 0 once given back. */
  #node: ConnNode;
  readonly #next: ConnectionSlots | null;

  /** @internal */
  constructor(zone: LimitConnZone, node: ConnNode, next: ConnectionSlots | null) {
    this.#zone = zone;
    this.#node = node;
    this.#next = next;
  }

  /** @internal every zone that counted the request has passed it (a zone appears once per location). */
  countPassed(): void {
    for (let slot: ConnectionSlots | null = this; slot !== null; slot = slot.#next)
      slot.#zone.counts[PASSED]!++;
  }

  /** The request is over (answered, or its client gone): every slot is given back, latest first. Idempotent. */
  release(): void {
    for (let slot: ConnectionSlots | null = this; slot !== null; slot = slot.#next) {
      const node = slot.#node;
      if (node === 0) continue;
      slot.#node = 0;
      slot.#zone.release(node);
    }
  }
}

export interface LimitConnOutcome {
  /** `$limit_conn_status`; `''` when no rule counted the request (all keys empty, or skipped). */
  readonly status: LimitConnStatus;
  /** Non-zero: finalize the request with this status (REJECTED only). */
  readonly rejectCode: number;
  /** The zone that refused, or null. */
  readonly zone: LimitConnZone | null;
  /** What the request holds until it ends; null when it holds nothing. */
  readonly slots: ConnectionSlots | null;
  readonly logs: readonly LogLine[];
}

const NOTHING: LimitConnOutcome = Object.freeze({
  status: '',
  rejectCode: 0,
  zone: null,
  slots: null,
  logs: [],
});

/** Runs the handler for one request; counts it in its zones and updates their counters. */
export function limitConnections<C>(policy: LimitConnPolicy<C>, ctx: C): LimitConnOutcome {
  let status: LimitConnStatus = '';
  let slots: ConnectionSlots | null = null;
  let logs: LogLine[] | null = null;
  for (const rule of policy.rules) {
    const key = rule.keyOf(ctx);
    if (key.length === 0) continue;
    if (key.length > MAX_CONN_KEY_BYTES) {
      logs ??= [];
      logs.push({
        level: 'error',
        message: `the value of the "${rule.keyText}" key is more than 255 bytes: "${key}"`,
      });
      continue;
    }
    status = 'PASSED';
    const zone = rule.zone;
    const result = zone.acquire(key, rule.conn);
    if (typeof result === 'number') {
      slots = new ConnectionSlots(zone, result, slots);
      continue;
    }
    logs ??= [];
    if (result === 'busy') {
      logs.push({
        level: policy.logLevel,
        message: `limiting connections${policy.dryRun ? ', dry run,' : ''} by zone "${zone.name}"`,
      });
    } else {
      // ngx_slab_alloc_locked's own line; the request is refused as over the limit
      logs.push({
        level: 'crit',
        message: `ngx_slab_alloc() failed: no memory in limit_conn_zone "${zone.name}"`,
      });
    }
    slots?.release();
    if (policy.dryRun) {
      zone.counts[REJECTED_DRY_RUN]!++;
      return { status: 'REJECTED_DRY_RUN', rejectCode: 0, zone, slots: null, logs };
    }
    zone.counts[REJECTED]!++;
    return { status: 'REJECTED', rejectCode: policy.status, zone, slots: null, logs };
  }
  slots?.countPassed();
  if (status === '' && logs === null) return NOTHING;
  return { status, rejectCode: 0, zone: null, slots, logs: logs ?? [] };
}
