/**
 * Latency against a Python `http.server` upstream (HTTP/1.1, head and body in two writes, Nagle on),
 * side by side with real nginx on the same configuration: a replica adds at most what nginx adds.
 * On a reused upstream connection such a server waits for a delayed acknowledgement (40 ms and more)
 * before it sends the body; nginx never reuses one without `keepalive`, and the replica, which keeps
 * connections by default, must not reuse them to such a server either (npm test holds that by the
 * server's own count: test/replica/python-upstream.test.ts).
 *
 * Requests go one at a time, alternating between nginx and the replica, over client connections
 * kept across requests and over a fresh one each: GET and POST, small and 256 KiB bodies. The bars:
 * per kind of client connection, the replica's median and 99th percentile within 2 ms of nginx's,
 * and per request kind its median within 2 ms too. With `keepalive` and nginx's usual
 * `proxy_http_version 1.1; proxy_set_header Connection "";` nginx itself waits on the delayed
 * acknowledgement (its tail moves by tens of milliseconds); there the replica's 99th percentile must
 * stay below one more of them. A wait of the kind this is about (40 ms a request) misses every bar.
 *
 * A shared two-core machine moves single rounds' 99th percentiles by milliseconds, nginx's as much as
 * the replica's: ROUNDS rounds are run, each reported with the bars it missed. The replica runs node
 * as the deployment does (deploy/base/replicas.yaml: a 64 MB young generation and an old generation
 * that starts at 64 MB), and both servers at a raised priority (test/helpers/measured-priority.ts).
 *
 * Run: npm run bench:python-latency   (last line: JSON)
 * Knobs: BENCH_ROUNDS (default 5).
 */
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import {
  freePorts,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../test/helpers/limitswitch-process.ts';
import { raiseMeasuredPriority } from '../test/helpers/measured-priority.ts';
import { type RunningNginx, startNginx } from '../test/helpers/nginx.ts';
import {
  LARGE_BODY_BYTES,
  type PythonUpstream,
  startPythonUpstream,
} from '../test/helpers/python-upstream.ts';
import {
  type ConnectionKind,
  quantile,
  TimedClient,
  type TimedRequest,
} from '../test/helpers/timed-requests.ts';

const SAMPLES_PER_CASE = 50;
const KEPT_SAMPLES = 20;
const WARM_UP = 20;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
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
  const text = readFileSync(new URL('../deploy/base/replicas.yaml', import.meta.url), 'utf8');
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
      if (status !== 200) throw new Error(`${server} ${request.method} ${request.path}: ${status}`);
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

async function main(): Promise<void> {
  const dir = new TempDir();
  raiseMeasuredPriority();
  const python: PythonUpstream = await startPythonUpstream();
  const [listen] = await freePorts(1);
  const deployed = deployedNode();
  const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(listen!, python.port)}\n}\n`);
  const [nginx, replica]: [RunningNginx, ReplicaRun] = await Promise.all([
    startNginx({ http: (port) => body(port, python.port) }),
    startReplica(config, [], {
      status: false,
      env: { NODE_OPTIONS: deployed.nodeOptions },
      nodeArgs: deployed.nodeArgs,
    }),
  ]);
  const rows: Record<string, unknown>[] = [];
  try {
    for (let i = 0; i < ROUNDS; i++) {
      const round = await measureRound(nginx.port, replica.ports[String(listen)]!);
      const misses = missed(round);
      console.log(`round ${i + 1}: ${misses.length === 0 ? 'every bar met' : `missed ${misses.join('; ')}`}`);
      const row: Record<string, unknown> = { round: i + 1, met: misses.length === 0 };
      for (const [kind, { nginx: n, replica: r }] of round.pooled) {
        console.log(`  ${kind}: nginx ${figures(n)}; replica ${figures(r)}`);
        row[`${kind}_p50_added_ms`] = round2(quantile(r, 0.5) - quantile(n, 0.5));
        row[`${kind}_p99_added_ms`] = round2(quantile(r, 0.99) - quantile(n, 0.99));
      }
      for (const [name, { nginx: n, replica: r }] of round.perRequest)
        console.log(`  ${name}: nginx ${figures(n)}; replica ${figures(r)}`);
      console.log(`  kept: nginx ${figures(round.kept.nginx)}; replica ${figures(round.kept.replica)}`);
      row.kept_p99_added_ms = round2(quantile(round.kept.replica, 0.99) - quantile(round.kept.nginx, 0.99));
      rows.push(row);
    }
  } finally {
    await Promise.all([nginx.stop(), stopAll(), python.stop()]);
    dir.remove();
  }
  console.log(JSON.stringify({ rounds: rows, roundsMeetingEveryBar: rows.filter((r) => r.met).length }));
}

const round2 = (x: number) => Math.round(x * 100) / 100;

await main();
