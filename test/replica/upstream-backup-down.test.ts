/**
 * `server … backup` and `server … down` in an `upstream` group, against real nginx: the same
 * configuration in front of the same servers (closed ports, and two that answer with their own
 * name), the same requests one after another; the answers (which server gave them) and the error-log
 * lines must be nginx's. A down server is never tried; a backup is tried only when no primary can be,
 * and a request that reached the backups stays on them.
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

interface Ports {
  readonly dead: readonly number[];
  readonly one: number;
  readonly two: number;
}

function body(listen: number, p: Ports): string {
  const [d0, d1, d2, d3, d4] = p.dead;
  return `
    upstream failover { server 127.0.0.1:${d0}; server 127.0.0.1:${p.one} backup; server 127.0.0.1:${p.two} backup; }
    upstream marked { server 127.0.0.1:${d1} down; server 127.0.0.1:${p.one}; server 127.0.0.1:${p.two} weight=2; }
    upstream nolive { server 127.0.0.1:${d2} down; server 127.0.0.1:${p.one} backup down; }
    upstream backupdead { server 127.0.0.1:${d3}; server 127.0.0.1:${d4} backup; }
    upstream primaryup { server 127.0.0.1:${p.two}; server 127.0.0.1:${p.one} backup; }
    server {
        listen 127.0.0.1:${listen};
        server_name cafe.example.com;
        location /failover { proxy_pass http://failover; }
        location /marked { proxy_pass http://marked; }
        location /nolive { proxy_pass http://nolive; }
        location /backupdead { proxy_pass http://backupdead; }
        location /primaryup { proxy_pass http://primaryup; }
    }
`;
}

const REQUESTS = [
  '/failover/1',
  '/failover/2',
  '/failover/3',
  '/marked/1',
  '/marked/2',
  '/marked/3',
  '/nolive/1',
  '/backupdead/1',
  '/backupdead/2',
  '/primaryup/1',
  '/primaryup/2',
];

/** An upstream answering 200 with its `name`. */
function answering(name: string): (socket: Socket) => void {
  return (socket) => {
    let head = '';
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      if (head.includes('\r\n\r\n')) return;
      head += chunk.toString('latin1');
      if (head.includes('\r\n\r\n'))
        socket.end(`HTTP/1.1 200 OK\r\nContent-Length: ${name.length}\r\nConnection: close\r\n\r\n${name}`);
    });
  };
}

/** Each request on its own connection, in turn: the status code and body of each. */
async function play(port: number): Promise<string[]> {
  const answers: string[] = [];
  for (const uri of REQUESTS) {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.write(`GET ${uri} HTTP/1.1\r\nHost: cafe.example.com\r\nConnection: close\r\n\r\n`);
    await closed;
    const text = Buffer.concat(chunks).toString('latin1');
    const status = text.slice(9, 12);
    answers.push(`${uri} ${status}${status === '200' ? ` ${text.slice(text.indexOf('\r\n\r\n') + 4)}` : ''}`);
  }
  return answers;
}

/** Error-log lines about requests, the timestamp, process and connection numbers masked. */
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

describe('replica: backup and down servers, as nginx picks them', () => {
  const dir = new TempDir();
  const servers: Server[] = [];
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let ports: Ports;
  let nginxAnswers: string[];
  let replicaAnswers: string[];

  async function serve(onConnection: (socket: Socket) => void): Promise<number> {
    const server = createServer(onConnection);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  before(async () => {
    const one = await serve(answering('one'));
    const two = await serve(answering('two'));
    const [listen, ...dead] = await freePorts(6);
    ports = { dead, one, two };
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(listen!, ports)}\n}\n`);
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => body(port, ports) }),
      startReplica(config, ['--error-log', dir.file('error.log'), '--error-log-level', 'info'], {
        status: false,
      }),
    ]);
    nginxAnswers = await play(nginx.port);
    replicaAnswers = await play(replica.ports[String(listen)]!);
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    for (const server of servers) server.close();
    dir.remove();
  });

  test("the answers come from nginx's servers", () => {
    assert.deepEqual(nginxAnswers, [
      // the primary refuses: the backups take turns, the primary left out meanwhile
      '/failover/1 200 one',
      '/failover/2 200 two',
      '/failover/3 200 one',
      // the down server is never tried; weights 1 and 2 among the others
      '/marked/1 200 two',
      '/marked/2 200 one',
      '/marked/3 200 two',
      '/nolive/1 502',
      '/backupdead/1 502',
      '/backupdead/2 502',
      // a primary that answers leaves the backup alone
      '/primaryup/1 200 two',
      '/primaryup/2 200 two',
    ]);
    assert.deepEqual(replicaAnswers, nginxAnswers);
  });

  test('the same error-log lines, line for line', async () => {
    const p = ports;
    const context = (uri: string, upstream: string) =>
      `client: 127.0.0.1, server: cafe.example.com, request: "GET ${uri} HTTP/1.1", upstream: "${upstream}", host: "cafe.example.com"`;
    const line = (level: string, text: string, uri: string, upstream: string) =>
      `DATE [${level}] PID: *N ${text}, ${context(uri, upstream)}`;
    const refused = 'connect() failed (111: Connection refused) while connecting to upstream';
    const disabled = 'upstream server temporarily disabled while connecting to upstream';
    const noLive = 'no live upstreams while connecting to upstream';
    const at = (port: number, uri: string) => `http://127.0.0.1:${port}${uri}`;
    const expected = requestLines(nginx.errorLog());
    assert.deepEqual(expected, [
      line('error', refused, '/failover/1', at(p.dead[0]!, '/failover/1')),
      line('warn', disabled, '/failover/1', at(p.dead[0]!, '/failover/1')),
      line('error', noLive, '/nolive/1', 'http://nolive/nolive/1'),
      line('error', refused, '/backupdead/1', at(p.dead[3]!, '/backupdead/1')),
      line('warn', disabled, '/backupdead/1', at(p.dead[3]!, '/backupdead/1')),
      line('error', refused, '/backupdead/1', at(p.dead[4]!, '/backupdead/1')),
      line('warn', disabled, '/backupdead/1', at(p.dead[4]!, '/backupdead/1')),
      line('error', noLive, '/backupdead/2', 'http://backupdead/backupdead/2'),
    ]);
    await waitFor(() => requestLines(dir.read('error.log')).length >= expected.length, {
      message: 'the replica error log',
    });
    assert.deepEqual(requestLines(dir.read('error.log')), expected);
  });
});
