/**
 * `priority_level` on a replica process, in front of an upstream that holds requests until the test
 * lets them go: a queued request that waits past `queue_timeout` (429, `time-out`), a full queue
 * (429 at once, `queue-full`), a client that leaves its queue (`cancelled`, never sent upstream), a
 * dry run (let through, counted, logged), the empty level (not limited), an undefined one (let
 * through, logged on every request), and the exempt level while another is saturated.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { GatedUpstream } from '../helpers/gated-upstream.ts';
import {
  metricValue,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { waitFor } from '../helpers/wait-for.ts';

function config(listen: number, upstream: number): string {
  return `events {}
http {
    # two limited levels of one share each: 2 seats → 1 each
    priority_level_concurrency 2;
    priority_level_zone small shares=1 queues=2 hand_size=1 queue_length=1 queue_timeout=1s;
    priority_level_zone tight shares=1 limit_response=reject;
    priority_level_zone open type=exempt;
    map $http_x_level $level {
        default small;
        tight   tight;
        open    open;
        none    "";
        bogus   nowhere;
    }
    server {
        listen 127.0.0.1:${listen};
        server_name apf.example.com;
        priority_level $level flow=$http_x_flow;
        priority_level_headers on;
        location /dry/ { priority_level_dry_run on; priority_level_log_level warn; proxy_pass http://127.0.0.1:${upstream}; }
        location / { proxy_pass http://127.0.0.1:${upstream}; }
    }
}
`;
}

interface Answer {
  readonly status: number;
  readonly level: string | null;
  readonly retryAfter: string | null;
}

describe('priority_level on the data path', () => {
  const dir = new TempDir();
  let gate: GatedUpstream;
  let replica: ReplicaRun;
  let port: number;

  const call = async (
    path: string,
    headers: Record<string, string> = {},
    signal?: AbortSignal,
  ): Promise<Answer> => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { host: 'apf.example.com', 'x-flow': 'a', ...headers },
      signal: signal ?? AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    return {
      status: res.status,
      level: res.headers.get('x-limitswitch-priority-level'),
      retryAfter: res.headers.get('retry-after'),
    };
  };
  const hold = (path: string, headers: Record<string, string> = {}) =>
    gate.hold(path, (p) => call(p, headers));
  const metric = async (series: string) =>
    metricValue(await (await fetch(`${replica.statusUrl}/metrics`)).text(), series);
  const rejected = (level: string, reason: string) =>
    metric(
      `limitswitch_priority_level_rejected_requests_total{priority_level="${level}",reason="${reason}"}`,
    );
  const waiting = (level: string, n: number) =>
    waitFor(
      async () =>
        (await metric(`limitswitch_priority_level_current_inqueue_requests{priority_level="${level}"}`)) ===
        n,
      {
        message: `${n} waiting in ${level}`,
      },
    );

  before(async () => {
    gate = await GatedUpstream.start();
    const listen = await freePort();
    replica = await startReplica(dir.write('nginx.conf', config(listen, gate.port)), [
      '--error-log',
      dir.file('error.log'),
      '--error-log-level',
      'info',
    ]);
    port = replica.ports[String(listen)]!;
  });

  after(async () => {
    await stopAll();
    gate?.close();
    dir.remove();
  });

  it('a queued request waits at most queue_timeout, then 429 with Retry-After (time-out)', async () => {
    const { answer: first } = await hold('/t-hold');
    const startedMs = performance.now();
    const late = await call('/t-late');
    const waitedMs = performance.now() - startedMs;
    assert.deepEqual(late, { status: 429, level: 'small', retryAfter: '1' });
    assert.ok(waitedMs >= 990 && waitedMs < 5000, `waited ${waitedMs} ms for queue_timeout=1s`);
    assert.equal(await rejected('small', 'time-out'), 1);
    gate.release('/t-hold');
    assert.equal((await first).status, 200);
    assert.equal(gate.seen.includes('/t-late'), false);
  });

  it('a full queue while every seat is taken answers 429 at once (queue-full)', async () => {
    const { answer: first } = await hold('/f-hold');
    const queued = call('/f-queued-hold');
    await waiting('small', 1);
    assert.equal((await call('/f-over')).status, 429);
    assert.equal(await rejected('small', 'queue-full'), 1);
    gate.release('/f-hold');
    await gate.arrived('/f-queued-hold');
    gate.release('/f-queued-hold');
    assert.deepEqual([(await first).status, (await queued).status], [200, 200]);
  });

  it('a client that goes away leaves its queue at once (cancelled) and never reaches the upstream', async () => {
    const { answer: first } = await hold('/c-hold');
    const leaving = new AbortController();
    const gone = call('/c-gone', {}, leaving.signal).catch((err: Error) => err.name);
    await waiting('small', 1);
    leaving.abort();
    assert.equal(await gone, 'AbortError');
    await waiting('small', 0);
    assert.equal(await rejected('small', 'cancelled'), 1);
    gate.release('/c-hold');
    assert.equal((await first).status, 200);
    assert.equal(gate.seen.includes('/c-gone'), false);
  });

  it('dry run: past the seats a request is let through, counted and logged', async () => {
    const { answer: first } = await hold('/dry/a-hold', { 'x-level': 'tight' });
    assert.deepEqual(await call('/dry/b', { 'x-level': 'tight' }), {
      status: 200,
      level: 'tight',
      retryAfter: null,
    });
    assert.equal(
      await metric('limitswitch_priority_level_rejected_dry_run_requests_total{priority_level="tight"}'),
      1,
    );
    assert.equal(await rejected('tight', 'concurrency-limit'), 1);
    gate.release('/dry/a-hold');
    assert.equal((await first).status, 200);
    // the same level outside the dry run refuses
    const { answer: again } = await hold('/r-hold', { 'x-level': 'tight' });
    assert.deepEqual(await call('/r-over', { 'x-level': 'tight' }), {
      status: 429,
      level: 'tight',
      retryAfter: '1',
    });
    gate.release('/r-hold');
    assert.equal((await again).status, 200);
  });

  it('the exempt level gets through a saturated one; an empty level is not limited; an undefined one is logged', async () => {
    const { answer: first } = await hold('/e-hold');
    const queued = call('/e-queued-hold');
    await waiting('small', 1);
    assert.deepEqual(await call('/e-open', { 'x-level': 'open' }), {
      status: 200,
      level: 'open',
      retryAfter: null,
    });
    assert.deepEqual(await call('/e-none', { 'x-level': 'none' }), {
      status: 200,
      level: null,
      retryAfter: null,
    });
    assert.deepEqual(await call('/e-bogus', { 'x-level': 'bogus' }), {
      status: 200,
      level: null,
      retryAfter: null,
    });
    gate.release('/e-hold');
    await gate.arrived('/e-queued-hold');
    gate.release('/e-queued-hold');
    assert.equal((await first).status, 200);
    assert.equal((await queued).status, 200);
    // the replica writes its error log through a stream: the lines reach the file a moment later
    const expected = [
      /\[error\] .*priority level "nowhere" is not defined.*GET \/e-bogus/,
      /\[warn\] .*limiting requests, dry run, by priority level "tight": concurrency-limit/,
      /\[error\] .*limiting requests by priority level "small": time-out.*GET \/t-late/,
    ];
    await waitFor(() => expected.every((line) => line.test(dir.read('error.log'))), {
      message: 'the error-log lines of the levels',
    }).catch(() => undefined);
    const lines = dir.read('error.log').split('\n');
    assert.ok(
      lines.some((l) => /\[error\] .*priority level "nowhere" is not defined.*GET \/e-bogus/.test(l)),
    );
    assert.ok(
      lines.some((l) =>
        /\[warn\] .*limiting requests, dry run, by priority level "tight": concurrency-limit/.test(l),
      ),
    );
    assert.ok(
      lines.some((l) =>
        /\[error\] .*limiting requests by priority level "small": time-out.*GET \/t-late/.test(l),
      ),
    );
  });

  it('the status API names the busiest flows of a level', async () => {
    const { answer: first } = await hold('/s-hold', { 'x-flow': 'tenant-b' });
    const res = await fetch(`${replica.statusUrl}/api/9/http/priority_levels/small`);
    const level = (await res.json()) as { flows: unknown[]; current_executing_requests: number };
    assert.deepEqual(level.flows, [{ flow: 'tenant-b', waiting: 0, executing: 1 }]);
    assert.equal(level.current_executing_requests, 1);
    gate.release('/s-hold');
    assert.equal((await first).status, 200);
  });
});
