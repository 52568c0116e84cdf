/**
 * `worker_processes 2` against real nginx with `worker_processes 2` (a master, two worker
 * processes, `reuseport`): one configuration, one concurrent timeline sent to nginx twice (two fresh
 * starts) and to a fresh replica once, every request on a connection of its own. Forty client
 * addresses (X-Forwarded-For, trusted from 127.0.0.1) each send all their requests at once, a client
 * every few milliseconds, so the kernel spreads them over both workers of either server.
 *
 * Which request of a client gets which answer depends on the order of arrival, but a client's
 * requests arrive within a window far shorter than one request's worth of its rates (1r/s and
 * slower), so the multiset of its answers in a location is nginx's semantics alone: burst=5 nodelay
 * lets exactly 6 of 8 pass, burst=4 delay=2 passes 3 and delays 2, and so on (`designed` below). A
 * `limit_conn addr 2` location's upstream holds what it is sent until all six of a client's
 * requests there are decided, so exactly 2 are in flight and 4 refused.
 *
 * Each request's outcome is its status with `$limit_req_status` (`$limit_conn_status` on the
 * limit_conn location) and the refusing or delaying zone, read from the error log as both write it
 * (a rejection, a delay, a dry-run rejection, each a line naming the request; no line: PASSED). On
 * nginx the reading is checked against the variable itself, which `proxy_set_header` sends its
 * upstream. The replica may disagree with
 * nginx in no more (client, location) groups than nginx's two runs disagree with each other.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { reusePortSupported } from '../../src/replica/workers/worker-runtime.ts';
import { freePort } from '../helpers/free-port.ts';
import { type LogLine, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { type NginxMaster, startNginxMaster } from '../helpers/nginx-master.ts';

const WORKERS_RUN = reusePortSupported();
const CLIENTS = 40;
/** Between one client's requests and the next client's: the timeline spans about a second. */
const STAGGER_MS = 25;
/** Groups a failure message shows in full. */
const SHOWN = 20;

/** One location of the configuration and what one client's requests there come to. */
interface Place {
  readonly path: string;
  readonly limits: string;
  readonly requests: number;
  /** nginx's answers to that many requests arriving at once, as outcomes (see `outcome`). */
  readonly designed: readonly string[];
}

const times = (n: number, outcome: string): string[] => Array(n).fill(outcome);

const PLACES: readonly Place[] = [
  {
    path: '/nodelay',
    limits: 'limit_req zone=nd burst=5 nodelay;',
    requests: 8,
    designed: [...times(6, '200 PASSED'), ...times(2, '503 REJECTED nd')],
  },
  {
    path: '/delay',
    limits: 'limit_req zone=dl burst=4 delay=2;',
    requests: 7,
    designed: [...times(3, '200 PASSED'), ...times(2, '200 DELAYED dl'), ...times(2, '503 REJECTED dl')],
  },
  {
    path: '/burst',
    limits: 'limit_req zone=bu burst=2; limit_req_status 429;',
    requests: 4,
    designed: ['200 PASSED', ...times(2, '200 DELAYED bu'), '429 REJECTED bu'],
  },
  {
    // the second zone refuses; the first keeps nothing of what it refused
    path: '/two',
    limits: 'limit_req zone=tw1 burst=4 nodelay; limit_req zone=tw2 burst=2 nodelay;',
    requests: 6,
    designed: [...times(3, '200 PASSED'), ...times(3, '503 REJECTED tw2')],
  },
  {
    path: '/dry',
    limits: 'limit_req zone=dr burst=2 nodelay; limit_req_dry_run on;',
    requests: 5,
    designed: [...times(3, '200 PASSED'), ...times(2, '200 REJECTED_DRY_RUN dr')],
  },
  {
    path: '/conn',
    limits: 'limit_conn addr 2;',
    requests: 6,
    designed: [...times(2, '200 PASSED'), ...times(4, '503 REJECTED addr')],
  },
];
const CONN = PLACES.find((p) => p.path === '/conn')!;

/** The same file for both but the port; nginx's paths are in its prefix, and the replica ignores them. */
function config(listen: number, upstream: number): string {
  const locations = PLACES.map(
    (p) => `        location ${p.path} { ${p.limits} proxy_pass http://127.0.0.1:${upstream}; }`,
  );
  return `worker_processes 2;
master_process on;
daemon off;
pid logs/nginx.pid;
error_log logs/error.log info;
events {
    worker_connections 4096;
}
http {
    client_body_temp_path temp/client_body;
    proxy_temp_path temp/proxy;
    fastcgi_temp_path temp/fastcgi;
    uwsgi_temp_path temp/uwsgi;
    scgi_temp_path temp/scgi;
    access_log off;
    set_real_ip_from 127.0.0.1;
    real_ip_header X-Forwarded-For;
    limit_req_zone $binary_remote_addr zone=nd:1m rate=30r/m;
    limit_req_zone $binary_remote_addr zone=dl:1m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=bu:1m rate=1r/s;
    limit_req_zone $binary_remote_addr zone=tw1:1m rate=30r/m;
    limit_req_zone $remote_addr zone=tw2:1m rate=20r/m;
    limit_req_zone $binary_remote_addr zone=dr:1m rate=30r/m;
    limit_conn_zone $binary_remote_addr zone=addr:1m;
    server {
        listen 127.0.0.1:${listen} reuseport;
        server_name localhost;
        proxy_set_header X-LRS $limit_req_status;
        proxy_set_header X-LCS $limit_conn_status;
${locations.join('\n')}
    }
}
`;
}

const clientAddr = (c: number) => `10.7.${Math.floor(c / 200)}.${(c % 200) + 1}`;

/**
 * One client's requests to the limit_conn location, held at the upstream until each is decided: it
 * reached the upstream (held) or was answered without reaching it.
 */
class ConnGate {
  readonly #held: ServerResponse[] = [];
  #answered = 0;
  #open = false;

  arrived(res: ServerResponse): void {
    if (this.#open) res.end('ok');
    else {
      this.#held.push(res);
      this.#check();
    }
  }

  /** A response reached the client (after the gate opened: one of those it held). */
  answered(): void {
    if (this.#open) return;
    this.#answered++;
    this.#check();
  }

  #check(): void {
    if (this.#held.length + this.#answered < CONN.requests) return;
    this.#open = true;
    for (const res of this.#held.splice(0)) res.end('ok');
  }
}

/** The upstream of every run: answers at once but on /conn (gated); records the headers sent. */
class Upstream {
  /** Request URI → the `X-LRS` and `X-LCS` headers it came with. */
  readonly seen = new Map<string, { readonly lrs: string; readonly lcs: string }>();
  readonly gates = new Map<string, ConnGate>();
  readonly server: Server;

  constructor() {
    this.server = createServer((req, res) => {
      const uri = req.url ?? '';
      this.seen.set(uri, {
        lrs: String(req.headers['x-lrs'] ?? ''),
        lcs: String(req.headers['x-lcs'] ?? ''),
      });
      req.resume();
      const query = new URL(uri, 'http://upstream').searchParams;
      const gate = uri.startsWith(CONN.path)
        ? this.gates.get(`${query.get('r')} ${query.get('c')}`)
        : undefined;
      if (gate === undefined) res.end('ok');
      else gate.arrived(res);
    });
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }
}

/** What a request came to: the URI it was sent as, its client, location and status (0: no answer). */
interface Sent {
  readonly uri: string;
  readonly addr: string;
  readonly place: Place;
  readonly status: number;
}

/** One GET on a connection of its own; resolves with the status, 0 if none came. */
function send(port: number, uri: string, addr: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: uri,
        agent: false,
        headers: { 'x-forwarded-for': addr },
        timeout: 20_000,
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', () => resolve(0));
      },
    );
    req.once('timeout', () => req.destroy(new Error('timed out')));
    req.once('error', () => resolve(0));
    req.end();
  });
}

/** The timeline: client after client, each sending all its requests at once. */
async function play(run: string, port: number, upstream: Upstream): Promise<Sent[]> {
  const sent: Promise<Sent>[] = [];
  for (let c = 0; c < CLIENTS; c++) {
    if (c > 0) await delay(STAGGER_MS);
    const addr = clientAddr(c);
    const gate = new ConnGate();
    upstream.gates.set(`${run} ${c}`, gate);
    for (const place of PLACES) {
      for (let n = 0; n < place.requests; n++) {
        const uri = `${place.path}?r=${run}&c=${c}&n=${n}`;
        sent.push(
          send(port, uri, addr).then((status) => {
            if (place === CONN) gate.answered();
            return { uri, addr, place, status };
          }),
        );
      }
    }
  }
  return Promise.all(sent);
}

/** A limiting line of an nginx-format error log: what it says of which request. */
const LIMIT_LINE =
  /(limiting requests|delaying request|limiting connections)(, dry run)?(?:, excess: [0-9.]+)?,? by zone "([^"]+)", client: ([^,]+), server: [^,]*, request: "GET (\S+) HTTP\/1\.1"/;

/** Request URI → what the error log says of it (`REJECTED nd`, `DELAYED dl`, `REJECTED_DRY_RUN dr`…). */
function limitNotes(errorLog: string): Map<string, string[]> {
  const notes = new Map<string, string[]>();
  for (const line of errorLog.split('\n')) {
    const m = LIMIT_LINE.exec(line);
    if (m === null) continue;
    const [what, dry, zone, client, uri] = [m[1]!, m[2], m[3]!, m[4]!, m[5]!];
    const status = `${what === 'delaying request' ? 'DELAYED' : 'REJECTED'}${dry ? '_DRY_RUN' : ''}`;
    const query = new URL(uri, 'http://x').searchParams;
    // the client nginx names must be the one the request was sent for
    const note =
      client === clientAddr(Number(query.get('c'))) ? `${status} ${zone}` : `${status} ${zone} ${client}`;
    notes.set(uri, [...(notes.get(uri) ?? []), note]);
  }
  return notes;
}

/** `status $limit_req_status [zone]`, e.g. `200 PASSED`, `503 REJECTED nd`, `200 DELAYED dl`. */
function outcome(sent: Sent, notes: Map<string, string[]>): string {
  return `${sent.status} ${(notes.get(sent.uri) ?? ['PASSED']).join(' + ')}`;
}

/** (location client) → the client's outcomes there, sorted. */
type Groups = Map<string, string[]>;

interface Run {
  readonly name: string;
  readonly sent: readonly Sent[];
  readonly notes: Map<string, string[]>;
  readonly groups: Groups;
  readonly ms: number;
}

function runOf(name: string, sent: Sent[], errorLog: string, ms: number): Run {
  const notes = limitNotes(errorLog);
  const groups: Groups = new Map();
  for (const s of sent) {
    const key = `${s.place.path} ${s.addr}`;
    groups.set(key, [...(groups.get(key) ?? []), outcome(s, notes)]);
  }
  for (const list of groups.values()) list.sort();
  return { name, sent, notes, groups, ms };
}

/** `6×200 PASSED, 2×503 REJECTED nd` */
function multiset(outcomes: readonly string[] | undefined): string {
  if (outcomes === undefined) return '(none)';
  const counts = new Map<string, number>();
  for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1);
  return [...counts].map(([o, n]) => `${n}×${o}`).join(', ');
}

const same = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
  a !== undefined && b !== undefined && a.join('\n') === b.join('\n');

/** Listening TCP sockets on 127.0.0.1:`port` (one per thread or process that listens with SO_REUSEPORT). */
function listeningSockets(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1] === local && fields[3] === '0A').length;
}

describe('worker_processes 2: the replica against nginx with two workers on one concurrent timeline', () => {
  const dir = new TempDir();
  const upstream = new Upstream();
  const nginxRuns: Run[] = [];
  const nginxWorkerStarts: number[] = [];
  const nginxSockets: number[] = [];
  let replicaRun: Run;
  let replicaSockets = 0;
  let replicaLines: readonly LogLine[] = [];
  let replicaOutput = '';

  before(async () => {
    upstream.server.listen(0, '127.0.0.1');
    await once(upstream.server, 'listening');
    for (const name of ['n1', 'n2']) {
      const nginx: NginxMaster = await startNginxMaster((port) => config(port, upstream.port));
      try {
        const started = performance.now();
        const sent = await play(name, nginx.port, upstream);
        const ms = performance.now() - started;
        nginxSockets.push(listeningSockets(nginx.port));
        await nginx.stop();
        nginxWorkerStarts.push(nginx.errorLog().match(/start worker process \d+/g)?.length ?? 0);
        nginxRuns.push(runOf(`nginx ${name}`, sent, nginx.errorLog(), ms));
      } finally {
        await nginx.stop();
      }
    }
    const listen = await freePort();
    const file = dir.write('nginx.conf', config(listen, upstream.port));
    // the error log on stderr (a pipe: written as it comes), read whole once the process has closed it
    const replica = await startReplica(file, ['--error-log', 'stderr', '--error-log-level', 'info'], {
      status: false,
    });
    const port = replica.ports[String(listen)]!;
    const closed = once(replica.process.child, 'close');
    const started = performance.now();
    const sent = await play('r', port, upstream);
    const ms = performance.now() - started;
    replicaSockets = listeningSockets(port);
    await replica.process.stop();
    await closed;
    replicaLines = replica.process.lines;
    replicaOutput = replica.process.output();
    replicaRun = runOf('replica', sent, replica.process.stderr, ms);
  });

  after(async () => {
    await stopAll();
    upstream.server.closeAllConnections();
    upstream.server.close();
    dir.remove();
  });

  test('nginx runs two worker processes, each on its own listening socket', () => {
    assert.deepEqual(nginxWorkerStarts, [2, 2]);
    assert.deepEqual(nginxSockets, [2, 2]);
  });

  test(
    WORKERS_RUN
      ? 'the replica serves from two worker threads, each on its own listening socket'
      : 'the replica serves on one thread and says once why',
    () => {
      const notices = replicaLines.filter((line) =>
        line.msg.includes('"worker_processes" 2 is not in force'),
      );
      assert.equal(notices.length, WORKERS_RUN ? 0 : 1, replicaOutput);
      assert.equal(replicaSockets, WORKERS_RUN ? 2 : 1);
    },
  );

  test('every request was answered, and reached the upstream exactly when it was let through', () => {
    for (const run of [...nginxRuns, replicaRun]) {
      const unanswered = run.sent.filter((s) => s.status === 0).map((s) => s.uri);
      assert.deepEqual(unanswered, [], `${run.name}: no answer`);
      const wrong = run.sent
        .filter((s) => (s.status === 200) !== upstream.seen.has(s.uri))
        .map((s) => `${s.uri} ${s.status}`);
      assert.deepEqual(wrong, [], `${run.name}: answered 200 ⇔ proxied`);
    }
  });

  test('on nginx, the error log tells $limit_req_status and $limit_conn_status as the variables do', () => {
    for (const run of nginxRuns) {
      const wrong = run.sent.flatMap((s) => {
        const seen = upstream.seen.get(s.uri);
        if (seen === undefined) return [];
        const variable = s.place === CONN ? seen.lcs : seen.lrs;
        const told = outcome(s, run.notes).split(' ')[1];
        return variable === told ? [] : [`${s.uri}: ${variable} but the log says ${told}`];
      });
      assert.deepEqual(wrong, [], run.name);
    }
  });

  test('the timeline meets every outcome it was designed for', () => {
    const designed = new Set(PLACES.flatMap((p) => p.designed));
    const met = new Set([...nginxRuns[0]!.groups.values()].flat());
    assert.deepEqual(
      [...designed].filter((o) => !met.has(o)),
      [],
    );
  });

  test('per client and location, the replica disagrees with nginx no more than nginx with itself', (t) => {
    const [n1, n2] = nginxRuns as [Run, Run];
    const keys = [...new Set([...n1.groups.keys(), ...n2.groups.keys(), ...replicaRun.groups.keys()])].sort();
    const designed = (key: string) => PLACES.find((p) => key.startsWith(`${p.path} `))?.designed;
    const nginxApart = keys.filter((k) => !same(n1.groups.get(k), n2.groups.get(k)));
    const replicaApart = keys.filter(
      (k) =>
        !same(replicaRun.groups.get(k), n1.groups.get(k)) &&
        !same(replicaRun.groups.get(k), n2.groups.get(k)),
    );
    const show = (k: string) =>
      `  ${k}\n    nginx 1: ${multiset(n1.groups.get(k))}\n    nginx 2: ${multiset(n2.groups.get(k))}\n    replica: ${multiset(replicaRun.groups.get(k))}\n    designed: ${multiset([...(designed(k) ?? [])].sort())}`;
    /** The first groups in full, then how many more. */
    const list = (apart: string[]) =>
      [
        ...apart.slice(0, SHOWN).map(show),
        ...(apart.length > SHOWN ? [`  … ${apart.length - SHOWN} more`] : []),
      ].join('\n');
    const timings = [...nginxRuns, replicaRun].map((r) => `${r.name} ${Math.round(r.ms)} ms`).join(', ');
    t.diagnostic(
      `${keys.length} groups; the replica apart from both nginx runs in ${replicaApart.length}, nginx from itself in ${nginxApart.length}; timelines: ${timings}`,
    );
    assert.equal(keys.length, CLIENTS * PLACES.length);
    assert.ok(
      replicaApart.length <= nginxApart.length,
      `the replica differs from both nginx runs in ${replicaApart.length} groups, nginx from itself in ${nginxApart.length} (${timings})\n` +
        `replica apart:\n${list(replicaApart)}\nnginx apart:\n${list(nginxApart)}`,
    );
  });
});
