/**
 * `server … max_conns=N` and NGINX Plus's `queue N [timeout=T]` on a replica process, in front of
 * upstreams that hold requests until the test lets them go.
 * - max_conns against real nginx 1.22 (which has it, without the queue): a server at its limit is
 *   skipped, a group with none left answers 502 with nginx's "no live upstreams" line.
 * - The queue (Plus only, so against Plus's documented behaviour): a request waits for a server and
 *   then passes, a full queue answers 502 at once, a wait past `timeout` answers 502, a client that
 *   goes away leaves the queue at once and never reaches the server; the status API and metrics count
 *   each outcome.
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
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** The part nginx 1.22 runs too. */
function maxConnsBody(listen: number, a: number, b: number): string {
  return `
    upstream one { server 127.0.0.1:${a} max_conns=1; }
    upstream two { server 127.0.0.1:${a} max_conns=1; server 127.0.0.1:${b} max_conns=1; }
    server {
        listen 127.0.0.1:${listen};
        server_name cafe.example.com;
        location /one/ { proxy_pass http://one; }
        location /two/ { proxy_pass http://two; }
    }
`;
}

function queueBody(listen: number, a: number): string {
  return `
    upstream q { server 127.0.0.1:${a} max_conns=1; queue 2 timeout=1s; }
    server {
        listen 127.0.0.1:${listen};
        server_name queue.example.com;
        location /q/ { proxy_pass http://q; }
    }
`;
}

async function get(port: number, path: string, host: string, signal?: AbortSignal): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    headers: { host },
    signal: signal ?? AbortSignal.timeout(10_000),
  });
  await res.arrayBuffer();
  return res.status;
}

/** The max_conns timeline; each step's status in order. */
async function playMaxConns(port: number, gates: readonly GatedUpstream[], tag: string): Promise<string[]> {
  const out: string[] = [];
  const call = (path: string) => get(port, `${path}?${tag}`, 'cafe.example.com');
  const hold = async (path: string, gate: GatedUpstream) => {
    const full = `${path}?${tag}-hold`;
    const { answer } = await gate.hold(full, (p) => get(port, p, 'cafe.example.com'));
    return { full, gate, answer };
  };
  const letGo = async (
    held: { full: string; gate: GatedUpstream; answer: Promise<number> },
    step: string,
  ) => {
    held.gate.release(held.full);
    out.push(`${step}: ${await held.answer}`);
  };
  // One server at max_conns=1: the second request finds no server.
  const a = await hold('/one/a', gates[0]!);
  out.push(`one: second: ${await call('/one/b')}`);
  await letGo(a, 'one: first let go');
  out.push(`one: after: ${await call('/one/c')}`);
  // Two servers at max_conns=1: round robin gives each one request; a third finds none.
  const b = await hold('/two/a', gates[0]!);
  const c = await hold('/two/b', gates[1]!);
  out.push(`two: third: ${await call('/two/c')}`);
  await letGo(b, 'two: first let go');
  out.push(`two: one free again: ${await call('/two/d')}`);
  await letGo(c, 'two: second let go');
  return out;
}

function noLiveLines(errorLog: string): string[] {
  return errorLog
    .split('\n')
    .filter((line) => line.includes('no live upstreams'))
    .map((line) =>
      line
        .replace(/^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2} /, 'DATE ')
        .replace(/\] \d+#\d+: \*\d+ /, '] PID: *N ')
        .replace(/\?[nr]/g, '?T')
        .replace(/host: "127\.0\.0\.1:\d+"/, 'host: "HOST"'),
    );
}

describe('max_conns: the replica against nginx', () => {
  const dir = new TempDir();
  const gates: GatedUpstream[] = [];
  let nginx: RunningNginx;
  let replica: ReplicaRun;

  before(async () => {
    gates.push(await GatedUpstream.start(), await GatedUpstream.start());
    const [a, b] = gates.map((g) => g.port) as [number, number];
    const listen = await freePort();
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${maxConnsBody(listen, a, b)}\n}\n`);
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => maxConnsBody(port, a, b) }),
      startReplica(config, ['--error-log', dir.file('error.log')], { status: false }),
    ]);
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    for (const gate of gates) gate.close();
    dir.remove();
  });

  it('the same statuses step by step, and nginx’s “no live upstreams” lines', async () => {
    const fromNginx = await playMaxConns(nginx.port, gates, 'n');
    const fromReplica = await playMaxConns(replica.ports[Object.keys(replica.ports)[0]!]!, gates, 'r');
    assert.deepEqual(fromNginx, [
      'one: second: 502',
      'one: first let go: 200',
      'one: after: 200',
      'two: third: 502',
      'two: first let go: 200',
      'two: one free again: 200',
      'two: second let go: 200',
    ]);
    assert.deepEqual(fromReplica, fromNginx);
    const expected = noLiveLines(nginx.errorLog());
    assert.equal(expected.length, 2);
    assert.deepEqual(noLiveLines(dir.read('error.log')), expected);
  });
});

describe('queue: waiting for a server (NGINX Plus’s queue)', () => {
  const dir = new TempDir();
  let gate: GatedUpstream;
  let replica: ReplicaRun;
  let port: number;

  const call = (path: string, signal?: AbortSignal) => get(port, path, 'queue.example.com', signal);
  const hold = (path: string) => gate.hold(path, (p) => call(p));
  const status = async () => {
    const res = await fetch(`${replica.statusUrl}/api/9/http/upstreams/q`);
    assert.equal(res.status, 200);
    return (await res.json()) as {
      peers: { active: number; max_conns: number }[];
      queue: Record<string, number>;
    };
  };
  const queued = async (size: number) =>
    waitFor(async () => (await status()).queue.size === size, { message: `${size} queued` });
  const metric = async (series: string) =>
    metricValue(await (await fetch(`${replica.statusUrl}/metrics`)).text(), series);

  before(async () => {
    gate = await GatedUpstream.start();
    const listen = await freePort();
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${queueBody(listen, gate.port)}\n}\n`);
    replica = await startReplica(config, ['--error-log', dir.file('error.log')]);
    port = replica.ports[String(listen)]!;
  });

  after(async () => {
    await stopAll();
    gate?.close();
    dir.remove();
  });

  it('a request waits while the server is at max_conns, then passes when it frees', async () => {
    const { answer: first } = await hold('/q/wait-a-hold');
    const second = call('/q/wait-b-hold');
    await queued(1);
    assert.deepEqual(
      (await status()).peers.map((p) => [p.active, p.max_conns]),
      [[1, 1]],
    );
    assert.equal(gate.seen.includes('/q/wait-b-hold'), false, 'not sent while the server is busy');
    gate.release('/q/wait-a-hold');
    assert.equal(await first, 200);
    await gate.arrived('/q/wait-b-hold');
    gate.release('/q/wait-b-hold');
    assert.equal(await second, 200);
    const after = await status();
    assert.equal(after.queue.size, 0);
    assert.equal(after.queue.served, 1);
    assert.equal(after.peers[0]!.active, 0);
  });

  it('a full queue answers 502 at once; the waiting ones are served in order', async () => {
    const { answer: first } = await hold('/q/full-a-hold');
    const waiting = [call('/q/full-b-hold'), call('/q/full-c-hold')];
    await queued(2);
    assert.equal(await call('/q/full-d'), 502);
    assert.equal((await status()).queue.overflows, 1);
    gate.release('/q/full-a-hold');
    await gate.arrived('/q/full-b-hold');
    assert.equal(gate.seen.includes('/q/full-c-hold'), false, 'c waits behind b');
    gate.release('/q/full-b-hold');
    await gate.arrived('/q/full-c-hold');
    gate.release('/q/full-c-hold');
    assert.deepEqual(await Promise.all([first, ...waiting]), [200, 200, 200]);
    assert.equal(gate.seen.includes('/q/full-d'), false);
  });

  it('a wait past timeout= answers 502', async () => {
    const { answer: first } = await hold('/q/late-a-hold');
    const startedMs = performance.now();
    assert.equal(await call('/q/late-b'), 502);
    const waitedMs = performance.now() - startedMs;
    assert.ok(waitedMs >= 990 && waitedMs < 5000, `waited ${waitedMs} ms for timeout=1s`);
    assert.equal((await status()).queue.timed_out, 1);
    gate.release('/q/late-a-hold');
    assert.equal(await first, 200);
    assert.equal(gate.seen.includes('/q/late-b'), false);
  });

  it('a client that goes away leaves the queue at once, and its request never reaches the server', async () => {
    const { answer: first } = await hold('/q/gone-a-hold');
    const leaving = new AbortController();
    const gone = call('/q/gone-b-hold', leaving.signal).catch((err: Error) => err.name);
    await queued(1);
    leaving.abort();
    assert.equal(await gone, 'AbortError');
    await queued(0);
    assert.equal((await status()).queue.left, 1);
    const next = call('/q/gone-c-hold');
    await queued(1);
    gate.release('/q/gone-a-hold');
    await gate.arrived('/q/gone-c-hold');
    gate.release('/q/gone-c-hold');
    assert.deepEqual(await Promise.all([first, next]), [200, 200]);
    assert.equal(gate.seen.includes('/q/gone-b-hold'), false);
  });

  it('the error log says why each 502 came, and the metrics count every outcome', async () => {
    const lines = dir
      .read('error.log')
      .split('\n')
      .filter((line) => line.includes('queue'));
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.match(
      lines[0]!,
      /\[error\] .*upstream queue is full while connecting to upstream, client: 127\.0\.0\.1, server: queue\.example\.com, request: "GET \/q\/full-d HTTP\/1\.1", upstream: "http:\/\/q\/q\/full-d"/,
    );
    assert.match(
      lines[1]!,
      /upstream timed out in queue while connecting to upstream, .*request: "GET \/q\/late-b HTTP\/1\.1"/,
    );
    const outcome = (o: string) =>
      metric(`limitswitch_upstream_queue_requests_total{upstream="q",outcome="${o}"}`);
    assert.equal(await outcome('served'), 4);
    assert.equal(await outcome('timed_out'), 1);
    assert.equal(await outcome('left'), 1);
    assert.equal(await metric('limitswitch_upstream_queue_overflows_total{upstream="q"}'), 1);
    assert.equal(await metric('limitswitch_upstream_queue_max_size{upstream="q"}'), 2);
    assert.equal(
      await metric('nginxplus_upstream_server_active{upstream="q",server="127.0.0.1:' + gate.port + '"}'),
      0,
    );
    assert.ok((await metric('limitswitch_upstream_queue_wait_seconds_total{upstream="q"}')) >= 1);
  });
});
