/**
 * Which zones exist. keyval zones: the control plane's own `-c FILE` first, then what the replicas
 * registered in the store. limit_req zones: the config's, the ones live replicas run, and any zone
 * that has counters (a replica that ran it may be gone, its counts still count).
 */
import { LimitswitchError } from '../shared/errors.ts';
import { emptyCounters, type KeyvalZoneInfo, type LimitReqCounters } from '../store/keyval-store.ts';
import type { StoreGateway } from './store-gateway.ts';

export class ZoneDirectory {
  readonly #gateway: StoreGateway;
  readonly #keyvalZones: readonly KeyvalZoneInfo[];
  readonly #limitReqZones: readonly string[];

  constructor(
    gateway: StoreGateway,
    keyvalZones: readonly KeyvalZoneInfo[],
    limitReqZones: readonly string[],
  ) {
    this.#gateway = gateway;
    this.#keyvalZones = keyvalZones;
    this.#limitReqZones = limitReqZones;
  }

  /** The configured zones (registered in the store at start-up). */
  get configuredKeyvalZones(): readonly KeyvalZoneInfo[] {
    return this.#keyvalZones;
  }

  /** All keyval zones by name, sorted by name. */
  async keyvalZones(): Promise<Map<string, KeyvalZoneInfo>> {
    const registered = await this.#gateway.call('zones', (s) => s.zones());
    const byName = new Map<string, KeyvalZoneInfo>();
    for (const zone of [...this.#keyvalZones, ...registered]) {
      if (!byName.has(zone.name)) byName.set(zone.name, zone);
    }
    return new Map([...byName].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  /** One keyval zone, or 404 KeyvalNotFound. */
  async keyvalZone(name: string): Promise<KeyvalZoneInfo> {
    const zone = (await this.keyvalZones()).get(name);
    if (!zone) throw new LimitswitchError('KeyvalNotFound');
    return zone;
  }

  /**
   * Cluster-wide limit_req totals: zone → sums over every replica record, plus the per-replica
   * breakdown. Zones known but never counted report zeros.
   */
  async limitReqTotals(): Promise<{
    totals: Map<string, LimitReqCounters>;
    byReplica: Record<string, Record<string, LimitReqCounters>>;
  }> {
    const nowMs = Date.now();
    const [byReplica, replicas] = await Promise.all([
      this.#gateway.call('counters', (s) => s.counters()),
      this.#gateway.call('replicas', (s) => s.replicas(nowMs)),
    ]);
    const names = new Set(this.#limitReqZones);
    for (const replica of replicas) for (const zone of replica.limitReqZones) names.add(zone);
    for (const zones of Object.values(byReplica)) for (const zone of Object.keys(zones)) names.add(zone);
    const totals = new Map<string, LimitReqCounters>();
    for (const name of [...names].sort()) {
      totals.set(name, emptyCounters());
    }
    for (const zones of Object.values(byReplica)) {
      for (const [zone, counters] of Object.entries(zones)) {
        const total = totals.get(zone)!;
        total.passed += counters.passed;
        total.delayed += counters.delayed;
        total.rejected += counters.rejected;
        total.delayed_dry_run += counters.delayed_dry_run;
        total.rejected_dry_run += counters.rejected_dry_run;
      }
    }
    return { totals, byReplica };
  }
}
