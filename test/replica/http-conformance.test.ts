/**
 * The differential suite over HTTP: one configuration served by real nginx (`proxy_pass` to a local
 * upstream, so limiting applies as in production) and by a replica process (same upstream), the same
 * request timeline played against each, and the same status sequence required from both — the one
 * computed by hand next to each step. Delayed requests must be held by both.
 *
 * Timelines follow docs/conformance.md: same-millisecond bursts are pipelined, other gaps keep every
 * decision ≥ 40 ms away from a threshold; the client address travels in X-Forwarded-For, trusted from
 * 127.0.0.1 by nginx's oracle wrapper and by the replica's own realip lines.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { type Observation, runTimeline, type TimelineRequest } from '../helpers/timeline.ts';
import { startUpstream, type TestUpstream } from './http/harness.ts';

const http = (port: number, upstream: number) => `
    map $http_x_switch $switch_key {
        default "";
        1 $binary_remote_addr;
    }
    limit_req_zone $binary_remote_addr zone=burst:1m rate=10r/s;
    limit_req_zone $binary_remote_addr zone=slow:1m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=perclient:1m rate=10r/s;
    limit_req_zone $server_name zone=perserver:1m rate=20r/s;
    limit_req_zone $switch_key zone=switched:1m rate=10r/s;

    upstream backend { server 127.0.0.1:${upstream}; }

    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        location /burst { limit_req zone=burst burst=2 nodelay; proxy_pass http://backend; }
        location /delay { limit_req zone=slow burst=2; proxy_pass http://backend; }
        location /multi {
            limit_req zone=perclient burst=1 nodelay;
            limit_req zone=perserver burst=2 nodelay;
            proxy_pass http://backend;
        }
        location /switch { limit_req zone=switched; proxy_pass http://backend; }
    }
`;

interface Step extends TimelineRequest {
  /** The hand-computed status. */
  readonly code: number;
  /** nginx's delay for a delayed request on the exact schedule. */
  readonly delayMs?: number;
}

interface Scenario {
  readonly name: string;
  readonly steps: readonly Step[];
}

const SWITCH_ON = { 'X-Switch': '1' };

const SCENARIOS: readonly Scenario[] = [
  {
    name: 'nodelay burst: first request plus burst=2 pass at once, the rest are rejected',
    steps: [
      // Same millisecond: excess 0, 1000, 2000 (= burst, passes), 3000, 3000.
      ...[200, 200, 200, 503, 503].map((code, i) => ({
        at: 0,
        addr: '10.1.0.1',
        uri: `/burst/${i}`,
        pipelined: i > 0,
        code,
      })),
      // 350 ms later 3500 milli have drained: excess 2000 − 3500 + 1000 < 0 → 0.
      { at: 350, addr: '10.1.0.1', uri: '/burst/later', code: 200 },
    ],
  },
  {
    name: 'delay: held for excess / rate, then proxied; over the burst rejected',
    steps: [
      { at: 0, addr: '10.2.0.1', uri: '/delay/0', code: 200 },
      // 1r/s drains 1 milli per ms: excess 900 → 900 ms, 1800 → 1800 ms, 2700 > burst 2000.
      { at: 100, addr: '10.2.0.1', uri: '/delay/1', code: 200, delayMs: 900 },
      { at: 200, addr: '10.2.0.1', uri: '/delay/2', code: 200, delayMs: 1800 },
      { at: 300, addr: '10.2.0.1', uri: '/delay/3', code: 503 },
    ],
  },
  {
    name: 'multi-zone: a rejection commits nothing, the server-wide zone limits every client',
    steps: [
      // perclient (burst 1) then perserver (burst 2), all in one millisecond.
      { at: 0, addr: '10.3.0.1', uri: '/multi/a', code: 200 }, // perclient 0, perserver 0
      { at: 0, addr: '10.3.0.1', uri: '/multi/b', pipelined: true, code: 200 }, // 1000, 1000
      { at: 0, addr: '10.3.0.1', uri: '/multi/c', pipelined: true, code: 503 }, // perclient 2000 > 1000
      { at: 0, addr: '10.3.0.2', uri: '/multi/d', pipelined: true, code: 200 }, // 0, 2000
      { at: 0, addr: '10.3.0.3', uri: '/multi/e', pipelined: true, code: 503 }, // 0, perserver 3000 > 2000
      // 200 ms at 20r/s drain 4000: everything is back under its burst.
      { at: 200, addr: '10.3.0.3', uri: '/multi/f', code: 200 },
    ],
  },
  {
    name: 'map switch: the empty key is not accounted; switched on, the client is limited',
    steps: [
      ...[0, 1, 2].map((i) => ({
        at: 0,
        addr: '10.4.0.1',
        uri: `/switch/off${i}`,
        pipelined: i > 0,
        code: 200,
      })),
      { at: 0, addr: '10.4.0.1', uri: '/switch/on0', headers: SWITCH_ON, pipelined: true, code: 200 },
      { at: 0, addr: '10.4.0.1', uri: '/switch/on1', headers: SWITCH_ON, pipelined: true, code: 503 },
      { at: 0, addr: '10.4.0.1', uri: '/switch/off3', pipelined: true, code: 200 },
    ],
  },
];

const SCENARIO_GAP_MS = 250;

/** The scenarios one after another on one timeline; returns each scenario's step indexes. */
function place(scenarios: readonly Scenario[]): { timeline: Step[]; indexes: number[][] } {
  const timeline: Step[] = [];
  const indexes: number[][] = [];
  let offset = 0;
  for (const scenario of scenarios) {
    indexes.push(scenario.steps.map((step) => timeline.push({ ...step, at: step.at + offset }) - 1));
    offset += Math.max(...scenario.steps.map((s) => s.at)) + SCENARIO_GAP_MS;
  }
  return { timeline, indexes };
}

/** How far a measured hold may fall below the nominal delay (arrival jitter). */
const DELAY_BELOW_MS = 90;

describe('replica vs nginx over HTTP: same timeline, same statuses', () => {
  const dir = new TempDir();
  const { timeline, indexes } = place(SCENARIOS);
  let upstream: TestUpstream;
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let fromNginx: Observation[];
  let fromReplica: Observation[];

  before(async () => {
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' });
      res.end('ok\n');
    });
    const listen = await freePort();
    const config = dir.write(
      'nginx.conf',
      `events {}\nhttp {\n    set_real_ip_from 127.0.0.1;\n    real_ip_header X-Forwarded-For;\n${http(listen, upstream.port)}}\n`,
    );
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => http(port, upstream.port) }),
      startReplica(config, [], { status: false }),
    ]);
    // One after the other, so neither run's timing disturbs the other's.
    fromNginx = await runTimeline(nginx.port, timeline);
    fromReplica = await runTimeline(replica.ports[String(listen)]!, timeline);
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    await upstream?.close();
    dir.remove();
  });

  const lines = (observed: readonly Observation[], steps: readonly number[]) =>
    steps.map(
      (i) =>
        `#${i} ${timeline[i]!.uri} addr=${timeline[i]!.addr} at=${timeline[i]!.at} → ${observed[i]!.code}`,
    );

  for (const [s, scenario] of SCENARIOS.entries()) {
    test(scenario.name, () => {
      const steps = indexes[s]!;
      const expected = steps.map(
        (i) =>
          `#${i} ${timeline[i]!.uri} addr=${timeline[i]!.addr} at=${timeline[i]!.at} → ${timeline[i]!.code}`,
      );
      assert.deepEqual(lines(fromNginx, steps), expected, 'nginx disagrees with the hand-computed sequence');
      assert.deepEqual(lines(fromReplica, steps), expected, 'the replica disagrees with nginx');
      for (const i of steps) {
        const delayMs = timeline[i]!.delayMs;
        if (delayMs === undefined) continue;
        for (const [who, observed] of [
          ['nginx', fromNginx],
          ['replica', fromReplica],
        ] as const) {
          const held = observed[i]!.elapsedMs;
          assert.ok(
            held >= delayMs - DELAY_BELOW_MS,
            `${who} held #${i} ${held} ms, nginx's delay ${delayMs} ms`,
          );
        }
      }
    });
  }

  test('the upstream saw exactly the requests both let through', () => {
    const passed = timeline.filter((s) => s.code === 200).length;
    assert.equal(upstream.requests.length, 2 * passed);
  });
});
