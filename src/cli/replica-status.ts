/**
 * A replica's `--status-listen`: the control-plane application in read-only mode over this replica's
 * own state (so `/api/9/http/limit_reqs/` and `/api/9/http/keyvals/` report this replica alone, in
 * NGINX Plus form), with the replica's metrics in the same `/metrics`.
 *
 * The port is bound first, before the configuration exists: a `--kubernetes` replica waiting for an
 * unreachable API server answers `/healthz` (so a liveness probe does not kill it) and `503` to the
 * rest, and a port in use stops the replica before it registers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readOnlyStore } from '../control-plane/read-only-store.ts';
import { buildControlPlaneHandler, type ControlPlaneHandler } from '../control-plane/server.ts';
import { ControlPlaneMetrics } from '../metrics/control-plane-metrics.ts';
import { ReplicaMetrics } from '../metrics/replica-metrics.ts';
import { localStoreView } from '../replica/cluster/local-store-view.ts';
import type { Replica } from '../replica/replica.ts';
import { bindError } from '../shared/bind-error.ts';
import { systemClock } from '../shared/clock.ts';

export interface ReplicaStatus {
  readonly url: string;
  readonly metrics: ReplicaMetrics;
  close(): Promise<void>;
}

export class StatusPort {
  readonly url: string;
  readonly #server: Server;
  #app: ControlPlaneHandler | null = null;

  private constructor(server: Server, url: string) {
    this.#server = server;
    this.url = url;
  }

  /** Binds `host:port` (`RL_ERR_BIND` when it cannot) and answers as a replica still starting. */
  static bind(host: string, port: number): Promise<StatusPort> {
    let status: StatusPort | null = null;
    const server = createServer((req, res) => {
      const app = status === null ? null : status.#app;
      if (app) app.handle(req, res);
      else answerStarting(req, res);
    });
    return new Promise((resolve, reject) => {
      server.once('error', (err) => reject(bindError(host, port, err)));
      server.listen(port, host, () => {
        const bound = (server.address() as AddressInfo).port;
        status = new StatusPort(server, `http://${host.includes(':') ? `[${host}]` : host}:${bound}`);
        resolve(status);
      });
    });
  }

  /** From now on the port serves `replica`'s status API. */
  async serve(replica: Replica): Promise<ReplicaStatus> {
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
    this.#app = await buildControlPlaneHandler({
      store: readOnlyStore(
        localStoreView({
          site: () => replica.site,
          head: () => replica.head(),
          info: () => replica.info(),
          nowMs: () => systemClock.nowMs(),
          counters: (zone) => replica.counters.statusCounters(zone),
        }),
      ),
      auth: { readOnly: true },
      metrics,
      storeLink: () => {
        const { connected, source, lastError } = replica.sync.state();
        return { connected, source, lastError };
      },
    });
    return { url: this.url, metrics: replicaMetrics, close: () => this.close() };
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeIdleConnections();
    await closed;
    await this.#app?.close();
  }
}

/** Before the configuration: the process is alive (`/healthz`), nothing else is there yet. */
function answerStarting(req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  const [code, body] = path === '/healthz' ? [200, { status: 'ok' }] : [503, { status: 'starting' }];
  res.writeHead(code, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}
