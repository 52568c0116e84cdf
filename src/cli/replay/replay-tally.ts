/**
 * What a replay decided, summed: per limit_req zone (the zones' own counters, as `/limit_reqs` would
 * report them), per location, per client limited at least once, and per minute.
 */
import type { Route } from '../../engine/http/route.ts';
import type { Site } from '../../engine/http/site.ts';
import type { Verdict } from '../../engine/http/verdict.ts';
import { LIMIT_REQ_COUNTERS, type LimitReqCounters } from '../../engine/limit-req/limit-req-zone.ts';

/** `$limit_req_status` values as counted per location and minute; `not_limited`: no zone accounted it. */
export const STATUS_FIELDS = [
  'requests',
  'not_limited',
  'passed',
  'delayed',
  'rejected',
  'delayed_dry_run',
  'rejected_dry_run',
] as const;
export type StatusCounts = Record<(typeof STATUS_FIELDS)[number], number>;

/** A client's limited requests (the four limiting statuses). */
export type LimitedCounts = Pick<
  StatusCounts,
  'delayed' | 'rejected' | 'delayed_dry_run' | 'rejected_dry_run'
>;

export interface LocationCounts extends StatusCounts {
  /** The server's first name (`""` for none). */
  readonly server: string;
  /** `location /coffee` as written, `server` for a request no location matched, `-` for a 400. */
  readonly location: string;
}

export interface ClientCounts extends LimitedCounts {
  readonly addr: string;
}

export interface MinuteCounts extends StatusCounts {
  /** The minute's start, ISO 8601 in UTC. */
  readonly minute: string;
}

export interface Tallies {
  readonly totals: StatusCounts;
  readonly zones: Record<string, LimitReqCounters>;
  readonly locations: LocationCounts[];
  readonly topLimitedClients: ClientCounts[];
  readonly minutes: MinuteCounts[];
}

type StatusField = Exclude<keyof StatusCounts, 'requests'>;

const FIELD_OF: Record<Verdict['status'], StatusField> = {
  '': 'not_limited',
  PASSED: 'passed',
  DELAYED: 'delayed',
  REJECTED: 'rejected',
  DELAYED_DRY_RUN: 'delayed_dry_run',
  REJECTED_DRY_RUN: 'rejected_dry_run',
};

function zeroStatus(): StatusCounts {
  return {
    requests: 0,
    not_limited: 0,
    passed: 0,
    delayed: 0,
    rejected: 0,
    delayed_dry_run: 0,
    rejected_dry_run: 0,
  };
}

export class ReplayTally {
  readonly #totals = zeroStatus();
  readonly #locations = new Map<Route['handler'] | null, Map<string, LocationCounts>>();
  readonly #clients = new Map<string, ClientCounts>();
  readonly #minutes = new Map<number, StatusCounts>();
  #lastHandler: Route['handler'] | null = null;
  #lastServer = '';
  #lastLocation: LocationCounts | null = null;
  #minuteKey = Number.NaN;
  #minute: StatusCounts = zeroStatus();

  /** Counts one decided request. */
  add(t: number, addr: string, verdict: Verdict, route: Route | null): void {
    const field = FIELD_OF[verdict.status];
    count(this.#totals, field);
    count(this.#location(route), field);
    count(this.#minuteOf(t), field);
    if (field !== 'not_limited' && field !== 'passed') {
      let client = this.#clients.get(addr);
      if (client === undefined) {
        client = { addr, delayed: 0, rejected: 0, delayed_dry_run: 0, rejected_dry_run: 0 };
        this.#clients.set(addr, client);
      }
      client[field]++;
    }
  }

  /** The sums; `top` clients, most rejections first (dry-run ones with them), then most delays. */
  result(site: Site, top: number): Tallies {
    const zones: Record<string, LimitReqCounters> = {};
    for (const [name, zone] of site.limitReqZones) {
      const counters = {} as LimitReqCounters;
      for (const field of LIMIT_REQ_COUNTERS) counters[field] = zone.counters[field];
      zones[name] = counters;
    }
    const locations = [...this.#locations.values()].flatMap((byServer) => [...byServer.values()]);
    const rejections = (c: LimitedCounts) => c.rejected + c.rejected_dry_run;
    const delays = (c: LimitedCounts) => c.delayed + c.delayed_dry_run;
    const topLimitedClients = [...this.#clients.values()]
      .sort(
        (a, b) =>
          rejections(b) - rejections(a) ||
          delays(b) - delays(a) ||
          (a.addr < b.addr ? -1 : a.addr > b.addr ? 1 : 0),
      )
      .slice(0, top);
    const minutes = [...this.#minutes.entries()]
      .sort(([a], [b]) => a - b)
      .map(([key, counts]) => ({ minute: new Date(key * 60_000).toISOString(), ...counts }));
    return { totals: { ...this.#totals }, zones, locations, topLimitedClients, minutes };
  }

  #location(route: Route | null): StatusCounts {
    const handler = route?.handler ?? null;
    const server = route?.serverName ?? '';
    // requests in a row mostly go to one location
    if (handler === this.#lastHandler && server === this.#lastServer && this.#lastLocation !== null) {
      return this.#lastLocation;
    }
    let byServer = this.#locations.get(handler);
    if (byServer === undefined) {
      byServer = new Map();
      this.#locations.set(handler, byServer);
    }
    // a location's handler belongs to one server block, which may have several names
    let counts = byServer.get(server);
    if (counts === undefined) {
      counts = { server, location: handler?.name ?? '-', ...zeroStatus() };
      byServer.set(server, counts);
    }
    this.#lastHandler = handler;
    this.#lastServer = server;
    this.#lastLocation = counts;
    return counts;
  }

  #minuteOf(t: number): StatusCounts {
    const key = Math.floor(t / 60_000);
    if (key === this.#minuteKey) return this.#minute;
    let counts = this.#minutes.get(key);
    if (counts === undefined) {
      counts = zeroStatus();
      this.#minutes.set(key, counts);
    }
    this.#minuteKey = key;
    this.#minute = counts;
    return counts;
  }
}

function count(counts: StatusCounts, field: StatusField): void {
  counts.requests++;
  counts[field]++;
}
