/**
 * `/api/{version}/stream/zone_sync`: the cluster-wide limits (`limit_req_zone … sync`) in NGINX
 * Plus's shape, from the live replicas' heartbeats: `status.nodes_online`, `msgs_in`/`msgs_out`,
 * and per zone `records_pending` (summed) and `records_total` (the most any replica holds), with
 * limitswitch's own fields beside them — whether a replica has fallen back to its share because the
 * store cannot be reached, the oldest last sync, the slowest round trip. A replica's status listen
 * answers the same for itself alone. Nothing synced: `{}`, as before.
 */
import type { FastifyInstance } from 'fastify';
import type { ZoneSyncZoneInfo } from '../../engine/limit-req/zone-sync-info.ts';
import type { ReplicaRecord } from '../../store/cluster-registry.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';

interface ZoneSyncZone {
  records_pending: number;
  records_total: number;
  mode: 'synced' | 'fallback';
  fallback_replicas: number;
  synced_replicas: number;
  live_replicas: number;
  last_sync_age_ms: number | null;
  round_trip_ms: number | null;
}

export function zoneSyncRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  addSpecRoute(app, ctx, 'getStreamZoneSync', async () => {
    const nowMs = ctx.clock.nowMs();
    const replicas = await ctx.gateway.call('replicas', (s) => s.registry.replicas());
    return zoneSyncReport(replicas, nowMs);
  });
}

export function zoneSyncReport(replicas: readonly ReplicaRecord[], nowMs: number): object {
  const syncing = replicas.filter((r) => r.live && r.zoneSync);
  if (syncing.length === 0) return {};
  const zones: Record<string, ZoneSyncZone> = Object.create(null);
  let nodesOnline = 0;
  let msgsIn = 0;
  let msgsOut = 0;
  for (const replica of syncing) {
    const info = replica.zoneSync!;
    nodesOnline = Math.max(nodesOnline, info.nodesOnline);
    msgsIn += info.msgsIn;
    msgsOut += info.msgsOut;
    for (const [name, zone] of Object.entries(info.zones)) {
      zones[name] = merged(zones[name], zone, nowMs);
    }
  }
  return { status: { nodes_online: nodesOnline, msgs_in: msgsIn, msgs_out: msgsOut }, zones };
}

function merged(sum: ZoneSyncZone | undefined, zone: ZoneSyncZoneInfo, nowMs: number): ZoneSyncZone {
  const fallback = zone.mode === 'fallback' ? 1 : 0;
  const ageMs = zone.lastSyncAtMs === null ? null : Math.max(0, nowMs - zone.lastSyncAtMs);
  if (sum === undefined) {
    return {
      records_pending: zone.recordsPending,
      records_total: zone.recordsTotal,
      mode: zone.mode,
      fallback_replicas: fallback,
      synced_replicas: 1 - fallback,
      live_replicas: zone.liveReplicas,
      last_sync_age_ms: ageMs,
      round_trip_ms: zone.roundTripMs,
    };
  }
  return {
    records_pending: sum.records_pending + zone.recordsPending,
    records_total: Math.max(sum.records_total, zone.recordsTotal),
    mode: sum.mode === 'fallback' || zone.mode === 'fallback' ? 'fallback' : 'synced',
    fallback_replicas: sum.fallback_replicas + fallback,
    synced_replicas: sum.synced_replicas + 1 - fallback,
    live_replicas: Math.max(sum.live_replicas, zone.liveReplicas),
    last_sync_age_ms: maxOrNull(sum.last_sync_age_ms, ageMs),
    round_trip_ms: maxOrNull(sum.round_trip_ms, zone.roundTripMs),
  };
}

function maxOrNull(a: number | null, b: number | null): number | null {
  if (a === null || b === null) return a ?? b;
  return Math.max(a, b);
}
