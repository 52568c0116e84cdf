/**
 * The cafe example as a cluster of separate processes: a real `redis-server`, one `limitswitch
 * control-plane`, N `limitswitch replica`s (each on a copy of examples/cafe/nginx.conf with free ports
 * and realip trusting loopback, so tests choose the client address with X-Forwarded-For) and the
 * tea/coffee upstreams in a process of their own. Every child is killed when the test process exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, freePorts } from '../helpers/free-port.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const BIN = new URL('../../bin/limitswitch.js', import.meta.url).pathname;
export const CAFE_CONFIG = new URL('../../examples/cafe/nginx.conf', import.meta.url).pathname;
/** Process start-up loads tsx and compiles on a cold cache: generous on a loaded machine. */
const START_TIMEOUT_MS = 60_000;

const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** One child process with its stderr kept for failure messages. */
export class Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly exited: Promise<number | null>;
  #stderr = '';

  constructor(name: string, args: string[]) {
    this.name = name;
    this.process = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(this.process);
    this.process.stderr?.on('data', (chunk) => {
      this.#stderr += String(chunk);
    });
    this.process.stdout?.resume();
    this.exited = new Promise((resolve) => {
      this.process.once('exit', (code) => {
        children.delete(this.process);
        resolve(code);
      });
    });
  }

  get stderr(): string {
    return this.#stderr;
  }

  /** SIGTERM and the exit code (SIGKILL after `graceMs`, giving null). */
  async stop(graceMs = 15_000): Promise<number | null> {
    if (!children.has(this.process)) return this.exited;
    this.process.kill('SIGTERM');
    const timer = setTimeout(() => this.process.kill('SIGKILL'), graceMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}

export interface CafeReplica {
  readonly id: string;
  readonly child: Child;
  /** The data path (cafe.example.com). */
  readonly url: string;
  /** `--status-listen`: read-only Plus API of this replica alone. */
  readonly statusUrl: string;
}

export interface CafeCluster {
  readonly redis: RedisServer;
  readonly controlPlane: Child;
  readonly controlPlaneUrl: string;
  readonly replicas: readonly CafeReplica[];
  readonly upstreams: Child;
  stop(): Promise<Record<string, number | null>>;
}

/**
 * examples/cafe/nginx.conf with the proxy on `proxyPort`, the upstreams on the given ports, and
 * `set_real_ip_from 127.0.0.1; real_ip_header X-Forwarded-For;`. Throws when the example changed
 * shape, so the test cannot silently run some other configuration.
 */
export function cafeConfigCopy(proxyPort: number, teaPort: number, coffeePort: number): string {
  const replacements: [string, string][] = [
    ['http {\n', 'http {\n    set_real_ip_from 127.0.0.1;\n    real_ip_header X-Forwarded-For;\n\n'],
    ['server 127.0.0.1:8091;', `server 127.0.0.1:${teaPort};`],
    ['server 127.0.0.1:8092;', `server 127.0.0.1:${coffeePort};`],
    ['listen 8081;', `listen 127.0.0.1:${proxyPort};`],
  ];
  let text = readFileSync(CAFE_CONFIG, 'utf8');
  for (const [from, to] of replacements) {
    if (text.split(from).length !== 2) throw new Error(`examples/cafe/nginx.conf: expected one "${from}"`);
    text = text.replace(from, to);
  }
  return text;
}

/** NGINX's cafe demo app (answers with its name and URI), tea and coffee, in one process. */
const UPSTREAMS_SCRIPT = `
const http = require('node:http');
const apps = JSON.parse(process.argv[1]);
let listening = 0;
for (const [name, port] of apps) {
  http.createServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end('Server name: ' + name + '\\nURI: ' + req.url + '\\n');
  }).listen(port, '127.0.0.1', () => { if (++listening === apps.length) console.log('ready'); });
}
process.once('SIGTERM', () => process.exit(0));
`;

async function answers(url: string): Promise<boolean> {
  return fetch(url).then(
    (r) => r.ok,
    () => false,
  );
}

/** What a test may add to the cluster; ports chosen beforehand let other servers point at it early. */
export interface CafeClusterOptions {
  /** More `limitswitch control-plane` arguments (`--alert-rules FILE`, `--token-file FILE`, …). */
  readonly controlPlaneArgs?: readonly string[];
  /** The control plane's port; default a free one. */
  readonly controlPlanePort?: number;
  /** Each replica's `--status-listen` port, in order; default free ones. */
  readonly statusPorts?: readonly number[];
}

export async function startCafeCluster(
  replicaCount: number,
  options: CafeClusterOptions = {},
): Promise<CafeCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-cafe-'));
  const redis = await RedisServer.start();
  const [teaPort, coffeePort] = (await freePorts(2)) as [number, number];
  const cpPort = options.controlPlanePort ?? (await freePort());
  const upstreams = new Child('upstreams', [
    '-e',
    UPSTREAMS_SCRIPT,
    JSON.stringify([
      ['tea', teaPort],
      ['coffee', coffeePort],
    ]),
  ]);
  const controlPlaneUrl = `http://127.0.0.1:${cpPort}`;
  const controlPlane = new Child('control-plane', [
    BIN,
    'control-plane',
    '--redis',
    redis.url,
    '-c',
    CAFE_CONFIG,
    '--listen',
    `127.0.0.1:${cpPort}`,
    ...(options.controlPlaneArgs ?? []),
  ]);
  const replicas: CafeReplica[] = [];
  for (let i = 1; i <= replicaCount; i++) {
    const proxyPort = await freePort();
    const statusPort = options.statusPorts?.[i - 1] ?? (await freePort());
    const file = join(dir, `replica-${i}.conf`);
    writeFileSync(file, cafeConfigCopy(proxyPort, teaPort, coffeePort));
    const id = `replica-${i}`;
    const child = new Child(id, [
      BIN,
      'replica',
      '-c',
      file,
      '--redis',
      redis.url,
      '--id',
      id,
      '--status-listen',
      `127.0.0.1:${statusPort}`,
    ]);
    replicas.push({
      id,
      child,
      url: `http://127.0.0.1:${proxyPort}`,
      statusUrl: `http://127.0.0.1:${statusPort}`,
    });
  }
  const all = [upstreams, controlPlane, ...replicas.map((r) => r.child)];
  const stop = async (): Promise<Record<string, number | null>> => {
    const codes: Record<string, number | null> = {};
    // Replicas first: their last flush and deregistration go to a store that is still there.
    for (const r of replicas) codes[r.id] = await r.child.stop();
    codes['control-plane'] = await controlPlane.stop();
    codes.upstreams = await upstreams.stop();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
    return codes;
  };
  try {
    const deadline = { timeoutMs: START_TIMEOUT_MS, intervalMs: 50 };
    await waitFor(() => answers(`${controlPlaneUrl}/readyz`), { ...deadline, message: 'the control plane' });
    for (const r of replicas) {
      await waitFor(() => answers(`${r.statusUrl}/readyz`), { ...deadline, message: `${r.id} ready` });
    }
    // ?wait=applied waits for the replicas the store knows: all of them must have reported.
    await waitFor(
      async () => {
        const res = await fetch(`${controlPlaneUrl}/cluster/replicas`);
        const body = (await res.json()) as { replicas: { id: string; state: string }[] };
        return body.replicas.filter((r) => r.state === 'live').length === replicaCount;
      },
      { ...deadline, message: `${replicaCount} live replicas in /cluster/replicas` },
    );
    await waitFor(() => answers(`http://127.0.0.1:${teaPort}/`), { ...deadline, message: 'upstreams' });
  } catch (err) {
    const exited = all.filter((c) => !children.has(c.process));
    const detail = exited.map((c) => `${c.name} exited: ${c.stderr}`).join('\n');
    await stop();
    throw new Error(`${(err as Error).message}\n${detail}`);
  }
  return { redis, controlPlane, controlPlaneUrl, replicas, upstreams, stop };
}
