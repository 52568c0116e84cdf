/**
 * What a replica reports of its cluster-wide limits (`limit_req_zone … sync`): in its heartbeat, on
 * `/api/9/stream/zone_sync` and as metrics. NGINX Plus's `/stream/zone_sync` is the model.
 */
export interface ZoneSyncInfo {
  /** Live replicas in the registry at last sight (itself included). */
  readonly nodesOnline: number;
  /** Exchanges sent to the store, and answered. */
  readonly msgsOut: number;
  readonly msgsIn: number;
  readonly zones: Readonly<Record<string, ZoneSyncZoneInfo>>;
}

export interface ZoneSyncZoneInfo {
  /** Keys with activity the store has not heard of yet. */
  readonly recordsPending: number;
  /** Keys the replica holds for the zone. */
  readonly recordsTotal: number;
  /** `fallback` while the store cannot be reached: every key at the default share. */
  readonly mode: 'synced' | 'fallback';
  /** The clock of the last answered exchange; null before any. */
  readonly lastSyncAtMs: number | null;
  readonly roundTripMs: number | null;
  /** The share of a key the store has no word of (1 / liveReplicas). */
  readonly defaultShare: number;
  /** Live replicas running the zone, as last read from the registry. */
  readonly liveReplicas: number;
}
