/**
 * Differential conformance: a config body, request timelines, and the outcome of every request computed
 * by hand from nginx's semantics. Real nginx must produce exactly that sequence (which proves the timeline
 * is robust), and `limitswitch simulate` must produce it too.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { startNginx } from './nginx.ts';
import { runSimulate, type SimulateResult, simulateConfig, simulateInput } from './simulate.ts';
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

export interface Scenario {
  /** Named after the nginx-tests case it ports where there is one. */
  readonly name: string;
  /** Offsets are relative to the scenario's own start. */
  readonly steps: readonly Step[];
  /** Patterns nginx's error log must contain after the run. */
  readonly errorLog?: readonly RegExp[];
}

/**
 * Scenarios that share one configuration: one nginx run and one `simulate` run for all of them, played
 * one after another (each starts {@link SCENARIO_GAP_MS} after the previous one's last request). Each
 * scenario uses client keys of its own, so it starts from fresh limit_req state.
 */
export interface ConformanceSuite {
  readonly name: string;
  /** The `http {}` body under test, for the port nginx listens on. */
  readonly http: (port: number) => string;
  /** Static files under `html/`; every URI in the timeline gets a small file unless listed here. */
  readonly files?: Readonly<Record<string, string>>;
  readonly scenarios: readonly Scenario[];
}

export const SCENARIO_GAP_MS = 250;
/** How far nginx's measured delay may fall below the nominal one (arrival jitter) or exceed it (load). */
export const NGINX_DELAY_BELOW_MS = 90;
export const NGINX_DELAY_ABOVE_MS = 1_000;
/** `simulate` runs on the exact schedule, so only rounding may differ. */
export const SIMULATE_DELAY_TOLERANCE_MS = 1;

/** A step placed on the suite's timeline: its global index (= access-log sequence) and absolute time. */
interface Placed {
  readonly index: number;
  readonly step: Step;
}

interface OracleRun {
  readonly port: number;
  readonly observed: readonly Observation[];
  readonly access: ReadonlyMap<number, AccessRecord>;
  readonly errorLog: string;
}

/**
 * Registers the suite as a test: nginx and `simulate` each run the whole timeline once, then every
 * scenario gets two subtests — nginx vs. the hand-computed sequence, simulate vs. the same (a suite of
 * one scenario gets the two subtests directly).
 */
export function conformanceSuite(suite: ConformanceSuite): void {
  test(suite.name, async (t) => {
    const placed = placeScenarios(suite.scenarios);
    const timeline = placed.flat().map((p) => p.step);
    const oracle = await runOracle(suite, timeline);
    const simulated = await runSimulateOnce(suite, timeline, oracle.port);
    for (const [i, scenario] of suite.scenarios.entries()) {
      const checks = async (ct: TestContext) => {
        await ct.test('nginx gives the hand-computed sequence', () =>
          assertOracle(scenario, placed[i]!, oracle),
        );
        await ct.test('simulate gives the same sequence', () => assertSimulate(placed[i]!, simulated));
      };
      if (suite.scenarios.length === 1) await checks(t);
      else await t.test(scenario.name, checks);
    }
  });
}

/** A suite with a single timeline. */
export function conformanceCase(c: Omit<ConformanceSuite, 'scenarios'> & Omit<Scenario, 'name'>): void {
  const { steps, errorLog, ...suite } = c;
  conformanceSuite({ ...suite, scenarios: [{ name: c.name, steps, ...(errorLog ? { errorLog } : {}) }] });
}

/** Shifts each scenario after the previous one and numbers the steps in timeline order. */
export function placeScenarios(scenarios: readonly Scenario[]): Placed[][] {
  let offset = 0;
  let index = 0;
  return scenarios.map((scenario) => {
    const placed = scenario.steps.map((step) => ({
      index: index++,
      step: { ...step, at: step.at + offset },
    }));
    const lastAt = scenario.steps.reduce((max, s) => Math.max(max, s.at), 0);
    offset += lastAt + SCENARIO_GAP_MS;
    return placed;
  });
}

async function runOracle(suite: ConformanceSuite, timeline: readonly Step[]): Promise<OracleRun> {
  const nginx = await startNginx({ http: suite.http, files: { ...defaultFiles(timeline), ...suite.files } });
  try {
    const observed = await runTimeline(nginx.port, timeline);
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

/** Runs simulate over the whole timeline; a failure is kept and reported by every scenario. */
async function runSimulateOnce(
  suite: ConformanceSuite,
  timeline: readonly Step[],
  port: number,
): Promise<SimulateResult[] | Error> {
  const dir = mkdtempSync(join(tmpdir(), 'limitswitch-simulate-'));
  try {
    const configFile = join(dir, 'limitswitch.conf');
    writeFileSync(configFile, simulateConfig(suite.http(port)));
    return await runSimulate(configFile, simulateInput(timeline, port));
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  } finally {
    rmSync(dir, { recursive: true, force: true });
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

function describeStep({ index, step }: Placed): string {
  const label = step.label ? ` '${step.label}'` : '';
  const pipe = step.pipelined ? ' (pipelined)' : '';
  return `#${index}${label} ${step.uri} host=${step.host ?? 'localhost'} addr=${step.addr} at=${step.at}${pipe}`;
}

function outcome(code: number, status: string): string {
  return `${code} ${status === '' ? '(no status)' : status}`;
}

function expectedLines(placed: readonly Placed[]): string[] {
  return placed.map((p) => `${describeStep(p)} → ${outcome(p.step.expect.code, p.step.expect.status)}`);
}

/** Server-side arrival offsets relative to the first request, next to the schedule: explains flakiness. */
function arrivalReport(placed: readonly Placed[], access: ReadonlyMap<number, AccessRecord>): string {
  const first = access.get(0)?.startMs;
  return placed
    .map(({ index, step }) => {
      const record = access.get(index);
      const seen = record && first !== undefined ? `${record.startMs - first}` : '?';
      return `  #${index} scheduled ${step.at} ms, nginx saw it at ${seen} ms, request_time ${record?.requestTimeMs ?? '?'} ms`;
    })
    .join('\n');
}

function assertOracle(scenario: Scenario, placed: readonly Placed[], oracle: OracleRun): void {
  const actual = placed.map((p) => {
    const seen = oracle.observed[p.index]!;
    // A closed connection carries no header; the access log still records $limit_req_status.
    const logged = oracle.access.get(p.index)?.limitReqStatus;
    const status =
      seen.code === 'closed' ? (logged === '-' ? '' : (logged ?? '?')) : (seen.limitReqStatus ?? '');
    const code = seen.code === 'closed' ? 444 : seen.code;
    return `${describeStep(p)} → ${outcome(code, status)}`;
  });
  const context = `\narrivals:\n${arrivalReport(placed, oracle.access)}`;
  assert.deepEqual(
    actual,
    expectedLines(placed),
    `nginx disagrees with the hand-computed sequence${context}`,
  );

  for (const p of placed) {
    const seen = oracle.observed[p.index]!;
    const { expect } = p.step;
    if (expect.bodyBytes !== undefined) {
      assert.equal(seen.bodyBytes, expect.bodyBytes, `${describeStep(p)}: body size`);
    }
    if (expect.status !== 'DELAYED') continue;
    const delayMs = expect.delayMs ?? 0;
    const measured = oracle.access.get(p.index)?.requestTimeMs ?? seen.elapsedMs;
    assert.ok(
      measured >= delayMs - NGINX_DELAY_BELOW_MS && measured <= delayMs + NGINX_DELAY_ABOVE_MS,
      `${describeStep(p)}: nginx held it ${measured} ms, expected about ${delayMs} ms${context}`,
    );
  }
  for (const pattern of scenario.errorLog ?? []) {
    assert.match(oracle.errorLog, pattern, 'nginx error log');
  }
}

function assertSimulate(placed: readonly Placed[], simulated: SimulateResult[] | Error): void {
  if (simulated instanceof Error) throw simulated;
  const actual = placed.map((p) => {
    const result: SimulateResult = simulated[p.index]!;
    return `${describeStep(p)} → ${outcome(result.code, result.status)}`;
  });
  assert.deepEqual(actual, expectedLines(placed), 'simulate disagrees with nginx');

  for (const p of placed) {
    const result: SimulateResult = simulated[p.index]!;
    const delayMs = p.step.expect.delayMs ?? 0;
    assert.ok(
      Math.abs(result.delay_ms - delayMs) <= SIMULATE_DELAY_TOLERANCE_MS,
      `${describeStep(p)}: simulate delay_ms ${result.delay_ms}, nginx's delay is ${delayMs} ms`,
    );
    if (p.step.expect.zone !== undefined) {
      assert.equal(result.zone, p.step.expect.zone, `${describeStep(p)}: deciding zone`);
    }
  }
}
