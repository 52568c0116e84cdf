/**
 * A replica's `--status-listen`: the control-plane application in read-only mode over this replica's
 * own state (so `/api/9/http/limit_reqs/` and `/api/9/http/keyvals/` report this replica alone, in
 * NGINX Plus form), with the replica's metrics in the same `/metrics`.
 */

import { readOnlyStore } from '../control-plane/read-only-store.ts';
import { startControlPlaneServer } from '../control-plane/server.ts';
import { ControlPlaneMetrics } from '../metrics/control-plane-metrics.ts';
import { ReplicaMetrics } from '../metrics/replica-metrics.ts';
import { localStoreView } from '../replica/local-store-view.ts';
import type { Replica } from '../replica/replica.ts';
import { systemClock } from '../shared/clock.ts';

export interface ReplicaStatus {
  readonly url: string;
  readonly metrics: ReplicaMetrics;
  close(): Promise<void>;
}

export async function startReplicaStatus(
  replica: Replica,
  host: string,
  port: number,
): Promise<ReplicaStatus> {
  const metrics = new ControlPlaneMetrics();
  const replicaMetrics = new ReplicaMetrics(metrics.registry, {
    zones: () => replica.site.limitReqZones.values(),
    connZones: () => replica.site.limitConnZones.values(),
    apiLimiters: () => replica.site.apiLimiters.values(),
    sync: () => replica.sync.state(),
    zoneSync: () => replica.limitSync.info(),
    upstreams: () => replica.upstreamInfo(),
    priorityLevels: () => [...replica.site.priorityLevels.values()].map((level) => level.info()),
    nowMs: () => systemClock.nowMs(),
    storeResets: () => replica.storeResets,
    locationRequests: () => replica.locationRequests.entries(),
  });
  const server = await startControlPlaneServer({
    store: readOnlyStore(
      localStoreView({
        site: () => replica.site,
        head: () => replica.head(),
        info: () => replica.info(),
        nowMs: () => systemClock.nowMs(),
      }),
    ),
    auth: { readOnly: true },
    metrics,
    host,
    port,
  });
  return { url: server.url, metrics: replicaMetrics, close: () => server.close() };
}
