/**
 * Runs `limitswitch simulate -c FILE` on a request timeline: the same requests the oracle sent to nginx,
 * as JSON lines on stdin, one JSON line per request back on stdout.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TimelineRequest } from './timeline.ts';

const BIN = fileURLToPath(new URL('../../bin/limitswitch.js', import.meta.url));
const REPO = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The simulated clock value of timeline offset 0. Small on purpose: nginx's real clock counts from boot,
 * so an engine that copies nginx's `last = 0` for a new node in a non-last zone (instead of treating it
 * as "never accounted") would compute a different excess here — see the multi-zone conformance cases.
 */
export const SIMULATE_EPOCH_MS = 1000;

/** One request line of the simulate protocol. */
export interface SimulateRequest {
  readonly t: number;
  readonly addr: string;
  readonly host: string;
  readonly uri: string;
  readonly port: number;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** One output line of the simulate protocol. */
export interface SimulateResult {
  readonly t: number;
  /** `$limit_req_status`, `""` when no limit accounted the request. */
  readonly status: string;
  /** The HTTP status the server answers; 444 means the connection is closed. */
  readonly code: number;
  readonly delay_ms: number;
  /** The deciding zone, or null. */
  readonly zone: string | null;
}

/** The `simulate` input for a timeline: `t` on the simulated clock, `port` = the server's listen port. */
export function simulateInput(requests: readonly TimelineRequest[], port: number): SimulateRequest[] {
  return requests.map((r) => ({
    t: SIMULATE_EPOCH_MS + r.at,
    addr: r.addr,
    host: r.host ?? 'localhost',
    uri: r.uri,
    port,
    method: r.method ?? 'GET',
    headers: { ...r.headers },
  }));
}

/** The configuration file `simulate` reads: the same `http` body nginx serves, without oracle plumbing. */
export function simulateConfig(httpBody: string): string {
  return `http {\n${httpBody}\n}\n`;
}

/**
 * Runs simulate; rejects with its stderr when it exits non-zero or answers the wrong number of lines.
 * `keyvals` are timeline lines written before the requests (they have no answer line).
 */
export function runSimulate(
  configFile: string,
  requests: readonly SimulateRequest[],
  timeoutMs = 60_000,
  keyvals: readonly object[] = [],
): Promise<SimulateResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'simulate', '-c', configFile], {
      cwd: REPO,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) {
        reject(new Error(`simulate exited with ${signal ?? `code ${code}`}: ${stderr.trim()}`));
        return;
      }
      try {
        const lines = stdout.split('\n').filter((line) => line.trim() !== '');
        if (lines.length !== requests.length) {
          throw new Error(`simulate answered ${lines.length} lines for ${requests.length} requests`);
        }
        resolve(lines.map((line) => JSON.parse(line) as SimulateResult));
      } catch (err) {
        reject(new Error(`${err instanceof Error ? err.message : String(err)}\nstdout:\n${stdout}`));
      }
    });
    // A simulate that exits early closes stdin; the resulting EPIPE is reported through 'close'.
    child.stdin.on('error', () => {});
    child.stdin.end(`${[...keyvals, ...requests].map((r) => JSON.stringify(r)).join('\n')}\n`);
  });
}
