/**
 * Real `prometheus` and `prometheus-alertmanager` processes for tests: each on a free loopback port, in
 * its own temporary directory (config, rules, storage), ready once `/-/ready` answers 200. Every
 * process is killed and every directory removed when the test process exits, whatever happens.
 * Alertmanager runs without clustering (no gossip port).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { waitFor } from './wait-for.ts';

const live = new Set<ChildProcess>();
const dirs = new Set<string>();

process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** One running server. */
export class MonitoringProcess {
  readonly name: string;
  readonly port: number;
  readonly dir: string;
  readonly #child: ChildProcess;
  readonly #exited: Promise<void>;
  #log = '';

  private constructor(name: string, port: number, dir: string, child: ChildProcess) {
    this.name = name;
    this.port = port;
    this.dir = dir;
    this.#child = child;
    child.stdout?.on('data', (chunk) => this.#append(chunk));
    child.stderr?.on('data', (chunk) => this.#append(chunk));
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** What the process logged (the last 64 KiB), for failure messages. */
  get log(): string {
    return this.#log;
  }

  /**
   * Start `binary` with the files written into a fresh directory and `args(dir, port)`; resolves once
   * `GET /-/ready` answers 200.
   */
  static async start(
    name: string,
    binary: string,
    files: Record<string, string>,
    args: (dir: string, port: number) => string[],
  ): Promise<MonitoringProcess> {
    const dir = mkdtempSync(join(tmpdir(), `limitswitch-${name}-`));
    dirs.add(dir);
    for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
    const port = await freePort();
    const child = spawn(binary, args(dir, port), { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    live.add(child);
    child.once('exit', () => live.delete(child));
    const server = new MonitoringProcess(name, port, dir, child);
    let exited = false;
    void server.#exited.then(() => {
      exited = true;
    });
    try {
      await waitFor(
        async () => {
          if (exited) throw new Error(`${name} exited:\n${server.log}`);
          return (await fetch(`${server.url}/-/ready`).catch(() => null))?.status === 200;
        },
        { timeoutMs: 30_000, intervalMs: 50, message: `${name} to be ready` },
      );
    } catch (err) {
      await server.stop();
      throw err;
    }
    return server;
  }

  /** GET a JSON API path (`/api/v1/alerts`, `/api/v2/alerts`). */
  async api<T>(path: string): Promise<T> {
    const res = await fetch(`${this.url}${path}`);
    if (!res.ok) throw new Error(`${this.name} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  }

  async stop(): Promise<void> {
    if (live.has(this.#child)) {
      this.#child.kill('SIGKILL');
      await this.#exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
    dirs.delete(this.dir);
  }

  #append(chunk: unknown): void {
    this.#log = (this.#log + String(chunk)).slice(-65_536);
  }
}

export interface PrometheusOptions {
  /** `prometheus.yml` text; `rules.yml` is next to it. */
  readonly config: string;
  readonly rules: string;
  /** How long Prometheus waits before re-sending a firing alert (default 1m there). Default `1s`. */
  readonly resendDelay?: string;
}

/** `prometheus` with its TSDB in the temporary directory. */
export function startPrometheus(options: PrometheusOptions): Promise<MonitoringProcess> {
  return MonitoringProcess.start(
    'prometheus',
    'prometheus',
    { 'prometheus.yml': options.config, 'rules.yml': options.rules },
    (dir, port) => [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      `--rules.alert.resend-delay=${options.resendDelay ?? '1s'}`,
      '--log.level=warn',
    ],
  );
}

/** `prometheus-alertmanager` with `alertmanager.yml`, no clustering. */
export function startAlertmanager(config: string): Promise<MonitoringProcess> {
  return MonitoringProcess.start(
    'alertmanager',
    'prometheus-alertmanager',
    { 'alertmanager.yml': config },
    (dir, port) => [
      `--config.file=${join(dir, 'alertmanager.yml')}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--cluster.listen-address=',
      '--log.level=warn',
    ],
  );
}
