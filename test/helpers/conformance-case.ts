/**
 * One differential conformance case: a config body, a request timeline and the outcome of every request
 * computed by hand from nginx's semantics. Real nginx must produce exactly that sequence (which proves the
 * timeline is robust), and `limitswitch simulate` must produce it too.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startNginx } from './nginx.ts';
import { runSimulate, simulateConfig, simulateInput } from './simulate.ts';
import {
  type AccessRecord,
  type Observation,
  parseAccessLog,
  runTimeline,
  type TimelineRequest,
} from './timeline.ts';

export type LimitReqStatus = '' | 'PASSED' | 'DELAYED' | 'REJECTED' | 'DELAYED_DRY_RUN' | 'REJECTED_DRY_RUN';

export interface Expectation {
  /** The HTTP status; 444 means nginx closes the connection without a response. */
  readonly code: number;
  /** `$limit_req_status`; `''` when no limit accounted the request. */
  readonly status: LimitReqStatus;
  /** nginx's delay for a `DELAYED` request on the exact schedule; 0 otherwise (dry run never waits). */
  readonly delayMs?: number;
  /** The deciding zone (checked on `simulate`, which reports it); `null` when none. */
  readonly zone?: string | null;
  /** Response body size (checked on nginx). */
  readonly bodyBytes?: number;
}

export interface Step extends TimelineRequest {
  /** The nginx-tests assertion name this step ports, or a short description. */
  readonly label?: string;
  readonly expect: Expectation;
}

export interface ConformanceCase {
  readonly name: string;
  /** The `http {}` body under test, for the port nginx listens on. */
  readonly http: (port: number) => string;
  /** Static files under `html/`; every URI in the timeline gets a small file unless listed here. */
  readonly files?: Readonly<Record<string, string>>;
  readonly steps: readonly Step[];
  /** Patterns nginx's error log must contain after the run. */
  readonly errorLog?: readonly RegExp[];
}

/** How far nginx's measured delay may fall below the nominal one (arrival jitter) or exceed it (load). */
export const NGINX_DELAY_BELOW_MS = 90;
export const NGINX_DELAY_ABOVE_MS = 1_000;
/** `simulate` runs on the exact schedule, so only rounding may differ. */
export const SIMULATE_DELAY_TOLERANCE_MS = 1;

interface OracleRun {
  readonly port: number;
  readonly observed: readonly Observation[];
  readonly access: ReadonlyMap<number, AccessRecord>;
  readonly errorLog: string;
}

/** Registers the case as a test with two subtests: nginx vs. the expectation, simulate vs. the same. */
export function conformanceCase(c: ConformanceCase): void {
  test(c.name, async (t) => {
    const oracle = await runOracle(c);
    await t.test('nginx gives the hand-computed sequence', () => assertOracle(c, oracle));
    await t.test('simulate gives the same sequence', () => assertSimulate(c, oracle));
  });
}

async function runOracle(c: ConformanceCase): Promise<OracleRun> {
  const nginx = await startNginx({ http: c.http, files: { ...defaultFiles(c.steps), ...c.files } });
  try {
    const observed = await runTimeline(nginx.port, c.steps);
    await nginx.stop();
    return {
      port: nginx.port,
      observed,
      access: parseAccessLog(nginx.accessLog()),
      errorLog: nginx.errorLog(),
    };
  } finally {
    await nginx.stop();
  }
}

/** A small file for every URI path the timeline asks for, so static serving answers 200. */
export function defaultFiles(steps: readonly TimelineRequest[]): Record<string, string> {
  const files: Record<string, string> = {};
  for (const { uri } of steps) {
    const path = uri.split('?')[0]!.replace(/^\/+/, '');
    files[path === '' || path.endsWith('/') ? `${path}index.html` : path] = 'XtestX';
  }
  const paths = Object.keys(files);
  for (const path of paths) {
    const clash = paths.find((other) => other.startsWith(`${path}/`));
    if (clash) throw new Error(`timeline URIs need "${path}" as both a file and a directory (${clash})`);
  }
  return files;
}

function describeStep(step: Step, index: number): string {
  const label = step.label ? ` '${step.label}'` : '';
  const pipe = step.pipelined ? ' (pipelined)' : '';
  return `#${index}${label} ${step.uri} host=${step.host ?? 'localhost'} addr=${step.addr} at=${step.at}${pipe}`;
}

function outcome(code: number, status: string): string {
  return `${code} ${status === '' ? '(no status)' : status}`;
}

function expectedLines(c: ConformanceCase): string[] {
  return c.steps.map((s, i) => `${describeStep(s, i)} → ${outcome(s.expect.code, s.expect.status)}`);
}

/** Server-side arrival offsets relative to the first request, next to the schedule: explains flakiness. */
function arrivalReport(c: ConformanceCase, access: ReadonlyMap<number, AccessRecord>): string {
  const first = access.get(0)?.startMs;
  return c.steps
    .map((s, i) => {
      const record = access.get(i);
      const seen = record && first !== undefined ? `${record.startMs - first}` : '?';
      return `  #${i} scheduled ${s.at} ms, nginx saw it at ${seen} ms, request_time ${record?.requestTimeMs ?? '?'} ms`;
    })
    .join('\n');
}

function assertOracle(c: ConformanceCase, oracle: OracleRun): void {
  const actual = c.steps.map((s, i) => {
    const seen = oracle.observed[i]!;
    // A closed connection carries no header; the access log still records $limit_req_status.
    const logged = oracle.access.get(i)?.limitReqStatus;
    const status =
      seen.code === 'closed' ? (logged === '-' ? '' : (logged ?? '?')) : (seen.limitReqStatus ?? '');
    const code = seen.code === 'closed' ? 444 : seen.code;
    return `${describeStep(s, i)} → ${outcome(code, status)}`;
  });
  const context = `\narrivals:\n${arrivalReport(c, oracle.access)}`;
  assert.deepEqual(actual, expectedLines(c), `nginx disagrees with the hand-computed sequence${context}`);

  c.steps.forEach((s, i) => {
    const seen = oracle.observed[i]!;
    if (s.expect.bodyBytes !== undefined) {
      assert.equal(seen.bodyBytes, s.expect.bodyBytes, `${describeStep(s, i)}: body size`);
    }
    if (s.expect.status !== 'DELAYED') return;
    const delayMs = s.expect.delayMs ?? 0;
    const measured = oracle.access.get(i)?.requestTimeMs ?? seen.elapsedMs;
    assert.ok(
      measured >= delayMs - NGINX_DELAY_BELOW_MS && measured <= delayMs + NGINX_DELAY_ABOVE_MS,
      `${describeStep(s, i)}: nginx held it ${measured} ms, expected about ${delayMs} ms${context}`,
    );
  });
  for (const pattern of c.errorLog ?? []) {
    assert.match(oracle.errorLog, pattern, 'nginx error log');
  }
}

async function assertSimulate(c: ConformanceCase, oracle: OracleRun): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-simulate-'));
  try {
    const configFile = join(dir, 'limitswitch.conf');
    writeFileSync(configFile, simulateConfig(c.http(oracle.port)));
    const results = await runSimulate(configFile, simulateInput(c.steps, oracle.port));
    const actual = c.steps.map(
      (s, i) => `${describeStep(s, i)} → ${outcome(results[i]!.code, results[i]!.status)}`,
    );
    assert.deepEqual(actual, expectedLines(c), 'simulate disagrees with nginx');

    c.steps.forEach((s, i) => {
      const result = results[i]!;
      const delayMs = s.expect.delayMs ?? 0;
      assert.ok(
        Math.abs(result.delay_ms - delayMs) <= SIMULATE_DELAY_TOLERANCE_MS,
        `${describeStep(s, i)}: simulate delay_ms ${result.delay_ms}, nginx's delay is ${delayMs} ms`,
      );
      if (s.expect.zone !== undefined) {
        assert.equal(result.zone, s.expect.zone, `${describeStep(s, i)}: deciding zone`);
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
