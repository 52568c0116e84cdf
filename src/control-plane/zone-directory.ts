/**
 * Which zones exist. keyval zones: the control plane's own `-c FILE` first, then what the replicas
 * registered in the store. limit_req zones: the config's, the ones live replicas run, and any zone
 * that has counters (a replica that ran it may be gone, its counts still count).
 */
import { addCountersInto, zeroCounters } from '../engine/counters.ts';
import { LIMIT_REQ, LIMIT_REQ_COUNTERS, type LimitReqCounters } from '../engine/limit-req/limit-req-zone.ts';
import type { Clock } from '../shared/clock.ts';
import { compareText } from '../shared/dictionary.ts';
import { LimitswitchError } from '../shared/errors.ts';
import type { KeyvalZoneInfo } from '../store/cluster-registry.ts';
import type { StoreGateway } from './store-gateway.ts';

export class ZoneDirectory {
  readonly #gateway: StoreGateway;
  readonly #clock: Clock;
  readonly #keyvalZones: readonly KeyvalZoneInfo[];
  readonly #limitReqZones: readonly string[];

  constructor(
    gateway: StoreGateway,
    clock: Clock,
    keyvalZones: readonly KeyvalZoneInfo[],
    limitReqZones: readonly string[],
  ) {
    this.#gateway = gateway;
    this.#clock = clock;
    this.#keyvalZones = keyvalZones;
    this.#limitReqZones = limitReqZones;
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
   * Cluster-wide limit_req totals: zone → sums over every replica record, plus the per-replica
   * breakdown (every known zone on every replica that reported, zeros included). Zones known but
   * never counted report zeros.
   */
  async limitReqTotals(): Promise<{
    totals: Map<string, LimitReqCounters>;
    byReplica: Record<string, Record<string, LimitReqCounters>>;
  }> {
    const nowMs = this.#clock.nowMs();
    const [counted, replicas] = await Promise.all([
      this.#gateway.call('counters', (s) => s.counters.read(LIMIT_REQ.kind)),
      this.#gateway.call('replicas', (s) => s.registry.replicas(nowMs)),
    ]);
    const names = new Set(this.#limitReqZones);
    for (const replica of replicas) for (const zone of replica.limitReqZones) names.add(zone);
    for (const zones of Object.values(counted)) for (const zone of Object.keys(zones)) names.add(zone);
    const totals = new Map<string, LimitReqCounters>();
    for (const name of [...names].sort(compareText)) totals.set(name, zeroCounters(LIMIT_REQ_COUNTERS));
    const byReplica: Record<string, Record<string, LimitReqCounters>> = {};
    for (const [replicaId, zones] of Object.entries(counted)) {
      const mine: Record<string, LimitReqCounters> = {};
      byReplica[replicaId] = mine;
      for (const [zone, counters] of Object.entries(zones)) {
        mine[zone] = addCountersInto(zeroCounters(LIMIT_REQ_COUNTERS), counters, LIMIT_REQ_COUNTERS);
        addCountersInto(totals.get(zone)!, counters, LIMIT_REQ_COUNTERS);
      }
    }
    return { totals, byReplica };
  }
}
