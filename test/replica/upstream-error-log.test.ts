/**
 * A replica process logs upstream failures as nginx does. Real nginx and the replica serve the same
 * configuration in front of the same broken upstreams (a closed port, a group of closed ports, one that
 * never answers, one that hangs up or resets, one that stalls or cuts its body, one whose accept queue
 * is full, one that never reads the request; groups whose first server resets or never answers and
 * whose second one does, where a GET goes on to the second and a POST does not), get the same
 * requests, and must answer the same statuses and write the same error-log lines: same level, same
 * words, same `upstream:` field; only the timestamp, the process id and the connection number differ.
 */
import assert from 'node:assert/strict';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type FullBacklogListener, startFullBacklogListener } from '../helpers/full-backlog-listener.ts';
import {
  freePorts,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { waitFor } from '../helpers/wait-for.ts';

interface Ports {
  readonly deadA: number;
  readonly deadB: number;
  readonly deadC: number;
  /** Answers by the path's first segment (see `misbehave`). */
  readonly upstream: number;
  /** Accepts, never reads. */
  readonly deaf: number;
  /** Accept queue full: connects hang. */
  readonly blackhole: number;
  /** Answers 200 to anything. */
  readonly ok: number;
}

/** The configuration under test (the proxy_request_buffering and body size lines are for nginx). */
function body(listen: number, p: Ports): string {
  return `
    upstream two {
        server 127.0.0.1:${p.deadA};
        server 127.0.0.1:${p.deadB};
    }
    upstream mixed {
        server 127.0.0.1:${p.deadC};
        server 127.0.0.1:${p.upstream};
    }
${['resetget', 'resetpost', 'silentget', 'silentpost']
  .map((name) => `    upstream ${name} { server 127.0.0.1:${p.upstream}; server 127.0.0.1:${p.ok}; }\n`)
  .join('')}    server {
        listen 127.0.0.1:${listen};
        server_name cafe.example.com;
        proxy_read_timeout 300ms;
        location /refused { proxy_pass http://127.0.0.1:${p.deadA}; }
        location /rewrite/ { proxy_pass http://127.0.0.1:${p.deadA}/v2/; }
        location /two { proxy_pass http://two; }
        location /mixed { proxy_pass http://mixed; }
        location /reset-next/get { proxy_pass http://resetget; }
        location /reset-next/post { proxy_pass http://resetpost; }
        location /silent-next/get { proxy_pass http://silentget; }
        location /silent-next/post { proxy_pass http://silentpost; }
        location / { proxy_pass http://127.0.0.1:${p.upstream}; }
        location /blackhole { proxy_connect_timeout 300ms; proxy_pass http://127.0.0.1:${p.blackhole}; }
        location /deaf {
            proxy_send_timeout 300ms;
            proxy_request_buffering off;
            client_max_body_size 0;
            proxy_pass http://127.0.0.1:${p.deaf};
        }
    }
`;
}

/** A raw HTTP upstream: `/hangup` closes, `/reset` resets, `/stallbody` and `/cutbody` send part of a
 * body then stall or close, `/mixed` answers 200, anything else is never answered. */
function misbehave(socket: Socket): void {
  let head = '';
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    head += chunk.toString('latin1');
    if (!head.includes('\r\n\r\n')) return;
    const path = head.split(' ')[1] ?? '';
    const partial = 'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npart';
    if (path.startsWith('/hangup')) socket.end();
    else if (path.startsWith('/reset')) socket.resetAndDestroy();
    else if (path.startsWith('/stallbody')) socket.write(partial);
    else if (path.startsWith('/cutbody')) socket.end(partial);
    else if (path.startsWith('/mixed'))
      socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
  });
}

/** A raw HTTP upstream that answers 200 once a request head arrived. */
function answerOk(socket: Socket): void {
  let head = '';
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    if (head.includes('\r\n\r\n')) return;
    head += chunk.toString('latin1');
    if (head.includes('\r\n\r\n')) {
      socket.end('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok');
    }
  });
}

const BIG_BODY = Buffer.alloc(64 * 1024 * 1024, 'a');

interface Sent {
  readonly method: 'GET' | 'POST';
  readonly uri: string;
  readonly body?: Buffer;
}

const REQUESTS: readonly Sent[] = [
  { method: 'GET', uri: '/refused/a?x=1' },
  { method: 'GET', uri: '/rewrite/z?q' },
  { method: 'GET', uri: '/two/1' },
  { method: 'GET', uri: '/two/2' },
  { method: 'GET', uri: '/mixed/1' },
  { method: 'GET', uri: '/silent' },
  { method: 'GET', uri: '/hangup' },
  { method: 'GET', uri: '/reset' },
  { method: 'GET', uri: '/stallbody' },
  { method: 'GET', uri: '/cutbody' },
  { method: 'GET', uri: '/blackhole/b' },
  // Larger than every buffer between the proxy and a server that never reads.
  { method: 'POST', uri: '/deaf', body: BIG_BODY },
  // Groups of two (each its own, so each starts with its first server): the first resets or is silent.
  { method: 'GET', uri: '/reset-next/get' },
  // Bodiless, so what holds the POST back is its method (a streamed body would too: see the docs).
  { method: 'POST', uri: '/reset-next/post' },
  { method: 'GET', uri: '/silent-next/get' },
  { method: 'POST', uri: '/silent-next/post' },
];

/** Sends the requests one after another, each on its own connection; resolves with the status lines. */
async function play(port: number): Promise<string[]> {
  const statuses: string[] = [];
  for (const r of REQUESTS) {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    // The proxy answers a deaf upstream's 504 before it read the whole body, then closes.
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const length = r.body === undefined ? '' : `Content-Length: ${r.body.length}\r\n`;
    socket.write(
      `${r.method} ${r.uri} HTTP/1.1\r\nHost: cafe.example.com\r\n${length}Connection: close\r\n\r\n`,
    );
    if (r.body !== undefined) socket.write(r.body);
    await closed;
    statuses.push(Buffer.concat(chunks).toString('latin1').split('\r\n')[0]!);
  }
  return statuses;
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

describe('replica: upstream failures in the error log, as nginx writes them', () => {
  const dir = new TempDir();
  const servers: Server[] = [];
  let blackhole: FullBacklogListener;
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let ports: Ports;
  let nginxStatuses: string[];
  let replicaStatuses: string[];

  async function serve(onConnection: (socket: Socket) => void): Promise<number> {
    const server = createServer(onConnection);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  before(async () => {
    blackhole = await startFullBacklogListener();
    const deaf = await serve((socket) => {
      socket.pause();
      socket.on('error', () => {});
    });
    const upstream = await serve(misbehave);
    const ok = await serve(answerOk);
    const [deadA, deadB, deadC, listen] = await freePorts(4);
    ports = { deadA: deadA!, deadB: deadB!, deadC: deadC!, upstream, deaf, blackhole: blackhole.port, ok };
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(listen!, ports)}\n}\n`);
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => body(port, ports) }),
      startReplica(config, ['--error-log', dir.file('error.log'), '--error-log-level', 'info'], {
        status: false,
      }),
    ]);
    nginxStatuses = await play(nginx.port);
    replicaStatuses = await play(replica.ports[String(listen)]!);
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    for (const server of servers) server.close();
    await blackhole?.close();
    dir.remove();
  });

  test('the clients saw the same statuses from both', () => {
    assert.deepEqual(replicaStatuses, nginxStatuses);
    assert.deepEqual(
      replicaStatuses.map((line) => line.slice(0, 12)),
      [502, 502, 502, 502, 200, 504, 502, 502, 200, 200, 504, 504, 200, 502, 200, 504].map(
        (code) => `HTTP/1.1 ${code}`,
      ),
    );
  });

  test('the same error-log lines, line for line', async () => {
    const expected = requestLines(nginx.errorLog());
    const context = (method: string, uri: string, upstream: string) =>
      `client: 127.0.0.1, server: cafe.example.com, request: "${method} ${uri} HTTP/1.1", upstream: "${upstream}", host: "cafe.example.com"`;
    const line = (level: string, text: string, uri: string, upstream: string, method = 'GET') =>
      `DATE [${level}] PID: *N ${text}, ${context(method, uri, upstream)}`;
    const at = (port: number, uri: string) => `http://127.0.0.1:${port}${uri}`;
    const refused = 'connect() failed (111: Connection refused) while connecting to upstream';
    const disabled = 'upstream server temporarily disabled while connecting to upstream';
    const timedOut = 'upstream timed out (110: Connection timed out)';
    const reset = 'recv() failed (104: Connection reset by peer)';
    const disabledReading =
      'upstream server temporarily disabled while reading response header from upstream';
    const p = ports;
    assert.deepEqual(expected, [
      line('error', refused, '/refused/a?x=1', at(p.deadA, '/refused/a?x=1')),
      line('error', refused, '/rewrite/z?q', at(p.deadA, '/v2/z?q')),
      line('error', refused, '/two/1', at(p.deadA, '/two/1')),
      line('warn', disabled, '/two/1', at(p.deadA, '/two/1')),
      line('error', refused, '/two/1', at(p.deadB, '/two/1')),
      line('warn', disabled, '/two/1', at(p.deadB, '/two/1')),
      line('error', 'no live upstreams while connecting to upstream', '/two/2', 'http://two/two/2'),
      line('error', refused, '/mixed/1', at(p.deadC, '/mixed/1')),
      line('warn', disabled, '/mixed/1', at(p.deadC, '/mixed/1')),
      line(
        'error',
        `${timedOut} while reading response header from upstream`,
        '/silent',
        at(p.upstream, '/silent'),
      ),
      line(
        'error',
        'upstream prematurely closed connection while reading response header from upstream',
        '/hangup',
        at(p.upstream, '/hangup'),
      ),
      line(
        'error',
        `${reset} while reading response header from upstream`,
        '/reset',
        at(p.upstream, '/reset'),
      ),
      line('error', `${timedOut} while reading upstream`, '/stallbody', at(p.upstream, '/stallbody')),
      line(
        'error',
        'upstream prematurely closed connection while reading upstream',
        '/cutbody',
        at(p.upstream, '/cutbody'),
      ),
      line(
        'error',
        `${timedOut} while connecting to upstream`,
        '/blackhole/b',
        at(p.blackhole, '/blackhole/b'),
      ),
      line('error', `${timedOut} while sending request to upstream`, '/deaf', at(p.deaf, '/deaf'), 'POST'),
      ...['GET', 'POST'].flatMap((method) => {
        const uri = `/reset-next/${method.toLowerCase()}`;
        return [
          line(
            'error',
            `${reset} while reading response header from upstream`,
            uri,
            at(p.upstream, uri),
            method,
          ),
          line('warn', disabledReading, uri, at(p.upstream, uri), method),
        ];
      }),
      ...['GET', 'POST'].flatMap((method) => {
        const uri = `/silent-next/${method.toLowerCase()}`;
        return [
          line('warn', disabledReading, uri, at(p.upstream, uri), method),
          line(
            'error',
            `${timedOut} while reading response header from upstream`,
            uri,
            at(p.upstream, uri),
            method,
          ),
        ];
      }),
    ]);
    await waitFor(() => requestLines(dir.read('error.log')).length >= expected.length, {
      message: 'the replica error log',
    });
    assert.deepEqual(requestLines(dir.read('error.log')), expected);
  });
});
