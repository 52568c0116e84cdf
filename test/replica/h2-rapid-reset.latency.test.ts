/**
 * HTTP/2 rapid reset (CVE-2023-44487) against a replica and against nginx, in one run, on the same
 * configuration: four connections, each sending HEADERS and RST_STREAM pairs as fast as it can, while
 * another client sends ordinary requests over HTTP/1.1. Each server must send GOAWAY to every
 * attacking connection, having taken streams in nginx's order of magnitude (the GOAWAY's last stream
 * id), and the other client's worst latency on the replica must stay within 0.5 s. A latency test:
 * it runs alone, after the rest of `npm test`, at a raised priority (helpers/measured-priority.ts:
 * beside a job keeping both cores busy the other client once waited 0.7 s on the replica).
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { type RapidResetOutcome, rapidResetFromChild } from '../helpers/h2-rapid-reset.ts';
import { freePorts, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { raiseMeasuredPriority } from '../helpers/measured-priority.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { ScriptedUpstream } from '../helpers/raw-peers.ts';

const ATTACKERS = 4;
const WORST_LATENCY_MS = 500;

function serversBody(h2: number, h1: number, upstream: number): string {
  return `
    server {
        listen ${h2} http2;
        location / { proxy_pass http://127.0.0.1:${upstream}; }
    }
    server {
        listen ${h1};
        location / { return 200 "h1\\n"; }
    }
`;
}

/**
 * Ordinary requests until `done`, each on a connection of its own (one request after another, 5 ms
 * apart: a steady client, not a second flood); the slowest answer, ms, connection included.
 */
async function ordinaryClient(port: number, done: Promise<unknown>): Promise<number> {
  let stop = false;
  void done.then(() => {
    stop = true;
  });
  let worst = 0;
  while (!stop) {
    const startedMs = performance.now();
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.on('error', reject);
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (!text.endsWith('h1\n')) return;
        socket.destroy();
        resolve();
      });
      socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    worst = Math.max(worst, performance.now() - startedMs);
    await delay(5);
  }
  return worst;
}

interface Attacked {
  readonly outcomes: readonly RapidResetOutcome[];
  readonly worstMs: number;
}

async function attack(h2: number, h1: number): Promise<Attacked> {
  const attacks = Promise.all(Array.from({ length: ATTACKERS }, () => rapidResetFromChild(h2, 30_000)));
  const worstMs = await ordinaryClient(h1, attacks);
  return { outcomes: await attacks, worstMs };
}

const streamsTaken = (outcome: RapidResetOutcome) => ((outcome.lastStreamId ?? 0) + 1) / 2;

describe('HTTP/2 rapid reset: the replica beside nginx', () => {
  const dir = new TempDir();
  let upstream: ScriptedUpstream;
  let nginx: RunningNginx;
  let nginxH1: number;
  let replicaH2: number;
  let replicaH1: number;
  let replicaStderr: () => string;

  before(async () => {
    raiseMeasuredPriority();
    upstream = await ScriptedUpstream.start(() => 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nup\n');
    const [h1, rh2, rh1] = await freePorts(3);
    nginxH1 = h1!;
    nginx = await startNginx({ http: (port) => serversBody(port, nginxH1, upstream.port) });
    const file = dir.write('nginx.conf', `events {}\nhttp {\n${serversBody(rh2!, rh1!, upstream.port)}}\n`);
    const replica = await startReplica(file, ['--error-log-level', 'info']);
    replicaH2 = replica.ports[String(rh2)]!;
    replicaH1 = replica.ports[String(rh1)]!;
    replicaStderr = () => replica.process.stderr;
  });

  after(async () => {
    await stopAll();
    await nginx?.stop();
    await upstream.close();
    dir.remove();
  });

  test('both send GOAWAY in the same order of magnitude of streams; other clients wait ≤ 0.5 s', async (t) => {
    const ofNginx = await attack(nginx.port, nginxH1);
    const ofReplica = await attack(replicaH2, replicaH1);
    const line = (name: string, run: Attacked) =>
      `${name}: streams taken ${run.outcomes.map(streamsTaken).join(', ')}; resets sent before the GOAWAY arrived ${run.outcomes.map((o) => o.resets).join(', ')}; other client's worst ${run.worstMs.toFixed(1)} ms`;
    t.diagnostic(line('nginx', ofNginx));
    t.diagnostic(line('replica', ofReplica));
    for (const run of [ofNginx, ofReplica]) {
      for (const outcome of run.outcomes)
        assert.notEqual(outcome.lastStreamId, null, 'a GOAWAY for every attacker');
    }
    const nginxMost = Math.max(...ofNginx.outcomes.map(streamsTaken));
    for (const outcome of ofReplica.outcomes)
      assert.ok(streamsTaken(outcome) <= 10 * nginxMost, line('replica', ofReplica));
    assert.ok(ofReplica.worstMs <= WORST_LATENCY_MS, line('replica', ofReplica));
    // the guards said why, in nginx's words
    assert.match(
      replicaStderr(),
      /\[info\] .*client (sent too many streams at once|sent too many refused streams|reset too many streams before they ran)/,
    );
  });
});
