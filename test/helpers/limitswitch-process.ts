/**
 * `limitswitch replica` and `limitswitch control-plane` as child processes, for end-to-end tests: each
 * is started from `bin/limitswitch.js`, its pino lines are parsed as they arrive, and start-up is
 * awaited on the process's own "listening" line (never a sleep). Every child is killed when the test
 * process exits, whatever happens.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

export { freePorts } from './free-port.ts';

const BIN = new URL('../../bin/limitswitch.js', import.meta.url).pathname;
const live = new Set<ChildProcess>();
const running = new Set<LimitswitchProcess>();
process.once('exit', () => {
  for (const child of live) child.kill('SIGKILL');
});

/**
 * Stops every process still running (SIGTERM, then SIGKILL): for `after` hooks, so one that a failed
 * `before` never handed back cannot keep the test process alive.
 */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((p) => p.stop()));
}

/** One line of the process log (JSON when stdout is not a terminal). */
export interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A running `limitswitch` command. */
export class LimitswitchProcess {
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<Exit>;
  readonly #lines: LogLine[] = [];
  readonly #waiters: { match: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = [];
  #stdout = '';
  #stderr = '';
  #partial = '';

  /** `nodeArgs`: options for node itself, before the script (as a container's `command` gives them). */
  constructor(
    command: string,
    args: readonly string[],
    env: Record<string, string> = {},
    nodeArgs: readonly string[] = [],
  ) {
    const child = spawn(process.execPath, [...nodeArgs, BIN, command, ...args], {
      env: { ...process.env, LIMITSWITCH_TOKENS: '', REDIS_URL: '', POD_NAME: '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    live.add(child);
    running.add(this);
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => this.#onStdout(chunk));
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.#stderr += chunk;
    });
    this.exited = new Promise((resolve) => {
      const gone = (exit: Exit) => {
        live.delete(child);
        running.delete(this);
        resolve(exit);
      };
      child.once('exit', (code, signal) => gone({ code, signal }));
      // a process that could not be started never exits: it is gone all the same
      child.once('error', () => {
        if (child.pid === undefined) gone({ code: null, signal: null });
      });
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  /** Everything written to stdout so far (pino lines and, with `--access-log stdout`, the access log). */
  get stdout(): string {
    return this.#stdout;
  }

  /** Everything written to stderr so far (the nginx-format error log by default). */
  get stderr(): string {
    return this.#stderr;
  }

  /** The pino lines so far. */
  get lines(): readonly LogLine[] {
    return this.#lines;
  }

  /** The first log line (already written or still to come) whose `msg` is `msg` and that `match`es. */
  waitForLog(
    msg: string,
    match: (line: LogLine) => boolean = () => true,
    timeoutMs = 60_000,
  ): Promise<LogLine> {
    const test = (line: LogLine) => line.msg === msg && match(line);
    const seen = this.#lines.find(test);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no "${msg}" log line within ${timeoutMs} ms; output:\n${this.output()}`));
      }, timeoutMs);
      const onExit = this.exited.then((exit) => {
        clearTimeout(timer);
        reject(new Error(`exited (${JSON.stringify(exit)}) before "${msg}"; output:\n${this.output()}`));
      });
      void onExit;
      this.#waiters.push({
        match: test,
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
      });
    });
  }

  /** stdout and stderr, for failure messages. */
  output(): string {
    return `--- stdout\n${this.#stdout}--- stderr\n${this.#stderr}`;
  }

  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit. */
  async stop(graceMs = 30_000): Promise<Exit> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    return exit;
  }

  #onStdout(chunk: string): void {
    this.#stdout += chunk;
    const text = this.#partial + chunk;
    const parts = text.split('\n');
    this.#partial = parts.pop() ?? '';
    for (const part of parts) {
      if (!part.startsWith('{')) continue;
      let line: LogLine;
      try {
        line = JSON.parse(part) as LogLine;
      } catch {
        continue;
      }
      this.#lines.push(line);
      for (let i = this.#waiters.length - 1; i >= 0; i--) {
        const waiter = this.#waiters[i]!;
        if (waiter.match(line)) {
          this.#waiters.splice(i, 1);
          waiter.resolve(line);
        }
      }
    }
  }
}

/** A started replica: where it listens. */
export interface ReplicaRun {
  readonly process: LimitswitchProcess;
  /** Actual port per configured `listen` port. */
  readonly ports: Readonly<Record<string, number>>;
  /** `http://host:port` of `--status-listen`, or null. */
  readonly statusUrl: string | null;
}

/**
 * `limitswitch replica -c configFile …args`, resolved once it logged "replica listening". A status
 * listener on a free port is added unless `args` has `--status-listen` or `status` is false.
 */
export async function startReplica(
  configFile: string,
  args: readonly string[] = [],
  options: { status?: boolean; env?: Record<string, string>; nodeArgs?: readonly string[] } = {},
): Promise<ReplicaRun> {
  const ownStatusPort = options.status !== false && !args.includes('--status-listen');
  const { child, line } = await startOnFreePort(ownStatusPort, async (port) => {
    const all = port === null ? [...args] : [...args, '--status-listen', `127.0.0.1:${port}`];
    const child = new LimitswitchProcess(
      'replica',
      ['-c', configFile, ...all],
      options.env,
      options.nodeArgs,
    );
    return { child, line: await started(child, 'replica listening') };
  });
  return {
    process: child,
    // `listen` is `host:port` as bound (or `unix:/path`); a replica process serves its configured ports as they are.
    ports: Object.fromEntries(
      (line.listen as string[]).flatMap((address) => {
        if (address.startsWith('unix:')) return [];
        const port = address.slice(address.lastIndexOf(':') + 1);
        return [[port, Number(port)]];
      }),
    ),
    statusUrl: (line.status as string | null) ?? null,
  };
}

/** A started control plane. */
export interface ControlPlaneRun {
  readonly process: LimitswitchProcess;
  readonly url: string;
}

/** `limitswitch control-plane --listen 127.0.0.1:<free> …args`, resolved once it is listening. */
export async function startControlPlane(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<ControlPlaneRun> {
  const { child, port } = await startOnFreePort(true, async (port) => {
    const child = new LimitswitchProcess('control-plane', ['--listen', `127.0.0.1:${port}`, ...args], env);
    await started(child, 'control plane listening');
    return { child, port: port! };
  });
  return { process: child, url: `http://127.0.0.1:${port}` };
}

/**
 * Starts a process on a port picked free here (`pick`), or on none: a port picked free can be taken
 * by another test before the process binds it, so a bind failure on that port is tried again on
 * another one, as the nginx helper does.
 */
async function startOnFreePort<T>(pick: boolean, start: (port: number | null) => Promise<T>): Promise<T> {
  if (!pick) return start(null);
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (err) {
      const tookPort = err instanceof Error && err.message.includes(`bind() to 127.0.0.1:${port} failed`);
      if (!tookPort || attempt === 3) throw err;
    }
  }
}

/** Waits for the start-up line; a process that does not get there is killed (it would keep the test alive). */
async function started(child: LimitswitchProcess, msg: string): Promise<LogLine> {
  try {
    return await child.waitForLog(msg);
  } catch (err) {
    child.child.kill('SIGKILL');
    await child.exited;
    throw err;
  }
}

/** A temporary directory for config, log and state files, removed by `remove()`. */
export class TempDir {
  readonly path = mkdtempSync(join(tmpdir(), 'limitswitch-e2e-'));

  file(name: string): string {
    return join(this.path, name);
  }

  write(name: string, content: string): string {
    const file = this.file(name);
    writeFileSync(file, content);
    return file;
  }

  read(name: string): string {
    try {
      return readFileSync(this.file(name), 'utf8');
    } catch {
      return '';
    }
  }

  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

/** A metric's value from a Prometheus text page (`name{labels} value`); 0 when the series is absent. */
export function metricValue(text: string, series: string): number {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return 0;
}

/** True when a new TCP connection to 127.0.0.1:`port` is refused (nothing listens there). */
export function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}
