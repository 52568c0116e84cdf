/**
 * Cluster views beyond NGINX Plus: `/cluster/replicas` (who runs, at which revision) and `/audit`.
 */
import type { FastifyInstance } from 'fastify';
import type { AuditEntry } from '../../store/audit-trail.ts';
import type { ReplicaRecord } from '../../store/cluster-registry.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';
import { divergedReplicas } from '../replica-history.ts';

/**
 * live: heartbeat current and caught up; lagging: current but behind; diverged: its applied revision
 * is not the store's (another history: it reloads at its next check); gone: heartbeat expired.
 */
export type ReplicaState = 'live' | 'lagging' | 'diverged' | 'gone';

export function replicaState(replica: ReplicaRecord, revision: number, diverged: boolean): ReplicaState {
  if (!replica.live) return 'gone';
  if (diverged) return 'diverged';
  return replica.appliedRevision < revision ? 'lagging' : 'live';
}

export function clusterRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  addSpecRoute(app, ctx, 'getClusterReplicas', async () => {
    const [revision, replicas] = await Promise.all([
      ctx.gateway.revision(),
      ctx.gateway.call('replicas', (s) => s.registry.replicas()),
    ]);
    const diverged = await divergedReplicas(replicas, (r) =>
      ctx.gateway.call('commitAt', (s) => s.keyvals.commitAt(r)),
    );
    return {
      revision,
      replicas: replicas.map((r) => ({
        id: r.id,
        version: r.version,
        config_hash: r.configHash,
        ...(r.configHashWithoutListen === undefined
          ? {}
          : { config_hash_without_listen: r.configHashWithoutListen }),
        applied_revision: r.appliedRevision,
        started_at: new Date(r.startedAtMs).toISOString(),
        last_heartbeat: new Date(r.lastHeartbeatMs).toISOString(),
        state: replicaState(r, revision, diverged.has(r.id)),
        applied_commit: r.appliedCommit,
        keyval_zones: r.keyvalZones.map((z) => z.name),
        limit_req_zones: [...r.limitReqZones],
      })),
    };
  });

  addSpecRoute(app, ctx, 'getAudit', async (request) => {
    const { limit } = request.query as { limit: number };
    const entries = await ctx.gateway.call('audit', (s) => s.audit.recent(limit));
    return entries.map(auditView);
  });
}

function auditView(entry: AuditEntry) {
  return {
    time: new Date(entry.timeMs).toISOString(),
    token_id: entry.tokenId,
    client: entry.client,
    zone: entry.zone,
    key: entry.key,
    old: entry.old,
    new: entry.new,
    revision: entry.revision,
    reason: entry.reason,
  };
}
