/**
 * A replica process writes its logs as nginx does: error-log lines for limited and delayed requests
 * (and for a client that left while delayed), and the access log in nginx's `combined` format. Real
 * nginx serves the same configuration and the same requests; the lines must be the same, apart from the
 * timestamp, the process id, the connection number, the excess (timing) and the size of nginx's own
 * error page (which names nginx, not limitswitch).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { startUpstream, type TestUpstream } from './http/harness.ts';

/** The configuration under test; `extra` goes into the server block. */
function body(listen: number, upstream: number, extra: string): string {
  return `
    limit_req_zone $binary_remote_addr zone=lim:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=shut:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=slow:1m rate=2r/s;
    limit_req_zone $binary_remote_addr zone=gone:1m rate=1r/m;
    server {
        listen 127.0.0.1:${listen};
        server_name localhost;
${extra}
        location /limited { limit_req zone=lim; proxy_pass http://127.0.0.1:${upstream}; }
        location /shut { limit_req zone=shut; limit_req_status 444; proxy_pass http://127.0.0.1:${upstream}; }
        location /slow {
            limit_req zone=slow burst=5;
            limit_req_log_level warn;
            proxy_pass http://127.0.0.1:${upstream};
        }
        location /gone { limit_req zone=gone burst=5; proxy_pass http://127.0.0.1:${upstream}; }
        location = /hello { return 200 "hello\\n"; }
    }
`;
}

interface Sent {
  readonly uri: string;
  readonly addr: string;
  /** Close the connection once the request is being delayed, instead of reading the answer. */
  readonly leave?: boolean;
}

const REQUESTS: readonly Sent[] = [
  { uri: '/limited/a', addr: '10.0.0.1' },
  { uri: '/limited/b', addr: '10.0.0.1' },
  { uri: '/shut', addr: '10.0.0.2' },
  { uri: '/shut', addr: '10.0.0.2' },
  { uri: '/slow/1', addr: '10.0.0.3' },
  { uri: '/slow/2', addr: '10.0.0.3' },
  { uri: '/gone/1', addr: '10.0.0.4' },
  { uri: '/gone/2', addr: '10.0.0.4', leave: true },
  { uri: '/hello?x=1', addr: '10.0.0.5' },
];

/** Sends the requests one after another, each on its own connection; resolves with the raw answers. */
async function play(port: number, logged: () => string): Promise<string[]> {
  const answers: string[] = [];
  for (const r of REQUESTS) {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    socket.write(
      `GET ${r.uri} HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: ${r.addr}\r\n` +
        'User-Agent: log-test/1.0\r\nReferer: http://example.com/from\r\nConnection: close\r\n\r\n',
    );
    if (r.leave) {
      // Gone once the delay is logged; the server notices the EOF while it holds the request.
      await waitFor(() => logged().includes(`GET ${r.uri} HTTP/1.1`), { message: `${r.uri} delayed` });
      socket.end();
    }
    await closed;
    answers.push(Buffer.concat(chunks).toString('latin1'));
  }
  return answers;
}

/** Error-log lines about requests, with what legitimately differs masked. */
function requestLines(errorLog: string): string[] {
  return errorLog
    .split('\n')
    .filter((line) => line.includes(', request: "'))
    .filter((line) => !line.includes('keepalive'))
    .map((line) =>
      line
        .replace(/^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2} /, 'DATE ')
        .replace(/\] \d+#\d+: \*\d+ /, '] PID: *N ')
        // The excess depends on the milliseconds between requests (the conformance suite pins those).
        .replace(/(excess: )\d+\.\d{3}/, '$1E')
        // nginx adds the upstream for a request it was proxying when the client left.
        .replace(/, upstream: "[^"]*"/, ''),
    );
}

/** Access-log lines, time masked; the size of an error page masked too (nginx's names nginx). */
function accessLines(accessLog: string): string[] {
  return accessLog
    .split('\n')
    .filter((line) => line !== '')
    .map((line) =>
      line
        .replace(/\[\d{2}\/\w{3}\/\d{4}:\d{2}:\d{2}:\d{2} [+-]\d{4}\]/, '[TIME]')
        .replace(/" (503) \d+ "/, '" $1 PAGE "'),
    );
}

describe('replica: nginx-format error and access logs', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let nginxAnswers: string[];
  let replicaAnswers: string[];

  before(async () => {
    upstream = await startUpstream((_req, res) => {
      // An explicit length: nginx talks HTTP/1.0 upstream, and would re-chunk a response without one.
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '14' });
      res.end('from upstream\n');
    });
    const listen = await freePort();
    const replicaConfig = dir.write(
      'nginx.conf',
      `events {}\nhttp {\n${body(listen, upstream.port, '        set_real_ip_from 127.0.0.1;\n        real_ip_header X-Forwarded-For;')}\n}\n`,
    );
    [nginx, replica] = await Promise.all([
      startNginx({
        http: (port) => body(port, upstream.port, '        access_log logs/combined.log combined;'),
      }),
      startReplica(replicaConfig, [
        '--error-log',
        dir.file('error.log'),
        '--error-log-level',
        'info',
        '--access-log',
        dir.file('access.log'),
      ]),
    ]);
    nginxAnswers = await play(nginx.port, () => nginx.errorLog());
    replicaAnswers = await play(replica.ports[String(listen)]!, () => dir.read('error.log'));
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    await upstream?.close();
    dir.remove();
  });

  test('the clients saw the same statuses from both', () => {
    const statuses = (answers: string[]) => answers.map((a) => a.slice(0, 12));
    assert.deepEqual(statuses(replicaAnswers), statuses(nginxAnswers));
    assert.deepEqual(statuses(replicaAnswers), [
      'HTTP/1.1 200',
      'HTTP/1.1 503',
      'HTTP/1.1 200',
      '',
      'HTTP/1.1 200',
      'HTTP/1.1 200',
      'HTTP/1.1 200',
      '',
      'HTTP/1.1 200',
    ]);
  });

  test('error-log lines: limiting, delaying (at limit_req_log_level + 1), client gone while delayed', async () => {
    const expected = requestLines(nginx.errorLog());
    const context = (addr: string, uri: string) =>
      `client: ${addr}, server: localhost, request: "GET ${uri} HTTP/1.1", host: "localhost", referrer: "http://example.com/from"`;
    assert.deepEqual(expected, [
      `DATE [error] PID: *N limiting requests, excess: E by zone "lim", ${context('10.0.0.1', '/limited/b')}`,
      `DATE [error] PID: *N limiting requests, excess: E by zone "shut", ${context('10.0.0.2', '/shut')}`,
      // limit_req_log_level warn: delays one level below, at notice.
      `DATE [notice] PID: *N delaying request, excess: E, by zone "slow", ${context('10.0.0.3', '/slow/2')}`,
      `DATE [warn] PID: *N delaying request, excess: E, by zone "gone", ${context('10.0.0.4', '/gone/2')}`,
      `DATE [info] PID: *N client prematurely closed connection, ${context('10.0.0.4', '/gone/2')}`,
    ]);
    await waitFor(() => requestLines(dir.read('error.log')).length >= expected.length, {
      message: 'the replica error log',
    });
    assert.deepEqual(requestLines(dir.read('error.log')), expected);
    // Lines about one connection share its number, as in nginx.
    const gone = dir
      .read('error.log')
      .split('\n')
      .filter((line) => line.includes('/gone/2'))
      .map((line) => /: (\*\d+) /.exec(line)?.[1]);
    assert.equal(gone.length, 2);
    assert.equal(gone[0], gone[1]);
  });

  test('access log in combined format, line for line', async () => {
    await waitFor(() => accessLines(dir.read('access.log')).length === REQUESTS.length, {
      message: 'the replica access log',
    });
    const ours = accessLines(dir.read('access.log'));
    assert.deepEqual(ours, accessLines(readFileSync(`${nginx.prefix}/logs/combined.log`, 'utf8')));
    // The masked size is the size of the page the client got.
    const page = replicaAnswers[1]!.slice(replicaAnswers[1]!.indexOf('\r\n\r\n') + 4);
    assert.match(dir.read('access.log'), new RegExp(`"GET /limited/b HTTP/1.1" 503 ${page.length} `));
  });
});
