/** The cluster registry port in memory. */

import { compareText } from '../../shared/dictionary.ts';
import type { ClusterRegistry, KeyvalZoneInfo, ReplicaInfo, ReplicaRecord } from '../cluster-registry.ts';
import type { MemoryBackend } from './memory-backend.ts';

interface ReplicaSlot {
  info: ReplicaInfo;
  lastHeartbeatMs: number;
  expiresAtMs: number;
}

export class MemoryRegistry implements ClusterRegistry {
  readonly #backend: MemoryBackend;
  readonly #zones = new Map<string, KeyvalZoneInfo>();
  readonly #replicas = new Map<string, ReplicaSlot>();

  constructor(backend: MemoryBackend) {
    this.#backend = backend;
  }

  async registerZones(zones: readonly KeyvalZoneInfo[]): Promise<void> {
    this.#backend.assertOpen();
    for (const zone of zones) {
      this.#zones.set(zone.name, {
        name: zone.name,
        type: zone.type,
        timeoutMs: zone.timeoutMs,
        sizeBytes: zone.sizeBytes,
      });
    }
  }

  async zones(): Promise<KeyvalZoneInfo[]> {
    this.#backend.assertOpen();
    return [...this.#zones.values()].map((z) => ({ ...z })).sort((a, b) => compareText(a.name, b.name));
  }

  async heartbeat(info: ReplicaInfo, ttlMs: number): Promise<void> {
    this.#backend.assertOpen();
    const nowMs = this.#backend.nowMs();
    this.#replicas.set(info.id, {
      info: structuredClone(info),
      lastHeartbeatMs: nowMs,
      expiresAtMs: nowMs + ttlMs,
    });
  }

  /** When `id`'s heartbeat lapses (-Infinity: never registered, or deregistered). */
  liveUntilMs(id: string): number {
    return this.#replicas.get(id)?.expiresAtMs ?? Number.NEGATIVE_INFINITY;
  }

  async deregister(id: string): Promise<void> {
    this.#backend.assertOpen();
    const slot = this.#replicas.get(id);
    if (slot) slot.expiresAtMs = Number.NEGATIVE_INFINITY;
  }

  async replicas(): Promise<ReplicaRecord[]> {
    this.#backend.assertOpen();
    const nowMs = this.#backend.nowMs();
    return [...this.#replicas.values()]
      .map((s) => ({
        ...structuredClone(s.info),
        lastHeartbeatMs: s.lastHeartbeatMs,
        live: nowMs < s.expiresAtMs,
      }))
      .sort((a, b) => compareText(a.id, b.id));
  }
}
