/**
 * The seed's APF experiment on a replica process: examples/priority-and-fairness/nginx.conf in front
 * of an upstream that takes `serviceMs` a request, a control plane and Redis for the keyval switch,
 * and `clients` concurrent clients of one service account (`hammer`), each on its own kept-alive
 * connection, sending one request after another for `durationMs` — as the seed's 80 Python threads
 * did. Reports what the seed reports: requests, statuses, p50/p95/max latency of the 200s, the first
 * 429's Retry-After, and the level's rejection counter before and after.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { freePort } from '../helpers/free-port.ts';
import {
  type ControlPlaneRun,
  metricValue,
  type ReplicaRun,
  startControlPlane,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';

const EXAMPLE = new URL('../../examples/priority-and-fairness/nginx.conf', import.meta.url);

export interface RunFigures {
  readonly requests: number;
  readonly statuses: Record<number, number>;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly maxMs: number;
  readonly firstRetryAfter: string | null;
  readonly levelHeader: string | null;
}

export class ApfExperiment {
  readonly dir = new TempDir();
  redis!: RedisServer;
  controlPlane!: ControlPlaneRun;
  replica!: ReplicaRun;
  upstream!: Server;
  base = '';

  static async start(serviceMs: number): Promise<ApfExperiment> {
    const x = new ApfExperiment();
    x.upstream = createServer((_req, res) => {
      setTimeout(() => res.end('ok'), serviceMs);
    });
    await new Promise<void>((resolve) => x.upstream.listen(0, '127.0.0.1', resolve));
    const listen = await freePort();
    const upstreamPort = (x.upstream.address() as AddressInfo).port;
    const config = x.dir.write(
      'nginx.conf',
      readFileSync(EXAMPLE, 'utf8')
        .replace('server 127.0.0.1:8080;', `server 127.0.0.1:${upstreamPort};`)
        .replace('listen 8081;', `listen 127.0.0.1:${listen};`),
    );
    x.redis = await RedisServer.start();
    [x.controlPlane, x.replica] = await Promise.all([
      startControlPlane(['--redis', x.redis.url, '-c', config]),
      startReplica(config, ['--redis', x.redis.url, '--id', 'apf']),
    ]);
    x.base = `http://127.0.0.1:${x.replica.ports[String(listen)]}`;
    return x;
  }

  /** Sets the hammer account's switch through the control plane (added, or changed), applied on the replica. */
  async switchTo(value: string): Promise<void> {
    const write = (method: 'POST' | 'PATCH') =>
      request(`${this.controlPlane.url}/api/9/http/keyvals/apf?wait=applied&timeout=20s`, {
        method,
        body: JSON.stringify({ hammer: value }),
        headers: { 'content-type': 'application/json' },
      });
    let res = await write('POST');
    if (res.statusCode === 409) {
      await res.body.dump();
      res = await write('PATCH');
    }
    const text = await res.body.text();
    if (res.statusCode !== 201 && res.statusCode !== 204)
      throw new Error(`apf switch: ${res.statusCode} ${text}`);
  }

  async metric(series: string): Promise<number> {
    const text = await (await request(`${this.replica.statusUrl}/metrics`)).body.text();
    return metricValue(text, series);
  }

  /** `clients` loops of one account for `durationMs`. */
  async load(
    account: string,
    clients: number,
    durationMs: number,
    path = '/api/v1/pods',
  ): Promise<RunFigures> {
    const agent = new Agent({ connections: clients, pipelining: 1 });
    const latencies: number[] = [];
    const statuses: Record<number, number> = {};
    let firstRetryAfter: string | null = null;
    let levelHeader: string | null = null;
    const endMs = performance.now() + durationMs;
    const loop = async () => {
      while (performance.now() < endMs) {
        const startedMs = performance.now();
        const res = await request(`${this.base}${path}`, {
          dispatcher: agent,
          headers: { host: 'api.example.com', 'x-service-account': account },
        });
        await res.body.dump();
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        levelHeader ??= (res.headers['x-limitswitch-priority-level'] as string | undefined) ?? null;
        if (res.statusCode === 200) latencies.push(performance.now() - startedMs);
        else if (res.statusCode === 429) firstRetryAfter ??= (res.headers['retry-after'] as string) ?? null;
      }
    };
    await Promise.all(Array.from({ length: clients }, loop));
    await agent.close();
    latencies.sort((a, b) => a - b);
    const at = (p: number) =>
      latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)] ?? 0;
    return {
      requests: Object.values(statuses).reduce((a, b) => a + b, 0),
      statuses,
      p50Ms: at(0.5),
      p95Ms: at(0.95),
      maxMs: latencies.at(-1) ?? 0,
      firstRetryAfter,
      levelHeader,
    };
  }

  /** One request as `account` to `path`: its status and the level it went to. */
  async one(account: string, path = '/api/v1/pods'): Promise<{ status: number; level: string | null }> {
    const res = await request(`${this.base}${path}`, {
      headers: { host: 'api.example.com', 'x-service-account': account },
    });
    await res.body.dump();
    return { status: res.statusCode, level: (res.headers['x-limitswitch-priority-level'] as string) ?? null };
  }

  async stop(): Promise<void> {
    await stopAll();
    await this.redis?.stop();
    this.upstream?.close();
    this.dir.remove();
  }
}
