/**
 * A small limitswitch cluster of real processes for fault tests: control planes and replicas on one
 * store URL (a test-owned Redis: standalone, Sentinel, or one a test kills and restarts), each replica
 * with its own state file, an upstream in this process that counts what reaches it, and helpers to
 * write switches and read each replica's own view (its read-only `--status-listen`).
 *
 * The configuration is the seed's pattern reduced to one switch zone: `limitreq_uri` (prefix) → a map
 * → the `limit_req_zone` key; realip trusts loopback, so a test picks the client address with
 * `X-Forwarded-For`.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../helpers/free-port.ts';
import {
  type ControlPlaneRun,
  type LimitswitchProcess,
  type ReplicaRun,
  startControlPlane,
  startReplica,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { waitFor } from '../helpers/wait-for.ts';

export const ZONE = 'limitreq_uri';

/** Per client address: 5 r/s, burst 5, `nodelay`; 503 past it. */
export function faultConfig(proxyPort: number, upstreamPort: number, keyvalSize = '64k'): string {
  return `worker_processes 1;
events {}
http {
    set_real_ip_from 127.0.0.1;
    real_ip_header X-Forwarded-For;
    keyval_zone zone=${ZONE}:${keyvalSize} type=prefix;
    keyval $uri $enablelimit zone=${ZONE};
    map $enablelimit $limit_key {
        default "";
        1 $binary_remote_addr;
    }
    limit_req_zone $limit_key zone=coffee:1m rate=5r/s;
    upstream backend {
        server 127.0.0.1:${upstreamPort};
    }
    server {
        listen 127.0.0.1:${proxyPort};
        location / {
            limit_req zone=coffee burst=5 nodelay;
            proxy_pass http://backend;
        }
    }
}
`;
}

export interface FaultReplica {
  readonly id: string;
  readonly configFile: string;
  readonly stateFile: string;
  run: ReplicaRun;
  /** The data path, `http://127.0.0.1:port`. */
  readonly url: string;
}

export interface FaultClusterOptions {
  readonly storeUrl: string;
  readonly replicas: number;
  readonly controlPlanes?: number;
  readonly replicaArgs?: readonly string[];
  /** The switch zone's `size`. Default `64k`. */
  readonly keyvalSize?: string;
}

export class FaultCluster {
  readonly dir = new TempDir();
  readonly storeUrl: string;
  readonly controlPlanes: ControlPlaneRun[] = [];
  readonly replicas: FaultReplica[] = [];
  readonly #replicaArgs: readonly string[];
  #upstream: Server | null = null;
  /** Requests the upstream received. */
  reached = 0;

  private constructor(options: FaultClusterOptions) {
    this.storeUrl = options.storeUrl;
    this.#replicaArgs = options.replicaArgs ?? [];
  }

  static async start(options: FaultClusterOptions): Promise<FaultCluster> {
    const cluster = new FaultCluster(options);
    try {
      await cluster.#startUpstream();
      const size = options.keyvalSize ?? '64k';
      const configFile = cluster.dir.write('control-plane.conf', faultConfig(1, 1, size));
      for (let i = 0; i < (options.controlPlanes ?? 1); i++) {
        cluster.controlPlanes.push(await startControlPlane(['--redis', options.storeUrl, '-c', configFile]));
      }
      for (let i = 1; i <= options.replicas; i++) {
        const id = `replica-${i}`;
        const port = await freePort();
        const replica: FaultReplica = {
          id,
          configFile: cluster.dir.write(`${id}.conf`, faultConfig(port, cluster.upstreamPort, size)),
          stateFile: cluster.dir.file(`${id}.state.json`),
          run: null as unknown as ReplicaRun,
          url: `http://127.0.0.1:${port}`,
        };
        replica.run = await cluster.#startReplica(replica);
        cluster.replicas.push(replica);
      }
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  get upstreamPort(): number {
    return (this.#upstream!.address() as AddressInfo).port;
  }

  /** The first control plane's URL. */
  get api(): string {
    return this.controlPlanes[0]!.url;
  }

  /** A Plus API write on control plane `plane` (default the first); the response. */
  write(method: 'POST' | 'PATCH' | 'DELETE', body: unknown, query = '', plane = 0): Promise<Response> {
    const url = `${this.controlPlanes[plane]!.url}/api/9/http/keyvals/${ZONE}${query}`;
    return fetch(url, {
      method,
      body: body === undefined ? undefined : JSON.stringify(body),
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(10_000),
    });
  }

  /** The switches as `replica` applies them (its own status API); null while it does not answer. */
  async switchesOn(replica: FaultReplica): Promise<Record<string, string> | null> {
    try {
      const res = await fetch(`${replica.run.statusUrl}/api/9/http/keyvals/${ZONE}`, {
        signal: AbortSignal.timeout(2000),
      });
      return res.ok ? ((await res.json()) as Record<string, string>) : null;
    } catch {
      return null;
    }
  }

  /** The switches as the control plane reads them from the store. */
  async switchesInStore(): Promise<Record<string, string>> {
    const res = await fetch(`${this.api}/api/9/http/keyvals/${ZONE}`, { signal: AbortSignal.timeout(5000) });
    if (!res.ok) throw new Error(`GET keyvals: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  }

  /** Resolves (with the time it took) once every replica shows `expected`. */
  everyReplicaShows(expected: Record<string, string>, timeoutMs = 10_000): Promise<number> {
    const want = JSON.stringify(sorted(expected));
    return waitFor(
      async () => {
        const views = await Promise.all(this.replicas.map((r) => this.switchesOn(r)));
        return views.every((v) => v !== null && JSON.stringify(sorted(v)) === want);
      },
      { timeoutMs, intervalMs: 10, message: `every replica showing ${want}` },
    );
  }

  /** One request through `replica` as client `addr`; the status. */
  async request(replica: FaultReplica, path: string, addr: string): Promise<number> {
    const res = await fetch(`${replica.url}${path}`, {
      headers: { 'x-forwarded-for': addr },
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    return res.status;
  }

  /** `/limit_reqs` of the whole cluster (the control plane, from the store). */
  async clusterCounters(): Promise<Record<string, Record<string, number>>> {
    const res = await fetch(`${this.api}/limit_reqs`, { signal: AbortSignal.timeout(5000) });
    return (await res.json()) as Record<string, Record<string, number>>;
  }

  /** Starts (again) the replica's process, on the same ports, config and state file. */
  async restartReplica(replica: FaultReplica, extraArgs: readonly string[] = []): Promise<void> {
    replica.run = await this.#startReplica(replica, extraArgs);
  }

  async stop(): Promise<void> {
    await Promise.all([
      ...this.replicas.map((r) => r.run?.process.stop()),
      ...this.controlPlanes.map((c) => c.process.stop()),
    ]);
    await new Promise<void>((resolve) =>
      this.#upstream ? this.#upstream.close(() => resolve()) : resolve(),
    );
    this.dir.remove();
  }

  #startReplica(replica: FaultReplica, extraArgs: readonly string[] = []): Promise<ReplicaRun> {
    return startReplica(replica.configFile, [
      '--redis',
      this.storeUrl,
      '--id',
      replica.id,
      '--state-file',
      replica.stateFile,
      ...this.#replicaArgs,
      ...extraArgs,
    ]);
  }

  async #startUpstream(): Promise<void> {
    const server = createServer((_req, res) => {
      this.reached++;
      res.end('ok\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.#upstream = server;
  }
}

/** The replica process's pino lines with `msg`, so far. */
export function logLines(process: LimitswitchProcess, msg: string): readonly Record<string, unknown>[] {
  return process.lines.filter((line) => line.msg === msg);
}

function sorted(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : 1)));
}
