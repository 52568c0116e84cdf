/**
 * A Python `http.server` upstream (HTTP/1.1, head and body in two writes, Nagle on): on a connection
 * used again, such a server waits for a delayed acknowledgement (40 ms and more) before it sends the
 * body. nginx never uses a connection again without `keepalive`; the replica keeps upstream
 * connections by default, and must give such a server a connection a request once it has seen it
 * write a head alone (upstream-connection.ts). Counted by the server itself: each answer says how many
 * requests its connection has served. The latency this is about, against nginx's, is measured by
 * `npm run bench:python-latency` (docs/benchmarks.md).
 */
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import { after, before, describe, test } from 'node:test';
import {
  freePorts,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { type PythonUpstream, startPythonUpstream } from '../helpers/python-upstream.ts';

const REQUESTS = 24;
/** Answers the replica may take on a used connection before it has seen the server's pattern. */
const LEARNING_ANSWERS = 3;

function body(listen: number, python: number): string {
  return `
    upstream python {
        server 127.0.0.1:${python};
    }
    server {
        listen 127.0.0.1:${listen};
        server_name cafe.example.com;
        location / { proxy_pass http://python; }
    }
`;
}

/** `count` requests one after another over one kept client connection; each answer's connection count. */
async function connectionCounts(port: number, path: string, count: number): Promise<number[]> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const counts: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      counts.push(
        await new Promise<number>((resolve, reject) => {
          const req = request(
            { port, host: '127.0.0.1', path, agent, headers: { host: 'cafe.example.com' } },
            (res) => {
              res.resume();
              res.on('end', () => {
                assert.equal(res.statusCode, 200, `${path} answer ${i + 1}`);
                resolve(Number(res.headers['x-connection-requests']));
              });
            },
          );
          req.on('error', reject);
          req.end();
        }),
      );
    }
  } finally {
    agent.destroy();
  }
  return counts;
}

describe('replica: a Python http.server upstream gets a connection a request, as from nginx', () => {
  const dir = new TempDir();
  let python: PythonUpstream;
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let replicaPort = 0;

  before(async () => {
    python = await startPythonUpstream();
    const [listen] = await freePorts(1);
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(listen!, python.port)}\n}\n`);
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => body(port, python.port) }),
      startReplica(config, [], { status: false }),
    ]);
    replicaPort = replica.ports[String(listen)]!;
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll(), python?.stop()]);
    dir.remove();
  });

  for (const path of ['/small', '/large']) {
    test(`GET ${path}: nginx never uses a connection again; the replica stops once it has seen the pattern`, async () => {
      const byNginx = await connectionCounts(nginx.port, path, REQUESTS);
      assert.deepEqual(
        byNginx,
        byNginx.map(() => 1),
      );
      const byReplica = await connectionCounts(replicaPort, path, REQUESTS);
      const firstFresh = byReplica.findIndex((n, i) => i > 0 && n === 1);
      assert.ok(
        firstFresh !== -1 && firstFresh <= LEARNING_ANSWERS,
        `the replica kept using connections: ${byReplica.join(' ')}`,
      );
      assert.deepEqual(
        byReplica.slice(firstFresh),
        byReplica.slice(firstFresh).map(() => 1),
        `after answer ${firstFresh}: ${byReplica.join(' ')}`,
      );
    });
  }
});
