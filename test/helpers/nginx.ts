/**
 * Real nginx as a test oracle: one single-process nginx per config, in a fresh temporary prefix.
 *
 * `master_process off` runs the whole server in the one process we spawn, so its PID is the only thing
 * to kill, there is no master→worker hand-off, and every request meets the same event loop (and the
 * same cached millisecond clock) — the most deterministic timing nginx offers.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from './free-port.ts';

/** The nginx binary (Debian's `nginx-light`/`nginx-core` install it here). */
export const NGINX_BIN = process.env.NGINX_BIN ?? '/usr/sbin/nginx';

/**
 * Directives the oracle needs but the configuration under test does not: temp paths inside the prefix,
 * static files from `html/`, the client address carried in `X-Forwarded-For`, `$limit_req_status` as a
 * response header, and an access log that records when nginx saw each request.
 */
export const ORACLE_HTTP_DIRECTIVES = `
    client_body_temp_path temp/client_body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;
    root html;
    set_real_ip_from 127.0.0.1;
    real_ip_header X-Forwarded-For;
    add_header X-Limit-Req-Status $limit_req_status always;
    log_format conformance '$http_x_timeline_seq $msec $request_time $status "$limit_req_status"';
    access_log logs/access.log conformance;
`;

/** Header buffers larger than nginx's defaults, which the oracle has always run with. */
const ORACLE_HEADER_BUFFERS = `    client_header_buffer_size 16k;
    large_client_header_buffers 4 128k;
`;

/**
 * The whole nginx.conf: main-context settings, then the `http` block around the body under test.
 * `headerBuffers: 'nginx'` keeps nginx's own header buffer sizes (1k, 4 8k) instead of the oracle's.
 */
export function oracleConfig(httpBody: string, headerBuffers: 'oracle' | 'nginx' = 'oracle'): string {
  return `daemon off;
master_process off;
pid logs/nginx.pid;
error_log logs/error.log info;
events {
    worker_connections 1024;
}
http {
${ORACLE_HTTP_DIRECTIVES}${headerBuffers === 'oracle' ? ORACLE_HEADER_BUFFERS : ''}
# ---- configuration under test ----
${httpBody}
}
`;
}

export interface NginxOptions {
  /** The body of the `http {}` block, given the port nginx must listen on. */
  readonly http: (port: number) => string;
  /** Files to create under the prefix's `html/` (relative path → content). */
  readonly files?: Readonly<Record<string, string>>;
  /** How long to wait for nginx to accept connections. */
  readonly startTimeoutMs?: number;
  /** `nginx`: nginx's default header buffers rather than the oracle's larger ones. */
  readonly headerBuffers?: 'oracle' | 'nginx';
}

export interface RunningNginx {
  readonly port: number;
  readonly pid: number;
  /** The prefix directory (removed by `stop()`). */
  readonly prefix: string;
  /** `logs/error.log` so far (after `stop()`: its final content). */
  errorLog(): string;
  /** `logs/access.log` so far, in the `conformance` format. */
  accessLog(): string;
  /** Stops nginx (SIGTERM, then SIGKILL) and removes the prefix. Idempotent. */
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
// A test process that dies mid-run must not leave nginx behind.
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts nginx for `options.http`, retrying on another port if the chosen one was taken meanwhile. */
export async function startNginx(options: NginxOptions): Promise<RunningNginx> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      return await startOnPort(port, options);
    } catch (err) {
      lastError = err;
      if (!(err instanceof Error) || !err.message.includes('Address already in use')) throw err;
    }
  }
  throw lastError;
}

async function startOnPort(port: number, options: NginxOptions): Promise<RunningNginx> {
  const prefix = await mkdtemp(join(tmpdir(), 'limitswitch-nginx-'));
  try {
    await mkdir(join(prefix, 'logs'));
    await mkdir(join(prefix, 'temp'));
    await mkdir(join(prefix, 'html'));
    for (const [path, content] of Object.entries(options.files ?? {})) {
      const target = join(prefix, 'html', path);
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    const confFile = join(prefix, 'nginx.conf');
    await writeFile(confFile, oracleConfig(options.http(port), options.headerBuffers));
    return await launch(prefix, confFile, port, options.startTimeoutMs ?? 10_000);
  } catch (err) {
    rmSync(prefix, { recursive: true, force: true });
    throw err;
  }
}

async function launch(prefix: string, confFile: string, port: number, timeoutMs: number) {
  const child = spawn(NGINX_BIN, ['-p', `${prefix}/`, '-c', confFile], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.add(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  let gone = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      gone = true;
      running.delete(child);
      resolve();
    }),
  );
  child.once('error', () => {});

  const errorLogFile = join(prefix, 'logs', 'error.log');
  const accessLogFile = join(prefix, 'logs', 'access.log');
  const read = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

  let ready = await waitForPort(port, () => gone, timeoutMs);
  // A port taken meanwhile by someone else accepts our probe too: nginx says so before it retries bind().
  if (ready === 'ready' && /bind\(\) to .* failed/.test(stderr + read(errorLogFile))) ready = 'exited';
  if (ready !== 'ready') {
    child.kill('SIGKILL');
    await exited;
    const why =
      ready === 'exited' ? 'nginx exited during start-up' : `nginx did not listen within ${timeoutMs} ms`;
    throw new Error(`${why}:\n${stderr}${read(errorLogFile)}`);
  }

  let finalError: string | null = null;
  let finalAccess: string | null = null;
  let stopping: Promise<void> | null = null;
  return {
    port,
    pid: child.pid ?? -1,
    prefix,
    errorLog: () => finalError ?? read(errorLogFile),
    accessLog: () => finalAccess ?? read(accessLogFile),
    stop() {
      stopping ??= (async () => {
        if (!gone) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
          await exited;
          clearTimeout(timer);
        }
        finalError = read(errorLogFile);
        finalAccess = read(accessLogFile);
        rmSync(prefix, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}

/** Polls until a TCP connection to the port succeeds, the process exits, or time runs out. */
async function waitForPort(
  port: number,
  gone: () => boolean,
  timeoutMs: number,
): Promise<'ready' | 'exited' | 'timeout'> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (gone()) return 'exited';
    if (await canConnect(port)) return gone() ? 'exited' : 'ready';
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return 'timeout';
}

/** Whether something accepts a connection on 127.0.0.1:`port` now. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
