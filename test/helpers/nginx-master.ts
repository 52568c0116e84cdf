/**
 * Real nginx as it runs in production: a master process and its worker processes, from a whole
 * nginx.conf the test writes (the oracle of nginx.ts runs one process, `master_process off`). The
 * configuration's paths are relative to a fresh temporary prefix (`logs/`, `temp/`); the one process
 * spawned is the master (`daemon off;` in the configuration), and stopping it stops its workers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';
import { canConnect, NGINX_BIN } from './nginx.ts';

export interface NginxMaster {
  readonly port: number;
  /** `logs/error.log` so far (after `stop()`: as the master left it). */
  errorLog(): string;
  /** SIGTERM to the master (SIGKILL after 5 s); resolves once it exited; removes the prefix. Idempotent. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts nginx on `conf(port)` (the whole file; it must say `daemon off;` and log to
 * `logs/error.log`) for a port free a moment ago, on another one if that was taken meanwhile.
 */
export async function startNginxMaster(conf: (port: number) => string): Promise<NginxMaster> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await startOnPort(port, conf(port));
    } catch (err) {
      if (attempt === 3 || !(err instanceof Error) || !err.message.includes('Address already in use'))
        throw err;
    }
  }
}

async function startOnPort(port: number, text: string): Promise<NginxMaster> {
  const prefix = await mkdtemp(join(tmpdir(), 'limitswitch-nginx-master-'));
  await mkdir(join(prefix, 'logs'));
  await mkdir(join(prefix, 'temp'));
  const confFile = join(prefix, 'nginx.conf');
  await writeFile(confFile, text);
  const errorLogFile = join(prefix, 'logs', 'error.log');
  const read = () => (existsSync(errorLogFile) ? readFileSync(errorLogFile, 'utf8') : '');

  const child = spawn(NGINX_BIN, ['-p', `${prefix}/`, '-c', confFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.once('error', () => {});
  let gone = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      gone = true;
      running.delete(child);
      resolve();
    }),
  );

  let finalLog: string | null = null;
  let stopping: Promise<void> | null = null;
  const stop = () => {
    stopping ??= (async () => {
      if (!gone) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }
      finalLog = read();
      rmSync(prefix, { recursive: true, force: true });
    })();
    return stopping;
  };

  // nginx gives no signal that it listens: its port is polled (the master binds before it forks).
  const deadline = Date.now() + 10_000;
  while (!gone && !(await canConnect(port))) {
    if (Date.now() > deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // A port someone else took meanwhile accepts the probe too: nginx says so before it retries bind().
  if (gone || !(await canConnect(port)) || /bind\(\) to .* failed/.test(stderr + read())) {
    const log = stderr + read();
    await stop();
    throw new Error(`nginx did not start on port ${port}:\n${log}`);
  }
  return { port, errorLog: () => finalLog ?? read(), stop };
}
