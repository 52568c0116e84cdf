/**
 * Replica processes sharing one store, for cluster-wide limit tests: one `limit_req_zone` (synced or
 * not) keyed by the client address, behind a keyval switch on the URI, in front of an upstream in
 * this process; and a client that sends one request stream, paced, round-robin or otherwise over the
 * replicas — and, when asked, the same stream to one real nginx with the same zone (the ideal).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from '../helpers/free-port.ts';
import {
  type ControlPlaneRun,
  type ReplicaRun,
  startControlPlane,
  startReplica,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';

export const SWITCHES = 'switches';

export interface ZoneSpec {
  /** `rate=` in r/s. */
  readonly rate: number;
  readonly burst: number;
  readonly sync: boolean;
  /** Behind a keyval switch on the URI (off until a control plane turns it on). */
  readonly switched?: boolean;
}

/**
 * The http body: `/` limited by the client address (`/dry/` the same zone in dry run) — with `switched`, only while the keyval switch
 * for its prefix is "1" (NGINX Plus's keyval, which the nginx oracle does not have).
 */
export function limitedHttp(port: number, upstreamPort: number, zone: ZoneSpec): string {
  const key = zone.switched
    ? `    keyval_zone zone=${SWITCHES}:64k type=prefix;
    keyval $uri $enabled zone=${SWITCHES};
    map $enabled $limit_key {
        default "";
        1 $binary_remote_addr;
    }
`
    : `    map $uri $limit_key {
        default $binary_remote_addr;
    }
`;
  return `${key}    limit_req_zone $limit_key zone=api:1m rate=${zone.rate}r/s${zone.sync ? ' sync' : ''};
    upstream backend {
        server 127.0.0.1:${upstreamPort};
    }
    server {
        listen 127.0.0.1:${port};
        location / {
            limit_req zone=api burst=${zone.burst} nodelay;
            proxy_pass http://backend;
        }
        location /dry/ {
            limit_req zone=api burst=${zone.burst} nodelay;
            limit_req_dry_run on;
            proxy_pass http://backend;
        }
    }
`;
}

function replicaConfig(port: number, upstreamPort: number, zone: ZoneSpec): string {
  return `worker_processes 1;
events {}
http {
    set_real_ip_from 127.0.0.1;
    real_ip_header X-Forwarded-For;
${limitedHttp(port, upstreamPort, zone)}}
`;
}

export interface FleetReplica {
  readonly id: string;
  readonly url: string;
  readonly run: ReplicaRun;
}

export class Fleet {
  readonly dir = new TempDir();
  readonly replicas: FleetReplica[] = [];
  readonly #storeUrl: string;
  readonly #zone: ZoneSpec;
  readonly #upstream: Server;
  controlPlane: ControlPlaneRun | null = null;
  /** Every replica this fleet ran (removed ones too: their counters stay the cluster's). */
  readonly #ids = new Set<string>();

  private constructor(storeUrl: string, zone: ZoneSpec, upstream: Server) {
    this.#storeUrl = storeUrl;
    this.#zone = zone;
    this.#upstream = upstream;
  }

  /** `replicas` replica processes named `<idPrefix>1…`; with `controlPlane`, a control plane too. */
  static async start(
    storeUrl: string,
    zone: ZoneSpec,
    replicas: number,
    options: {
      idPrefix?: string;
      controlPlane?: boolean;
      /** Per replica (by index): how it reaches the store, its process's environment. */
      each?: (index: number) => { storeUrl?: string; env?: Record<string, string> };
    } = {},
  ): Promise<Fleet> {
    const upstream = createServer((_req, res) => res.end('ok\n'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const fleet = new Fleet(storeUrl, zone, upstream);
    try {
      if (options.controlPlane) {
        const config = fleet.dir.write('control-plane.conf', replicaConfig(1, 1, zone));
        fleet.controlPlane = await startControlPlane(['--redis', storeUrl, '-c', config]);
      }
      for (let i = 1; i <= replicas; i++)
        await fleet.add(`${options.idPrefix ?? 'r'}${i}`, options.each?.(i - 1));
    } catch (err) {
      await fleet.stop();
      throw err;
    }
    return fleet;
  }

  get upstreamPort(): number {
    return (this.#upstream.address() as AddressInfo).port;
  }

  /**
   * Starts one more replica (a scale-up: no other replica reloads); `storeUrl` to reach the store
   * another way (through a proxy), `env` for its process.
   */
  async add(
    id: string,
    options: { storeUrl?: string; env?: Record<string, string> } = {},
  ): Promise<FleetReplica> {
    const port = await freePort();
    const config = this.dir.write(`${id}.conf`, replicaConfig(port, this.upstreamPort, this.#zone));
    const run = await startReplica(config, ['--redis', options.storeUrl ?? this.#storeUrl, '--id', id], {
      env: options.env,
    });
    const replica = { id, url: `http://127.0.0.1:${port}`, run };
    this.replicas.push(replica);
    this.#ids.add(id);
    return replica;
  }

  /** `/api/9/stream/zone_sync` of one replica's status listen. */
  async zoneSync(replica: FleetReplica): Promise<ZoneSyncBody> {
    const res = await fetch(`${replica.run.statusUrl}/api/9/stream/zone_sync`, {
      signal: AbortSignal.timeout(2000),
    });
    return (await res.json()) as ZoneSyncBody;
  }

  /** Removes a replica (a scale-down: it stops gracefully and deregisters). */
  async remove(replica: FleetReplica): Promise<void> {
    this.replicas.splice(this.replicas.indexOf(replica), 1);
    await replica.run.process.stop();
  }

  /** This fleet's part of the cluster's counters for the zone (`/limit_reqs?by=replica`, summed). */
  async clusterCounters(): Promise<Record<'passed' | 'rejected' | 'rejected_dry_run', number>> {
    const res = await fetch(`${this.controlPlane!.url}/limit_reqs?by=replica`, {
      signal: AbortSignal.timeout(5000),
    });
    const byReplica = (await res.json()) as Record<string, Record<string, Record<string, number>>>;
    const sum = { passed: 0, rejected: 0, rejected_dry_run: 0 };
    for (const id of this.#ids) {
      const zone = byReplica[id]?.api;
      for (const field of Object.keys(sum) as (keyof typeof sum)[]) sum[field] += zone?.[field] ?? 0;
    }
    return sum;
  }

  /** Sets the keyval switch for `prefix` through the control plane, and waits until every replica applies it. */
  async setSwitch(prefix: string, value: string): Promise<void> {
    const write = (method: string) =>
      fetch(`${this.controlPlane!.url}/api/9/http/keyvals/${SWITCHES}?wait=applied`, {
        method,
        body: JSON.stringify({ [prefix]: value }),
        headers: { 'content-type': 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
    let res = await write('PATCH');
    if (res.status === 404) res = await write('POST');
    if (res.status !== 204 && res.status !== 201)
      throw new Error(`switch: ${res.status} ${await res.text()}`);
  }

  async stop(): Promise<void> {
    await Promise.all([...this.replicas.map((r) => r.run.process.stop()), this.controlPlane?.process.stop()]);
    await new Promise<void>((resolve) => this.#upstream.close(() => resolve()));
    this.dir.remove();
  }
}

export interface ZoneSyncBody {
  status?: { nodes_online: number; msgs_in: number; msgs_out: number };
  zones?: Record<
    string,
    { mode: string; live_replicas: number; records_total: number; last_sync_age_ms: number | null }
  >;
}

/** One real nginx with the same zone, not synced: what one nginx admits of the merged stream. */
export function startIdealNginx(upstreamPort: number, zone: ZoneSpec): Promise<RunningNginx> {
  return startNginx({
    http: (port) => limitedHttp(port, upstreamPort, { ...zone, sync: false, switched: false }),
  });
}

export interface StreamResult {
  /** Per target: requests answered 200, and other statuses. */
  readonly admitted: number[];
  readonly refused: number[];
}

/**
 * Sends `total` requests, one every `gapMs`, from one client address; request `i` goes to
 * `targets[j][pick(i)]` for every target list `j` at once (the same arrival stream to each).
 */
export async function sendStream(
  targets: readonly (readonly string[])[],
  options: { total: number; gapMs: number; addr: string; path: string; pick: (i: number) => number },
): Promise<StreamResult> {
  const admitted = targets.map(() => 0);
  const refused = targets.map(() => 0);
  const inFlight: Promise<void>[] = [];
  const startMs = performance.now();
  for (let i = 0; i < options.total; i++) {
    const dueMs = startMs + i * options.gapMs;
    const waitMs = dueMs - performance.now();
    // The arrival process itself: request i leaves at its time.
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    for (const [j, urls] of targets.entries()) {
      const url = urls[options.pick(i) % urls.length]!;
      inFlight.push(
        fetch(`${url}${options.path}`, {
          headers: { 'x-forwarded-for': options.addr },
          signal: AbortSignal.timeout(10_000),
        }).then(
          async (res) => {
            await res.arrayBuffer();
            if (res.status === 200) admitted[j]!++;
            else refused[j]!++;
          },
          (err: Error) => {
            // undici says only "fetch failed": what failed is in its cause
            const cause = err.cause as { code?: string; message?: string } | undefined;
            throw new Error(`${url}${options.path}: ${err.message} (${cause?.code ?? cause?.message})`);
          },
        ),
      );
    }
  }
  await Promise.all(inFlight);
  return { admitted, refused };
}

/** One request of a stream: when it was sent (ms since the stream began) and whether it was admitted. */
export interface Sent {
  readonly atMs: number;
  readonly admitted: boolean;
}

/**
 * `clients` client addresses (`10.<net>.0.1`, `10.<net>.0.2`, …), each sending `perClientRps`
 * requests a second for `durationMs`, paced and interleaved; request `i` of client `c` goes to
 * `targets[j][(i + c) % targets[j].length]` for every target list `j` at once (the same arrival
 * stream to each). Resolves with every request per target list; `onStarted` hears when the stream
 * began (performance.now()), for the faults timed against it.
 */
export async function sendClients(
  targets: readonly (readonly string[])[],
  options: {
    clients: number;
    perClientRps: number;
    durationMs: number;
    net: number;
    onStarted?: (startedMs: number) => void;
  },
): Promise<Sent[][]> {
  const out: Sent[][] = targets.map(() => []);
  const inFlight: Promise<void>[] = [];
  const gapMs = 1000 / (options.perClientRps * options.clients);
  const total = Math.floor(options.durationMs / gapMs);
  const startedMs = performance.now();
  options.onStarted?.(startedMs);
  for (let n = 0; n < total; n++) {
    const dueMs = startedMs + n * gapMs;
    const waitMs = dueMs - performance.now();
    if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
    const client = n % options.clients;
    const i = Math.floor(n / options.clients);
    const atMs = n * gapMs;
    for (const [j, urls] of targets.entries()) {
      const url = urls[(i + client) % urls.length]!;
      inFlight.push(
        fetch(`${url}/`, {
          headers: { 'x-forwarded-for': `10.${options.net}.0.${client + 1}` },
          signal: AbortSignal.timeout(10_000),
        }).then(
          async (res) => {
            await res.arrayBuffer();
            out[j]!.push({ atMs, admitted: res.status === 200 });
          },
          () => {
            out[j]!.push({ atMs, admitted: false });
          },
        ),
      );
    }
  }
  await Promise.all(inFlight);
  return out;
}

/** Requests admitted among those sent in [fromMs, toMs) of the stream. */
export function admittedBetween(sent: readonly Sent[], fromMs: number, toMs: number): number {
  let n = 0;
  for (const s of sent) if (s.admitted && s.atMs >= fromMs && s.atMs < toMs) n++;
  return n;
}

/** The sync interval (T) and how long the store waits before it holds a silent replica's part (L). */
const SYNC_INTERVAL_S = 0.1;
const LOST_AFTER_S = 1.5;

/**
 * docs/cluster-limits.md: in any window of W seconds the fleet admits at most, per key,
 * `1 + b + r·W + (N − 1) + b + 2·r·T`, and, while one replica of share s is cut off from the store,
 * `r·L·s` more (what the others took of its part before the store counted it cut off).
 */
export function perKeyBound(zone: ZoneSpec, replicas: number, windowS: number, cutOffShare = 0): number {
  const r = zone.rate;
  const b = zone.burst;
  return 1 + b + r * windowS + (replicas - 1) + b + 2 * r * SYNC_INTERVAL_S + r * LOST_AFTER_S * cutOffShare;
}
