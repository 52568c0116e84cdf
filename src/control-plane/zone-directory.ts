/**
 * Which zones exist. keyval zones: the control plane's own `-c FILE` first, then what the replicas
 * registered in the store. limit_req and limit_conn zones: the config's, the ones live replicas run,
 * and any zone that has counters (a replica that ran it may be gone, its counts still count).
 */
import { addCountersInto, type CounterFamily, type Counters, zeroCounters } from '../engine/counters.ts';
import { LIMIT_CONN } from '../engine/limit-conn/limit-conn-zone.ts';
import { LIMIT_REQ } from '../engine/limit-req/limit-req-zone.ts';
import { compareText } from '../shared/dictionary.ts';
import { LimitswitchError } from '../shared/errors.ts';
import type { KeyvalZoneInfo, ReplicaInfo } from '../store/cluster-registry.ts';
import type { StoreGateway } from './store-gateway.ts';

export class ZoneDirectory {
  readonly #gateway: StoreGateway;
  readonly #keyvalZones: readonly KeyvalZoneInfo[];
  readonly #configured: ConfiguredLimiterZones;

  constructor(
    gateway: StoreGateway,
    keyvalZones: readonly KeyvalZoneInfo[],
    configured: ConfiguredLimiterZones,
  ) {
    this.#gateway = gateway;
    this.#keyvalZones = keyvalZones;
    this.#configured = configured;
  }

  /** The configured zones (registered in the store at start-up). */
  get configuredKeyvalZones(): readonly KeyvalZoneInfo[] {
    return this.#keyvalZones;
  }

  /** All keyval zones by name, sorted by name. */
  async keyvalZones(): Promise<Map<string, KeyvalZoneInfo>> {
    const registered = await this.#gateway.call('zones', (s) => s.registry.zones());
    const byName = new Map<string, KeyvalZoneInfo>();
    for (const zone of [...this.#keyvalZones, ...registered]) {
      if (!byName.has(zone.name)) byName.set(zone.name, zone);
    }
    return new Map([...byName].sort(([a], [b]) => compareText(a, b)));
  }

  /** One keyval zone, or 404 KeyvalNotFound. */
  async keyvalZone(name: string): Promise<KeyvalZoneInfo> {
    const zone = (await this.keyvalZones()).get(name);
    if (!zone) throw new LimitswitchError('KeyvalNotFound');
    return zone;
  }

  /**
   * A limiter's cluster-wide totals: zone → sums over every replica record, plus the per-replica
   * breakdown (every known zone on every replica that reported, zeros included). Zones known but
   * never counted report zeros.
   */
  async counterTotals<F extends string>(limiter: Limiter<F>): Promise<CounterTotals<F>> {
    const { family } = limiter;
    const [counted, replicas] = await Promise.all([
      this.#gateway.call('counters', (s) => s.counters.read(family.kind)),
      this.#gateway.call('replicas', (s) => s.registry.replicas()),
    ]);
    const names = new Set(this.#configured[limiter.name]);
    for (const replica of replicas) for (const zone of limiter.zonesOf(replica)) names.add(zone);
    for (const zones of Object.values(counted)) for (const zone of Object.keys(zones)) names.add(zone);
    const totals = new Map<string, Counters<F>>();
    for (const name of [...names].sort(compareText)) totals.set(name, zeroCounters(family.fields));
    // Per replica, every zone it reports has a row, zeros included (a zone nothing hit yet is news).
    const byReplica: Record<string, Record<string, Counters<F>>> = {};
    const rowsOf = (replicaId: string): Record<string, Counters<F>> => {
      byReplica[replicaId] ??= {};
      return byReplica[replicaId]!;
    };
    for (const replica of replicas) {
      const mine = rowsOf(replica.id);
      for (const zone of limiter.zonesOf(replica)) mine[zone] ??= zeroCounters(family.fields);
    }
    for (const [replicaId, zones] of Object.entries(counted)) {
      const mine = rowsOf(replicaId);
      for (const [zone, counters] of Object.entries(zones)) {
        const these = counters as Partial<Counters<F>>;
        mine[zone] = addCountersInto(mine[zone] ?? zeroCounters(family.fields), these, family.fields);
        addCountersInto(totals.get(zone)!, these, family.fields);
      }
    }
    return { totals, byReplica };
  }
}

/** The limit_req and limit_conn zones of the control plane's own configuration. */
export interface ConfiguredLimiterZones {
  readonly limitReq: readonly string[];
  readonly limitConn: readonly string[];
}

export interface CounterTotals<F extends string> {
  readonly totals: Map<string, Counters<F>>;
  readonly byReplica: Record<string, Record<string, Counters<F>>>;
}

/** A limiter whose zones have cluster-wide counters. */
export interface Limiter<F extends string> {
  readonly name: keyof ConfiguredLimiterZones;
  readonly family: CounterFamily<F>;
  /** The zones a replica reports it runs. */
  zonesOf(replica: ReplicaInfo): readonly string[];
}

export const LIMIT_REQ_LIMITER: Limiter<(typeof LIMIT_REQ.fields)[number]> = {
  name: 'limitReq',
  family: LIMIT_REQ,
  zonesOf: (replica) => replica.limitReqZones,
};

export const LIMIT_CONN_LIMITER: Limiter<(typeof LIMIT_CONN.fields)[number]> = {
  name: 'limitConn',
  family: LIMIT_CONN,
  zonesOf: (replica) => replica.limitConnZones ?? [],
};
