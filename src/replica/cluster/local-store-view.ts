/**
 * This replica's own state seen through the store's read ports: the keyvals it has applied, itself as
 * the only replica, and the counters it has counted (flushed or not). The replica's `--status-listen`
 * serves the NGINX Plus API over it (read-only), so `/api/9/http/limit_reqs/` there reports this
 * replica alone.
 */
import type { Site } from '../../engine/http/site.ts';
import { LIMIT_CONN } from '../../engine/limit-conn/limit-conn-zone.ts';
import { LIMIT_REQ } from '../../engine/limit-req/limit-req-zone.ts';
import { put } from '../../shared/dictionary.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import type { AuditTrail } from '../../store/audit-trail.ts';
import type {
  KeyvalZoneInfo,
  RegistryReader,
  ReplicaInfo,
  ReplicaRecord,
} from '../../store/cluster-registry.ts';
import type { CounterStore } from '../../store/counter-store.ts';
import type { KeyvalEntry, KeyvalHead, KeyvalReader, KeyvalSnapshot } from '../../store/keyval-store.ts';

export interface LocalState {
  site(): Site;
  /** Applied revision and epoch, or null while nothing is loaded (not ready). */
  head(): KeyvalHead | null;
  info(): ReplicaInfo;
  nowMs(): number;
  /** A zone's counters as shown (after a cluster reset: since it); default the engine's. */
  counters?(zone: { readonly counters: Readonly<Record<string, number>> }): Record<string, number>;
}

/** The read halves of the store's ports, answered from one replica's state. */
export interface LocalStoreView {
  readonly keyvals: KeyvalReader;
  readonly registry: RegistryReader;
  readonly counters: Pick<CounterStore, 'read'>;
  readonly audit: Pick<AuditTrail, 'recent'>;
}

export function localStoreView(state: LocalState): LocalStoreView {
  const head = (): KeyvalHead => {
    const current = state.head();
    if (current === null) throw new LimitswitchError('StoreUnavailable', 'keyval state not loaded yet');
    return current;
  };
  const getZone = async (zone: string, nowMs: number): Promise<Record<string, KeyvalEntry>> => {
    const out: Record<string, KeyvalEntry> = {};
    const engineZone = state.site().keyvalZones.get(zone);
    if (engineZone === undefined) return out;
    for (const [key, record] of engineZone.entries()) {
      if (record.expireAtMs === null || record.expireAtMs > nowMs) put(out, key, record);
    }
    return out;
  };
  return {
    keyvals: {
      getZone,
      head: async () => head(),
      async commitAt(revision: number): Promise<string | null> {
        const current = head();
        return revision === current.revision ? current.commit : null;
      },
      async snapshot(): Promise<KeyvalSnapshot> {
        const { revision, epoch } = head();
        const zones: Record<string, Record<string, KeyvalEntry>> = {};
        const nowMs = state.nowMs();
        for (const name of state.site().keyvalZones.keys()) zones[name] = await getZone(name, nowMs);
        return { revision, epoch, zones };
      },
    },
    registry: {
      async zones(): Promise<KeyvalZoneInfo[]> {
        return [...state.site().keyvalZones.values()].map((z) => ({
          name: z.name,
          type: z.type,
          timeoutMs: z.timeoutMs,
          // The engine's zone holds what the store admitted; the bound is the store's to enforce.
          sizeBytes: null,
        }));
      },
      async replicas(): Promise<ReplicaRecord[]> {
        return [{ ...state.info(), lastHeartbeatMs: state.nowMs(), live: true }];
      },
    },
    counters: {
      async read(kind: string) {
        const zones: Record<string, Record<string, number>> = {};
        const site = state.site();
        const counted =
          kind === LIMIT_REQ.kind
            ? site.limitReqZones
            : kind === LIMIT_CONN.kind
              ? site.limitConnZones
              : null;
        for (const zone of counted?.values() ?? []) {
          zones[zone.name] = state.counters ? state.counters(zone) : { ...zone.counters };
        }
        return { [state.info().id]: zones };
      },
    },
    audit: { recent: async () => [] },
  };
}
