/**
 * Reading the cluster's counters and switching the cafe's keyvals through the control plane, for the
 * end-to-end cafe test.
 */

import { zeroCounters } from '../../src/engine/counters.ts';
import { LIMIT_REQ_COUNTERS, type LimitReqCounters } from '../../src/engine/limit-req/limit-req-zone.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { sumZones, type ZoneCounters } from './cafe-load.ts';

/** The limit_req zones of examples/cafe/nginx.conf. */
export const CAFE_ZONES = ['perserver', 'req_zone_10', 'req_zone_20'] as const;

/** A replica's counters are flushed to the store every second (and on shutdown). */
const FLUSH_INTERVAL_MS = 1000;

export interface ClusterCounters {
  /** `/limit_reqs`. */
  readonly totals: ZoneCounters;
  /** `/limit_reqs?by=replica`. */
  readonly byReplica: Record<string, ZoneCounters>;
}

async function getJson<T>(url: string): Promise<T> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export async function readCounters(controlPlaneUrl: string): Promise<ClusterCounters> {
  const [totals, byReplica] = await Promise.all([
    getJson<ZoneCounters>(`${controlPlaneUrl}/limit_reqs`),
    getJson<Record<string, ZoneCounters>>(`${controlPlaneUrl}/limit_reqs?by=replica`),
  ]);
  return { totals, byReplica };
}

/**
 * The counters once every replica has flushed what it counted before `lastAnswerMs` (the last
 * response clients received): at least one flush interval later, and unchanged over two reads.
 */
export async function settledCounters(
  controlPlaneUrl: string,
  lastAnswerMs: number,
): Promise<ClusterCounters> {
  let previous = '';
  let settled: ClusterCounters | null = null;
  await waitFor(
    async () => {
      const current = await readCounters(controlPlaneUrl);
      const text = JSON.stringify(current);
      const stable = text === previous && performance.now() > lastAnswerMs + FLUSH_INTERVAL_MS * 1.2;
      previous = text;
      settled = current;
      return stable;
    },
    { timeoutMs: 20_000, intervalMs: 300, message: 'the counters to settle after a flush' },
  );
  return settled!;
}

/** Every cafe zone, zeros where nothing was counted: the shape `/limit_reqs` answers. */
export function allZones(counters: ZoneCounters): ZoneCounters {
  const out: ZoneCounters = {};
  for (const zone of CAFE_ZONES) out[zone] = { ...(counters[zone] ?? zeroCounters(LIMIT_REQ_COUNTERS)) };
  return out;
}

/** Zones with a count, per replica with a count (`?by=replica` lists what replicas flushed). */
export function nonZero(byReplica: Record<string, ZoneCounters>): Record<string, ZoneCounters> {
  const out: Record<string, ZoneCounters> = {};
  for (const [replica, zones] of Object.entries(byReplica)) {
    for (const [zone, counters] of Object.entries(zones)) {
      if (!Object.values(counters).some((n) => n !== 0)) continue;
      out[replica] ??= {};
      out[replica]![zone] = counters;
    }
  }
  return out;
}

/** `?by=replica` summed over replicas, in `/limit_reqs` shape. */
export function sumByReplica(byReplica: Record<string, ZoneCounters>): ZoneCounters {
  return allZones(sumZones(Object.values(byReplica)));
}

/** `after − before` for one replica's zone (missing = zeros). */
export function zoneDelta(
  after: ClusterCounters,
  before: ClusterCounters,
  replica: string,
  zone: string,
): LimitReqCounters {
  const a = after.byReplica[replica]?.[zone] ?? zeroCounters(LIMIT_REQ_COUNTERS);
  const b = before.byReplica[replica]?.[zone] ?? zeroCounters(LIMIT_REQ_COUNTERS);
  return {
    passed: a.passed - b.passed,
    delayed: a.delayed - b.delayed,
    rejected: a.rejected - b.rejected,
    delayed_dry_run: a.delayed_dry_run - b.delayed_dry_run,
    rejected_dry_run: a.rejected_dry_run - b.rejected_dry_run,
  };
}

export interface Toggle {
  readonly status: number;
  readonly sentMs: number;
  /** performance.now() when the response arrived: propagation is measured from here. */
  readonly answeredMs: number;
  readonly body: string;
}

/**
 * One write to a keyval zone of the control plane's Plus API (`wait`: `?wait=applied`); `headers`
 * add to the request's (`authorization` when tokens are configured).
 */
/** A toggle with ?wait=applied answers within the control plane's own wait; past this, it stalled. */
const TOGGLE_TIMEOUT_MS = 30_000;

export async function toggle(
  controlPlaneUrl: string,
  method: 'POST' | 'PATCH',
  zone: string,
  entries: Record<string, string>,
  wait: boolean,
  headers: Record<string, string> = {},
): Promise<Toggle> {
  const query = wait ? '?wait=applied' : '';
  const sentMs = performance.now();
  const res = await fetch(`${controlPlaneUrl}/api/9/http/keyvals/${zone}${query}`, {
    method,
    body: JSON.stringify(entries),
    headers: { 'content-type': 'application/json', ...headers },
    signal: AbortSignal.timeout(TOGGLE_TIMEOUT_MS),
  });
  const answeredMs = performance.now();
  return { status: res.status, sentMs, answeredMs, body: await res.text() };
}
