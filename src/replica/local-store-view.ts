/**
 * This replica's own state seen through the `KeyvalStore` interface, read-only: the keyvals it has
 * applied and the counters it has counted (flushed or not). The replica's `--status-listen` serves the
 * NGINX Plus API over it, so `/api/9/http/limit_reqs/` there reports this replica alone.
 */
import type { Site } from '../engine/http/site.ts';
import { put } from '../shared/dictionary.ts';
import { LimitswitchError } from '../shared/errors.ts';
import type {
  AuditEntry,
  KeyvalChange,
  KeyvalEntry,
  KeyvalHead,
  KeyvalSnapshot,
  KeyvalStore,
  KeyvalZoneInfo,
  LimitReqCounters,
  MutationResult,
  ReplicaInfo,
  ReplicaRecord,
  Unsubscribe,
} from '../store/keyval-store.ts';

export interface LocalState {
  site(): Site;
  /** Applied revision and epoch, or null while nothing is loaded (not ready). */
  head(): KeyvalHead | null;
  info(): ReplicaInfo;
}

const readOnly = (): Promise<never> => Promise.reject(new LimitswitchError('MethodDisabled'));

export class LocalStoreView implements KeyvalStore {
  readonly #state: LocalState;

  constructor(state: LocalState) {
    this.#state = state;
  }

  add = readOnly;
  change = readOnly;
  set = readOnly;
  delete = readOnly;
  empty = readOnly;
  resetCounters = readOnly;

  async expireDue(): Promise<MutationResult | null> {
    return null;
  }

  async getZone(zone: string, nowMs: number): Promise<Record<string, KeyvalEntry>> {
    const out: Record<string, KeyvalEntry> = {};
    const engineZone = this.#state.site().keyvalZones.get(zone);
    if (engineZone === undefined) return out;
    for (const [key, record] of engineZone.entries()) {
      if (record.expireAtMs === null || record.expireAtMs > nowMs) put(out, key, record);
    }
    return out;
  }

  async snapshot(): Promise<KeyvalSnapshot> {
    const head = this.#head();
    const zones: Record<string, Record<string, KeyvalEntry>> = {};
    const now = Date.now();
    for (const name of this.#state.site().keyvalZones.keys()) zones[name] = await this.getZone(name, now);
    return { revision: head.revision, epoch: head.epoch, zones };
  }

  async revision(): Promise<number> {
    return this.#head().revision;
  }

  async head(): Promise<KeyvalHead> {
    return this.#head();
  }

  async changesSince(): Promise<KeyvalChange[] | null> {
    return null;
  }

  async subscribe(): Promise<Unsubscribe> {
    return async () => {};
  }

  async registerZones(): Promise<void> {}

  async zones(): Promise<KeyvalZoneInfo[]> {
    return [...this.#state.site().keyvalZones.values()].map((z) => ({
      name: z.name,
      type: z.type,
      timeoutMs: z.timeoutMs,
    }));
  }

  async heartbeat(): Promise<void> {}
  async deregister(): Promise<void> {}

  async replicas(nowMs: number): Promise<ReplicaRecord[]> {
    return [{ ...this.#state.info(), lastHeartbeatMs: nowMs, live: true }];
  }

  async addCounters(): Promise<void> {}

  async counters(): Promise<Record<string, Record<string, LimitReqCounters>>> {
    const zones: Record<string, LimitReqCounters> = {};
    for (const zone of this.#state.site().limitReqZones.values()) zones[zone.name] = { ...zone.counters };
    return { [this.#state.info().id]: zones };
  }

  async appendAudit(): Promise<void> {}

  async audit(): Promise<AuditEntry[]> {
    return [];
  }

  async close(): Promise<void> {}

  #head(): KeyvalHead {
    const head = this.#state.head();
    if (head === null) throw new LimitswitchError('StoreUnavailable', 'keyval state not loaded yet');
    return head;
  }
}
