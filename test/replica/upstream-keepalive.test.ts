/**
 * Upstream keep-alive, differential against real nginx: the same `upstream` blocks (`keepalive 2;
 * keepalive_requests 3;`, and `keepalive_timeout 1s`) with nginx's usual `proxy_http_version 1.1;
 * proxy_set_header Connection "";`, in front of one raw HTTP/1.1 server that answers in one write and
 * records every connection made to it. nginx plays each scene first, then the replica; both must show
 * the server the same connections (requests per connection, connections left open), give the clients
 * the same statuses and write the same error-log lines.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  freePorts,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** What the server saw of one connection. */
interface SeenConnection {
  requests: number;
  open: boolean;
}

/**
 * Answers `200 c<connection> r<request>` with Content-Length, head and body in one write. `/hold`
 * answers once `held` requests wait; `/close-on-reuse` closes a connection that carried a request
 * before, without an answer (a server ending an idle connection as the next request arrives).
 */
class RecordingUpstream {
  readonly connections: SeenConnection[] = [];
  readonly server: Server;
  port = 0;
  heldTarget = 0;
  #held: (() => void)[] = [];

  constructor() {
    this.server = createServer((socket) => this.#serve(socket));
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.port = typeof address === 'object' && address ? address.port : 0;
  }

  reset(): void {
    for (const seen of this.connections) assert.equal(seen.open, false, 'a connection of the last run open');
    this.connections.length = 0;
  }

  get open(): number {
    return this.connections.filter((c) => c.open).length;
  }

  /** Requests carried by each connection, in the order they were made. */
  get requestsPerConnection(): number[] {
    return this.connections.map((c) => c.requests);
  }

  #serve(socket: Socket): void {
    const seen: SeenConnection = { requests: 0, open: true };
    const id = this.connections.push(seen);
    socket.on('error', () => {});
    socket.on('close', () => {
      seen.open = false;
    });
    let buffered = '';
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (let end = buffered.indexOf('\r\n\r\n'); end !== -1; end = buffered.indexOf('\r\n\r\n')) {
        const path = buffered.slice(0, end).split(' ')[1] ?? '';
        buffered = buffered.slice(end + 4);
        if (path === '/close-on-reuse' && seen.requests > 0) {
          socket.end();
          return;
        }
        seen.requests++;
        const body = `c${id} r${seen.requests}`;
        const answer = () => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
        if (path === '/hold') this.#hold(answer);
        else answer();
      }
    });
  }

  #hold(answer: () => void): void {
    this.#held.push(answer);
    if (this.#held.length < this.heldTarget) return;
    for (const release of this.#held.splice(0)) release();
  }
}

/** One server per group, so each group's connections are counted apart. */
interface Upstreams {
  /** `keepalive 2; keepalive_requests 3;` */
  readonly limited: RecordingUpstream;
  /** `keepalive 2;` */
  readonly capped: RecordingUpstream;
  /** `keepalive 4; keepalive_timeout 1s;` */
  readonly brief: RecordingUpstream;
}

function body(listen: number, u: Upstreams): string {
  return `
    upstream limited {
        server 127.0.0.1:${u.limited.port};
        keepalive 2;
        keepalive_requests 3;
    }
    upstream capped {
        server 127.0.0.1:${u.capped.port};
        keepalive 2;
    }
    upstream brief {
        server 127.0.0.1:${u.brief.port};
        keepalive 4;
        keepalive_timeout 1s;
    }
    server {
        listen 127.0.0.1:${listen};
        server_name cafe.example.com;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        location /seq { proxy_pass http://limited; }
        location / { proxy_pass http://capped; }
        location /brief { proxy_pass http://brief; }
    }
`;
}

/** One GET on its own client connection; resolves with the status line. */
function get(port: number, path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(text.split('\r\n')[0] ?? ''));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: cafe.example.com\r\nConnection: close\r\n\r\n`);
  });
}

/** What one proxy did in each scene. */
interface Run {
  /** Seven GETs one after another. */
  readonly sequential: number[];
  /** Five held at once, then released: how many stayed open. */
  readonly keptAfterBurst: number;
  /** Two GETs after the burst: new connections they made. */
  readonly newAfterBurst: number;
  /** GET /close-on-reuse: status, then the connections the server saw. */
  readonly closedOnReuse: { status: string; requests: number[] };
  /** keepalive_timeout 1s: open 300 ms after the answer, closed in the end. */
  readonly openAfterAnswer: number;
  readonly statuses: string[];
}

async function play(port: number, u: Upstreams): Promise<Run> {
  const statuses: string[] = [];
  for (let i = 0; i < 7; i++) statuses.push(await get(port, '/seq'));
  const sequential = u.limited.requestsPerConnection;
  u.capped.heldTarget = 5;
  statuses.push(...(await Promise.all(Array.from({ length: 5 }, () => get(port, '/hold')))));
  await waitFor(() => u.capped.open === 2, { message: 'two idle connections kept', timeoutMs: 5_000 });
  const keptAfterBurst = u.capped.open;
  const before = u.capped.connections.length;
  for (let i = 0; i < 2; i++) statuses.push(await get(port, '/again'));
  const newAfterBurst = u.capped.connections.length - before;
  const status = await get(port, '/close-on-reuse');
  const closedOnReuse = {
    status,
    requests: u.capped.connections.slice(before).map((c) => c.requests),
  };
  statuses.push(await get(port, '/brief'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const briefConnection = u.brief.connections.at(-1)!;
  const openAfterAnswer = briefConnection.open ? 1 : 0;
  await waitFor(() => !briefConnection.open, { message: 'keepalive_timeout 1s', timeoutMs: 5_000 });
  return { sequential, keptAfterBurst, newAfterBurst, closedOnReuse, openAfterAnswer, statuses };
}

/** Error-log lines about requests, with what legitimately differs masked. */
function requestLines(errorLog: string): string[] {
  return errorLog
    .split('\n')
    .filter((line) => line.includes(', request: "'))
    .map((line) =>
      line
        .replace(/^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2} /, 'DATE ')
        .replace(/\] \d+#\d+: \*\d+ /, '] PID: *N '),
    );
}

describe('replica: upstream keepalive as nginx keeps it', () => {
  const dir = new TempDir();
  const u: Upstreams = {
    limited: new RecordingUpstream(),
    capped: new RecordingUpstream(),
    brief: new RecordingUpstream(),
  };
  const all = Object.values(u);
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let nginxRun: Run;
  let replicaRun: Run;

  before(async () => {
    for (const upstream of all) await upstream.listen();
    const [listen] = await freePorts(1);
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(listen!, u)}\n}\n`);
    nginx = await startNginx({ http: (port) => body(port, u) });
    nginxRun = await play(nginx.port, u);
    await nginx.stop();
    await waitFor(() => all.every((upstream) => upstream.open === 0), { message: 'nginx gone' });
    for (const upstream of all) upstream.reset();
    replica = await startReplica(
      config,
      ['--error-log', dir.file('error.log'), '--error-log-level', 'info'],
      {
        status: false,
      },
    );
    replicaRun = await play(replica.ports[String(listen)]!, u);
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    for (const upstream of all) upstream.server.close();
    dir.remove();
  });

  test('keepalive_requests 3: seven requests in a row take three connections', () => {
    assert.deepEqual(nginxRun.sequential, [3, 3, 1]);
    assert.deepEqual(replicaRun.sequential, nginxRun.sequential);
  });

  test('keepalive 2: after a burst of five, two idle connections stay and are reused', () => {
    assert.equal(nginxRun.keptAfterBurst, 2);
    assert.equal(replicaRun.keptAfterBurst, 2);
    assert.equal(nginxRun.newAfterBurst, 0);
    assert.equal(replicaRun.newAfterBurst, 0);
  });

  test('kept connections the server closes as the request arrives: tried again, then on a new one', () => {
    // the two idle connections are closed by the server in turn, then a new one answers
    assert.deepEqual(nginxRun.closedOnReuse, { status: 'HTTP/1.1 200 OK', requests: [1] });
    assert.deepEqual(replicaRun.closedOnReuse, nginxRun.closedOnReuse);
  });

  test('keepalive_timeout 1s: an idle connection is kept, then closed', () => {
    assert.equal(nginxRun.openAfterAnswer, 1);
    assert.equal(replicaRun.openAfterAnswer, 1);
  });

  test('the same statuses', () => {
    assert.equal(nginxRun.statuses.length, 15);
    assert.ok(nginxRun.statuses.every((s) => s === 'HTTP/1.1 200 OK'));
    assert.deepEqual(replicaRun.statuses, nginxRun.statuses);
  });

  test('the same error-log lines', async () => {
    const line = `DATE [error] PID: *N upstream prematurely closed connection while reading response header from upstream, client: 127.0.0.1, server: cafe.example.com, request: "GET /close-on-reuse HTTP/1.1", upstream: "http://127.0.0.1:${u.capped.port}/close-on-reuse", host: "cafe.example.com"`;
    assert.deepEqual(requestLines(nginx.errorLog()), [line, line]);
    await waitFor(() => requestLines(dir.read('error.log')).length >= 2, {
      message: 'the replica error log',
    });
    assert.deepEqual(requestLines(dir.read('error.log')), [line, line]);
  });
});
