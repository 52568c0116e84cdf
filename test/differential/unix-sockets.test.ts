/**
 * UNIX-domain sockets against real nginx: `listen unix:` (its clients `unix:`, its address
 * `unix:/path`, no ports; server_name chosen among the servers on the socket), `allow`/`deny unix:`
 * for clients of the socket, directly and through `proxy_pass http://unix:/path:/uri` (as nginx-tests'
 * access.t), an `upstream` with a `server unix:` (the Host the server gets, `$upstream_addr`), and a
 * socket that is not there (502, the error-log line). nginx and the replica each listen on sockets in
 * their own directory; answers are compared with that directory written as DIR.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'undici';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { waitFor } from '../helpers/wait-for.ts';

const VARIABLES =
  '$remote_addr|$remote_port|$server_addr|$server_port|$binary_remote_addr|$realip_remote_addr|$server_name';

const http = (port: number, dir: string) => `
    limit_req_zone $binary_remote_addr zone=by_addr:1m rate=1r/m;

    upstream backend {
        server unix:${dir}/backend.sock weight=2;
    }

    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        location / { return 200 "tcp\\n"; }
        location /unix/ { proxy_pass http://unix:${dir}/inner.sock:/; }
        location /no_uri/ {
            proxy_pass http://unix:${dir}/backend.sock;
            add_header X-Proxy "$proxy_host|$proxy_port|$upstream_addr|$upstream_status";
        }
        location /upstream/ {
            proxy_pass http://backend/;
            add_header X-Proxy "$proxy_host|$proxy_port|$upstream_addr|$upstream_status";
        }
        location /dynamic/ {
            set $socket "unix:${dir}/backend.sock";
            proxy_pass http://$socket:/fixed;
            add_header X-Proxy "$proxy_host|$proxy_port|$upstream_addr|$upstream_status";
        }
        location /missing/ {
            proxy_pass http://unix:${dir}/missing.sock:/;
            add_header X-Proxy "$proxy_host|$proxy_port|$upstream_addr|$upstream_status" always;
        }
    }

    server {
        listen unix:${dir}/backend.sock;
        location / { return 200 "backend host=$http_host uri=$request_uri ${VARIABLES}\\n"; }
    }

    server {
        listen unix:${dir}/inner.sock;
        server_name localhost;
        # no return: it would answer at the rewrite phase, before access
        location /allow_all { allow all; }
        location /allow_unix { allow unix:; }
        location /deny_all { deny all; }
        location /deny_unix { deny unix:; }
        location /deny_ip { deny 127.0.0.1; }
        location /allow_ip_deny_all { allow 127.0.0.1; deny all; }
        location /vars { return 200 "${VARIABLES}\\n"; }
        location /limited { limit_req zone=by_addr; limit_req_status 429; }
    }

    server {
        listen unix:${dir}/inner.sock;
        server_name other;
        location / { return 200 "other ${VARIABLES}\\n"; }
    }

    server {
        listen unix:${dir}/second.sock default_server;
        location / { return 200 "second $server_addr\\n"; }
    }
`;

describe('UNIX-domain sockets: the replica answers as nginx', () => {
  let both: SideBySide;
  const agents: Agent[] = [];

  before(async () => {
    both = await startSideBySide(http);
  });

  after(async () => {
    await Promise.all(agents.map((agent) => agent.close()));
    await both?.stop();
  });

  /** A request on `socket` of the server whose sockets are in `dir`, its answer with `dir` as DIR. */
  async function viaSocket(dir: string, socket: string, path: string, host = 'localhost'): Promise<string> {
    const dispatcher = new Agent({ connect: { socketPath: join(dir, socket) } });
    agents.push(dispatcher);
    const res = await request(`http://${host}${path}`, { dispatcher });
    const body = await res.body.text();
    const text = body.includes('<html>')
      ? `(page ${/<title>([^<]*)</.exec(body)?.[1]})`
      : JSON.stringify(body.replaceAll(dir, 'DIR'));
    return `${res.statusCode} ${text}`;
  }

  /** A request over TCP to the front server of `port`, its answer and X-Proxy with `dir` as DIR. */
  async function viaTcp(port: number, dir: string, path: string): Promise<string> {
    const res = await request(`http://127.0.0.1:${port}${path}`);
    const body = await res.body.text();
    const text = body.includes('<html>')
      ? `(page ${/<title>([^<]*)</.exec(body)?.[1]})`
      : JSON.stringify(body);
    const proxy = res.headers['x-proxy'] === undefined ? '' : ` x-proxy:${String(res.headers['x-proxy'])}`;
    return `${res.statusCode}${proxy} ${text}`.replaceAll(dir, 'DIR');
  }

  async function sameViaTcp(path: string): Promise<string> {
    const fromNginx = await viaTcp(both.nginxPort, both.nginxDir, path);
    assert.equal(await viaTcp(both.replicaPort, both.replicaDir, path), fromNginx, path);
    return fromNginx;
  }

  async function same(socket: string, path: string, host?: string): Promise<string> {
    const fromNginx = await viaSocket(both.nginxDir, socket, path, host);
    assert.equal(await viaSocket(both.replicaDir, socket, path, host), fromNginx, `${socket} ${path}`);
    return fromNginx;
  }

  test('a client of a unix: listener: $remote_addr unix:, $server_addr unix:/path, the ports empty', async () => {
    assert.equal(
      await same('inner.sock', '/vars'),
      '200 "unix:||unix:DIR/inner.sock||unix:|unix:|localhost\\n"',
    );
  });

  test('server_name picks among the servers on the socket; another socket has its own', async () => {
    assert.match(await same('inner.sock', '/vars', 'other'), /^200 "other unix:/);
    assert.equal(await same('second.sock', '/', 'other'), '200 "second unix:DIR/second.sock\\n"');
  });

  test('allow/deny for clients of the socket: unix: and all match them, an address does not', async () => {
    const answers: string[] = [];
    for (const path of [
      '/allow_all',
      '/allow_unix',
      '/deny_all',
      '/deny_unix',
      '/deny_ip',
      '/allow_ip_deny_all',
    ])
      answers.push(`${path} ${await same('inner.sock', path)}`);
    assert.deepEqual(answers, [
      '/allow_all 404 (page 404 Not Found)',
      '/allow_unix 404 (page 404 Not Found)',
      '/deny_all 403 (page 403 Forbidden)',
      '/deny_unix 403 (page 403 Forbidden)',
      '/deny_ip 404 (page 404 Not Found)',
      '/allow_ip_deny_all 403 (page 403 Forbidden)',
    ]);
  });

  test('proxy_pass http://unix:/path:/uri to a unix: listener: allow/deny unix: there (nginx-tests access.t)', async () => {
    const answers: string[] = [];
    for (const path of ['/allow_all', '/allow_unix', '/deny_all', '/deny_unix'])
      answers.push(`${path} ${await sameViaTcp(`/unix${path}`)}`);
    assert.deepEqual(answers, [
      '/allow_all 404 (page 404 Not Found)',
      '/allow_unix 404 (page 404 Not Found)',
      '/deny_all 403 (page 403 Forbidden)',
      '/deny_unix 403 (page 403 Forbidden)',
    ]);
  });

  test('Host and $proxy_host are localhost for a unix: URL, the group name for an upstream; $upstream_addr unix:/path', async () => {
    assert.equal(
      await sameViaTcp('/no_uri/a?b=1'),
      '200 x-proxy:localhost||unix:DIR/backend.sock|200 "backend host=localhost uri=/no_uri/a?b=1 unix:||unix:DIR/backend.sock||unix:|unix:|\\n"',
    );
    assert.equal(
      await sameViaTcp('/upstream/c'),
      '200 x-proxy:backend|80|unix:DIR/backend.sock|200 "backend host=backend uri=/c unix:||unix:DIR/backend.sock||unix:|unix:|\\n"',
    );
  });

  test('proxy_pass with variables evaluated to a unix: URL: its URI part sent as is', async () => {
    assert.equal(
      await sameViaTcp('/dynamic/a'),
      '200 x-proxy:localhost||unix:DIR/backend.sock|200 "backend host=localhost uri=/fixed unix:||unix:DIR/backend.sock||unix:|unix:|\\n"',
    );
  });

  test("a socket that is not there: 502 and nginx's [crit] connect() line naming the path", async () => {
    assert.equal(
      await sameViaTcp('/missing/d'),
      '502 x-proxy:localhost||unix:DIR/missing.sock|502 (page 502 Bad Gateway)',
    );
    const line = (log: string, dir: string): string =>
      (/\[crit\] \d+#\d+: \*\d+ (connect\(\) .*)/.exec(log)?.[1] ?? '(none)')
        .replaceAll(dir, 'DIR')
        .replace(/:\d+"$/, ':PORT"');
    const expected =
      'connect() to unix:DIR/missing.sock failed (2: No such file or directory) while connecting to upstream, client: 127.0.0.1, server: localhost, request: "GET /missing/d HTTP/1.1", upstream: "http://unix:DIR/missing.sock:/d", host: "127.0.0.1:PORT"';
    await waitFor(() => line(both.replica.process.stderr, both.replicaDir) !== '(none)', {
      message: "the replica's [crit] line",
    });
    assert.equal(line(both.nginx.errorLog(), both.nginxDir), expected);
    assert.equal(line(both.replica.process.stderr, both.replicaDir), expected);
  });

  test('limit_req keyed by $binary_remote_addr: all clients of the socket are one key, unix:', async () => {
    const answers: string[] = [];
    for (let i = 0; i < 3; i++) answers.push(await same('inner.sock', '/limited'));
    assert.deepEqual(answers, [
      '404 (page 404 Not Found)',
      '429 (page 429 Too Many Requests)',
      '429 (page 429 Too Many Requests)',
    ]);
  });
});
