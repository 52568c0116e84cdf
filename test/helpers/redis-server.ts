/**
 * Real `redis-server` processes for tests: on free loopback ports, in temporary directories, never the
 * machine's own Redis. Kill, restart on the same port, pause (SIGSTOP) and resume (SIGCONT); every
 * process is killed and every directory removed when the test process exits, whatever happens.
 * Also a 3-master Redis Cluster and a master watched by one Sentinel.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.ts';

const run = promisify(execFile);
const live = new Set<ChildProcess>();
const dirs = new Set<string>();

process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

export interface RedisServerOptions {
  /** AOF with fsync on every write, so a SIGKILL loses nothing. Default false (no persistence). */
  readonly persistence?: boolean;
  /** More `redis-server` arguments. */
  readonly args?: readonly string[];
  /** The binary; `redis-sentinel` makes a Sentinel from `config`. */
  readonly binary?: 'redis-server' | 'redis-sentinel';
  /** Config file content, written to `<dir>/redis.conf` and passed first. */
  readonly config?: string;
}

export class RedisServer {
  readonly port: number;
  readonly dir: string;
  readonly #options: RedisServerOptions;
  #child: ChildProcess | null = null;
  #exited: Promise<void> = Promise.resolve();

  private constructor(port: number, dir: string, options: RedisServerOptions) {
    this.port = port;
    this.dir = dir;
    this.#options = options;
  }

  /** Start one server on a free port and wait until it answers PING. */
  static async start(options: RedisServerOptions = {}): Promise<RedisServer> {
    const dir = mkdtempSync(join(tmpdir(), 'limitswitch-redis-'));
    dirs.add(dir);
    const server = new RedisServer(await freePort(), dir, options);
    await server.restart();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.#child !== null;
  }

  /** (Re)start on the same port and directory; waits for PING (after AOF loading). */
  async restart(): Promise<void> {
    if (this.#child) throw new Error(`redis on ${this.port} is already running`);
    const args: string[] = [];
    if (this.#options.config !== undefined) {
      const file = join(this.dir, 'redis.conf');
      writeFileSync(file, this.#options.config);
      args.push(file);
    }
    args.push('--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--logfile', '');
    if (this.#options.binary !== 'redis-sentinel') {
      args.push('--save', '', '--daemonize', 'no', '--protected-mode', 'no');
      if (this.#options.persistence) args.push('--appendonly', 'yes', '--appendfsync', 'always');
      else args.push('--appendonly', 'no');
    }
    args.push(...(this.#options.args ?? []));
    const child = spawn(this.#options.binary ?? 'redis-server', args, {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk) => {
      stderr += String(chunk);
    });
    live.add(child);
    this.#child = child;
    this.#exited = new Promise((resolve) => {
      child.once('exit', () => {
        live.delete(child);
        if (this.#child === child) this.#child = null;
        resolve();
      });
    });
    const deadline = Date.now() + 15_000;
    while (!(await ping(this.port))) {
      if (!this.#child) throw new Error(`redis-server on ${this.port} exited: ${stderr}`);
      if (Date.now() > deadline)
        throw new Error(`redis-server on ${this.port} did not answer PING: ${stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Kill (SIGKILL by default: no shutdown save) and wait for the process to exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const child = this.#child;
    if (!child) return;
    child.kill('SIGCONT');
    child.kill(signal);
    await this.#exited;
  }

  /** Freeze the process: connections stay open, nothing answers. */
  pause(): void {
    this.#child?.kill('SIGSTOP');
  }

  resume(): void {
    this.#child?.kill('SIGCONT');
  }

  /** `redis-cli -p <port> …`, stdout trimmed. */
  async cli(...args: string[]): Promise<string> {
    const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(this.port), ...args]);
    return stdout.trim();
  }

  /** Kill and remove the directory. */
  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
    dirs.delete(this.dir);
  }
}

/** True when something on `port` answers PING with PONG (not LOADING). */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += String(chunk);
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

/** Three masters, slots split by `redis-cli --cluster create`; `url` is a `redis+cluster://` URL. */
export class RedisClusterServers {
  readonly nodes: readonly RedisServer[];

  private constructor(nodes: RedisServer[]) {
    this.nodes = nodes;
  }

  static async start(): Promise<RedisClusterServers> {
    const nodes: RedisServer[] = [];
    for (let i = 0; i < 3; i++) {
      // The bus port must be chosen too: port + 10000 may be taken or out of range.
      const busPort = await freePort();
      nodes.push(
        await RedisServer.start({
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '2000',
            '--cluster-port',
            String(busPort),
          ],
        }),
      );
    }
    const cluster = new RedisClusterServers(nodes);
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    const deadline = Date.now() + 20_000;
    for (const node of nodes) {
      while (!(await node.cli('cluster', 'info')).includes('cluster_state:ok')) {
        if (Date.now() > deadline) throw new Error('redis cluster did not reach cluster_state:ok');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return cluster;
  }

  get url(): string {
    return `redis+cluster://${this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`;
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
  }
}

/**
 * A master (optionally with replicas) and one Sentinel watching it as `mymaster`; `url` is a
 * `redis+sentinel://` URL. With a replica, killing the master makes the Sentinel promote it.
 * Replication starts at once (no diskless-sync delay), so a resync after a failover is quick.
 */
export class RedisSentinelServers {
  readonly master: RedisServer;
  /** The first replica (the one `SENTINEL FAILOVER` promotes when it is alone), or null. */
  readonly replica: RedisServer | null;
  readonly replicas: readonly RedisServer[];
  readonly sentinel: RedisServer;

  private constructor(master: RedisServer, replicas: readonly RedisServer[], sentinel: RedisServer) {
    this.master = master;
    this.replica = replicas[0] ?? null;
    this.replicas = replicas;
    this.sentinel = sentinel;
  }

  /** `replica: true` is one replica; `replicas: n` as many. */
  static async start(options: { replica?: boolean; replicas?: number } = {}): Promise<RedisSentinelServers> {
    const noDelay = ['--repl-diskless-sync-delay', '0'];
    const master = await RedisServer.start({ args: noDelay });
    const replicas: RedisServer[] = [];
    for (let i = 0; i < (options.replicas ?? (options.replica ? 1 : 0)); i++) {
      replicas.push(
        await RedisServer.start({ args: [...noDelay, '--replicaof', '127.0.0.1', String(master.port)] }),
      );
    }
    const sentinel = await RedisServer.start({
      binary: 'redis-sentinel',
      config: [
        `sentinel monitor mymaster 127.0.0.1 ${master.port} 1`,
        'sentinel down-after-milliseconds mymaster 1000',
        'sentinel failover-timeout mymaster 5000',
        '',
      ].join('\n'),
    });
    const servers = new RedisSentinelServers(master, replicas, sentinel);
    await servers.waitForMaster(master.port);
    for (const replica of replicas) {
      const deadline = Date.now() + 20_000;
      while (!(await sentinel.cli('sentinel', 'replicas', 'mymaster')).includes(String(replica.port))) {
        if (Date.now() > deadline) throw new Error('sentinel does not know the replica');
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    return servers;
  }

  /**
   * Wait until every replica has applied all the master has written. (A `WAIT` from redis-cli would
   * not tell: its connection wrote nothing. Redis 7 starts a new replica's command stream on its
   * first acknowledgement, up to a second after the sync.)
   */
  async replicated(timeoutMs = 10_000): Promise<void> {
    const offset = (info: string, field: string) =>
      Number(info.match(new RegExp(`${field}:(\\d+)`))?.[1] ?? -1);
    const deadline = Date.now() + timeoutMs;
    const target = offset(await this.master.cli('info', 'replication'), 'master_repl_offset');
    for (const replica of this.replicas) {
      while (offset(await replica.cli('info', 'replication'), 'slave_repl_offset') < target) {
        if (Date.now() > deadline) throw new Error(`replica ${replica.port} is behind offset ${target}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }

  /** Wait until the Sentinel names the server on `port` as the master. */
  async waitForMaster(port: number, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (
      !(await this.sentinel.cli('sentinel', 'get-master-addr-by-name', 'mymaster')).includes(String(port))
    ) {
      if (Date.now() > deadline) throw new Error(`sentinel does not name ${port} as master`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  get url(): string {
    return `redis+sentinel://127.0.0.1:${this.sentinel.port}/mymaster`;
  }

  /** The server Sentinel names as master now. */
  async currentMaster(): Promise<RedisServer> {
    const reply = await this.sentinel.cli('sentinel', 'get-master-addr-by-name', 'mymaster');
    const port = Number(reply.split('\n')[1]);
    const server = [this.master, ...this.replicas].find((s) => s.port === port);
    if (!server) throw new Error(`sentinel names an unknown master: ${reply}`);
    return server;
  }

  /** Resolves once `server` replicates from the current master with its link up. */
  async waitForReplica(server: RedisServer, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!/role:slave[\s\S]*master_link_status:up/.test(await server.cli('info', 'replication'))) {
      if (Date.now() > deadline) throw new Error(`${server.port} is not a synced replica`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    await Promise.all([this.sentinel.stop(), this.master.stop(), ...this.replicas.map((r) => r.stop())]);
  }
}
