/**
 * Latency against a Python `http.server` upstream (HTTP/1.1, head and body in two writes, Nagle on),
 * differential against real nginx on the same configuration: a replica adds at most what nginx adds.
 * On a reused upstream connection such a server waits for a delayed acknowledgement (40 ms and more)
 * before it sends the body; nginx never reuses one without `keepalive`, and the replica, which keeps
 * connections by default, must not reuse them to such a server either.
 *
 * Requests go one at a time, alternating between nginx and the replica, over client connections
 * kept across requests and over a fresh one each: GET and POST, small and 256 KiB bodies. Per kind of
 * client connection, the replica's median and 99th percentile must be within 2 ms of nginx's, and per
 * request kind its median within 2 ms too. With `keepalive` and nginx's usual `proxy_http_version 1.1;
 * proxy_set_header Connection "";` nginx itself waits on the delayed acknowledgement (its tail moves
 * by tens of milliseconds); there the replica's 99th percentile must stay below one more of them.
 *
 * A shared two-core machine moves single rounds' 99th percentiles by milliseconds, nginx's as much as
 * the replica's: the comparison is made in up to ten rounds and holds when one round meets every bar
 * (on a slow day of the two-core VM a round met them in 10 of 22, and ten runs of the test all passed,
 * in the first to the fifth round). A wait of the kind this is about (40 ms a request) fails every
 * round. The replica runs node as the deployment does
 * (deploy/base/replicas.yaml): a 64 MB young generation (with Node's default, one replica process in
 * four or five showed a ~10 ms 99th percentile from scavenges, in every round) and an old generation
 * that starts at 64 MB (with Node's default, the 256 KiB bodies' memory started a full collection
 * every forty or so requests).
 *
 * The comparison is between the two servers, not them and another job on the machine: the test runs
 * them at a raised priority (helpers/measured-priority.ts). Without it, beside a job that keeps two
 * cores busy, the replica's median rose 2.5–4.4 ms above nginx's, which takes about a third of the
 * replica's CPU time per request.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import {
  freePorts,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { raiseMeasuredPriority } from '../helpers/measured-priority.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { LARGE_BODY_BYTES, type PythonUpstream, startPythonUpstream } from '../helpers/python-upstream.ts';
import { type ConnectionKind, quantile, TimedClient, type TimedRequest } from '../helpers/timed-requests.ts';

const SAMPLES_PER_CASE = 50;
const KEPT_SAMPLES = 20;
const WARM_UP = 20;
const ROUNDS = 10;
const ALLOWED_MS = 2;
/** The tail's bar where nginx waits on delayed acknowledgements: below one more of them (40 ms). */
const KEPT_TAIL_ALLOWED_MS = 20;

const REQUESTS: readonly (TimedRequest & { readonly name: string })[] = [
  { name: 'GET small', method: 'GET', path: '/small' },
  { name: 'GET large', method: 'GET', path: '/large' },
  { name: 'POST small', method: 'POST', path: '/post', body: Buffer.from('hello=world') },
  { name: 'POST large', method: 'POST', path: '/post', body: Buffer.alloc(LARGE_BODY_BYTES, 'p') },
];

function body(listen: number, python: number): string {
  return `
    upstream python {
        server 127.0.0.1:${python};
    }
    upstream python_kept {
        server 127.0.0.1:${python};
        keepalive 8;
    }
    server {
        listen 127.0.0.1:${listen};
        server_name cafe.example.com;
        location / { proxy_pass http://python; }
        location /kept/ {
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_pass http://python_kept/;
        }
    }
`;
}

interface DeployedNode {
  /** node's own flags, from the container's `command` (`node …flags bin/limitswitch.js`). */
  readonly nodeArgs: string[];
  readonly nodeOptions: string;
}

/** How deploy/base/replicas.yaml runs node in the replica container. */
function deployedNode(): DeployedNode {
  interface Container {
    name: string;
    command?: string[];
    env?: { name: string; value?: string }[];
  }
  const text = readFileSync(new URL('../../deploy/base/replicas.yaml', import.meta.url), 'utf8');
  const container = parseAllDocuments(text)
    .flatMap((doc) => (doc.toJS()?.spec?.template?.spec?.containers ?? []) as Container[])
    .find((c) => c.name === 'replica');
  const command = container?.command;
  const nodeOptions = container?.env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
  if (command?.[0] !== 'node' || command.at(-1) !== 'bin/limitswitch.js' || nodeOptions === undefined) {
    throw new Error(
      'deploy/base/replicas.yaml: no replica container with `node … bin/limitswitch.js` and NODE_OPTIONS',
    );
  }
  return { nodeArgs: command.slice(1, -1), nodeOptions };
}

interface Samples {
  readonly nginx: number[];
  readonly replica: number[];
}

/** `count` rounds of `request`, alternating which server goes first; every answer must be a 200. */
async function compare(
  clients: { readonly nginx: TimedClient; readonly replica: TimedClient },
  request: TimedRequest,
  count: number,
  into: Samples = { nginx: [], replica: [] },
): Promise<Samples> {
  for (let i = 0; i < count; i++) {
    const order = i % 2 === 0 ? (['nginx', 'replica'] as const) : (['replica', 'nginx'] as const);
    for (const server of order) {
      const { ms, status } = await clients[server].time(request);
      assert.equal(status, 200, `${server} ${request.method} ${request.path}`);
      into[server].push(ms);
    }
  }
  return into;
}

const figures = (samples: readonly number[]) =>
  `p50 ${quantile(samples, 0.5).toFixed(2)} p99 ${quantile(samples, 0.99).toFixed(2)} ms`;

/** One round's figures: per client connection kind (request kinds together), per request kind, kept. */
interface Round {
  readonly pooled: Map<ConnectionKind, Samples>;
  readonly perRequest: Map<string, Samples>;
  readonly kept: Samples;
}

async function measureRound(nginxPort: number, replicaPort: number): Promise<Round> {
  const pooled = new Map<ConnectionKind, Samples>();
  const perRequest = new Map<string, Samples>();
  for (const kind of ['reused', 'fresh'] as const) {
    const clients = { nginx: new TimedClient(nginxPort, kind), replica: new TimedClient(replicaPort, kind) };
    const all: Samples = { nginx: [], replica: [] };
    for (const request of REQUESTS) {
      // warm-up: the replica's compiler, its first look at the server (whose first response on a
      // new connection may not show how it writes), the first connections of both
      await compare(clients, request, WARM_UP);
      const samples = await compare(clients, request, SAMPLES_PER_CASE);
      perRequest.set(`${kind} ${request.name}`, samples);
      all.nginx.push(...samples.nginx);
      all.replica.push(...samples.replica);
    }
    pooled.set(kind, all);
    clients.nginx.close();
    clients.replica.close();
  }
  const clients = {
    nginx: new TimedClient(nginxPort, 'reused'),
    replica: new TimedClient(replicaPort, 'reused'),
  };
  await compare(clients, { method: 'GET', path: '/kept/small' }, WARM_UP);
  const kept = await compare(clients, { method: 'GET', path: '/kept/small' }, KEPT_SAMPLES);
  clients.nginx.close();
  clients.replica.close();
  return { pooled, perRequest, kept };
}

/** The bars one round misses, in words (empty: it meets them all). */
function missed(round: Round): string[] {
  const misses: string[] = [];
  const within = (
    what: string,
    n: readonly number[],
    r: readonly number[],
    q: number,
    allowedMs = ALLOWED_MS,
  ) => {
    if (quantile(r, q) > quantile(n, q) + allowedMs)
      misses.push(`${what}: nginx ${figures(n)}, replica ${figures(r)}`);
  };
  for (const [kind, { nginx: n, replica: r }] of round.pooled) {
    within(`${kind} p50`, n, r, 0.5);
    within(`${kind} p99`, n, r, 0.99);
  }
  for (const [name, { nginx: n, replica: r }] of round.perRequest) within(`${name} p50`, n, r, 0.5);
  within('kept p50', round.kept.nginx, round.kept.replica, 0.5);
  within('kept p99', round.kept.nginx, round.kept.replica, 0.99, KEPT_TAIL_ALLOWED_MS);
  return misses;
}

describe('replica: latency in front of a Python http.server, against nginx', () => {
  const dir = new TempDir();
  let python: PythonUpstream;
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  const rounds: Round[] = [];
  /** The round that met every bar, else the last one. */
  let chosen: Round;

  before(async () => {
    raiseMeasuredPriority();
    python = await startPythonUpstream();
    const [listen] = await freePorts(1);
    const deployed = deployedNode();
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(listen!, python.port)}\n}\n`);
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => body(port, python.port) }),
      startReplica(config, [], {
        status: false,
        env: { NODE_OPTIONS: deployed.nodeOptions },
        nodeArgs: deployed.nodeArgs,
      }),
    ]);
    for (let i = 0; i < ROUNDS; i++) {
      const round = await measureRound(nginx.port, replica.ports[String(listen)]!);
      rounds.push(round);
      chosen = round;
      if (missed(round).length === 0) break;
    }
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll(), python?.stop()]);
    dir.remove();
  });

  const roundsMissed = () =>
    rounds.map((round, i) => `round ${i + 1}: ${missed(round).join('; ') || 'none'}`).join('\n');

  for (const kind of ['reused', 'fresh'] as const) {
    test(`${kind} client connections: median and 99th percentile within ${ALLOWED_MS} ms of nginx's`, (t) => {
      const { nginx: n, replica: r } = chosen.pooled.get(kind)!;
      t.diagnostic(`nginx ${figures(n)}; replica ${figures(r)} (round ${rounds.indexOf(chosen) + 1})`);
      t.diagnostic(`p99 ${(quantile(r, 0.99) - quantile(n, 0.99)).toFixed(2)} ms from nginx's`);
      assert.ok(quantile(r, 0.5) <= quantile(n, 0.5) + ALLOWED_MS, roundsMissed());
      assert.ok(quantile(r, 0.99) <= quantile(n, 0.99) + ALLOWED_MS, roundsMissed());
    });
  }

  test(`each request kind: median within ${ALLOWED_MS} ms of nginx's`, (t) => {
    for (const [name, { nginx: n, replica: r }] of chosen.perRequest) {
      t.diagnostic(`${name}: nginx ${figures(n)}; replica ${figures(r)}`);
      assert.ok(quantile(r, 0.5) <= quantile(n, 0.5) + ALLOWED_MS, roundsMissed());
    }
  });

  test('keepalive with HTTP/1.1: where nginx waits on the acknowledgement, the replica adds nothing', (t) => {
    const { nginx: n, replica: r } = chosen.kept;
    t.diagnostic(`nginx ${figures(n)}; replica ${figures(r)}`);
    assert.ok(quantile(r, 0.5) <= quantile(n, 0.5) + ALLOWED_MS, roundsMissed());
    assert.ok(quantile(r, 0.99) <= quantile(n, 0.99) + KEPT_TAIL_ALLOWED_MS, roundsMissed());
  });
});
