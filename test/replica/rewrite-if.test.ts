/**
 * `if (condition) { return …; }` against real nginx: one configuration, served by nginx and by a
 * replica process, the same requests to both, the same status and body from both — for every condition
 * operator, quoted right sides with variables, server-level before location-level, the order of `if`
 * and `return` on a level, and an `if` in a limited location (what it answers is not counted).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { startUpstream, type TestUpstream } from './http/harness.ts';

const http = (port: number, upstream: number) => `
    map $http_x_pick $picked { default ""; a backend; }
    limit_req_zone $binary_remote_addr zone=one:1m rate=1r/m;
    upstream backend { server 127.0.0.1:${upstream}; }
    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        if ($http_x_server_stop) { return 418 "server level\\n"; }
        location /truthy { if ($http_x_flag) { return 200 "flag\\n"; } return 204; }
        location /eq { if ($arg_v = "on") { return 200 "on\\n"; } if ($arg_v != "off") { return 201 "not off\\n"; } return 202 "off\\n"; }
        location /vars { if ($http_x_a = "$http_x_b-tail") { return 200 "same\\n"; } return 409; }
        location /re { if ($http_user_agent ~ Bot$) { return 403 "bot\\n"; } if ($http_user_agent ~* ^curl) { return 200 "curl\\n"; } if ($request_method !~ ^(GET|HEAD)$) { return 405; } if ($http_x_q !~* ^yes$) { return 206 "not yes\\n"; } return 200 "yes\\n"; }
        location /order { return 200 "first\\n"; if ($http_x_flag) { return 500; } }
        location /map { if ($picked = "") { return 404; } proxy_pass http://$picked; }
        location /limited { if ($http_x_skip) { return 200 "skipped\\n"; } limit_req zone=one; proxy_pass http://backend; }
    }
`;

interface Probe {
  readonly path: string;
  readonly method?: string;
  readonly headers?: Record<string, string>;
}

const PROBES: readonly Probe[] = [
  { path: '/truthy' },
  { path: '/truthy', headers: { 'x-flag': '1' } },
  { path: '/truthy', headers: { 'x-flag': '0' } },
  { path: '/truthy', headers: { 'x-flag': 'yes', 'x-server-stop': '1' } },
  { path: '/eq?v=on' },
  { path: '/eq?v=ON' },
  { path: '/eq?v=off' },
  { path: '/eq' },
  { path: '/vars', headers: { 'x-a': 'x-tail', 'x-b': 'x' } },
  { path: '/vars', headers: { 'x-a': 'x-tail', 'x-b': 'y' } },
  { path: '/re', headers: { 'user-agent': 'GoodBot' } },
  { path: '/re', headers: { 'user-agent': 'goodbot' } },
  { path: '/re', headers: { 'user-agent': 'CURL/8' } },
  { path: '/re', method: 'POST', headers: { 'user-agent': 'x' } },
  { path: '/re', headers: { 'user-agent': 'x', 'x-q': 'YES' } },
  { path: '/re', headers: { 'user-agent': 'x', 'x-q': 'no' } },
  { path: '/order', headers: { 'x-flag': '1' } },
  { path: '/map', headers: { 'x-pick': 'a' } },
  { path: '/map', headers: { 'x-pick': 'b' } },
  { path: '/map' },
];

describe('if + return: the replica answers as nginx', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let replicaBase: string;

  before(async () => {
    upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '9' });
      res.end('upstream\n');
    });
    const listen = await freePort();
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${http(listen, upstream.port)}}\n`);
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => http(port, upstream.port) }),
      startReplica(config, [], { status: false }),
    ]);
    replicaBase = `http://127.0.0.1:${replica.ports[String(listen)]}`;
  });

  after(async () => {
    await stopAll();
    await Promise.all([nginx?.stop(), upstream?.close()]);
    dir.remove();
  });

  async function send(base: string, p: Probe): Promise<string> {
    const res = await request(`${base}${p.path}`, {
      method: (p.method ?? 'GET') as 'GET',
      headers: { ...p.headers },
    });
    const body = await res.body.text();
    // nginx's pages name its version; compare statuses and our texts
    return `${res.statusCode} ${res.statusCode >= 400 && body.includes('<html>') ? '(page)' : body}`;
  }

  test('every operator, variable right sides, server before location, order on a level', async () => {
    for (const p of PROBES) {
      const [fromNginx, fromReplica] = await Promise.all([
        send(`http://127.0.0.1:${nginx.port}`, p),
        send(replicaBase, p),
      ]);
      assert.equal(
        fromReplica,
        fromNginx,
        `${p.method ?? 'GET'} ${p.path} ${JSON.stringify(p.headers ?? {})}`,
      );
    }
    // the probes do reach different branches
    const answers = new Set(await Promise.all(PROBES.map((p) => send(replicaBase, p))));
    assert.ok(answers.size >= 12, [...answers].join(' | '));
  });

  test('a request an if answers is not counted by the location’s limit_req (rewrite runs before preaccess)', async () => {
    for (const base of [`http://127.0.0.1:${nginx.port}`, replicaBase]) {
      assert.equal(await send(base, { path: '/limited', headers: { 'x-skip': '1' } }), '200 skipped\n');
      assert.equal(await send(base, { path: '/limited' }), '200 upstream\n', base);
      assert.equal(await send(base, { path: '/limited', headers: { 'x-skip': '1' } }), '200 skipped\n');
      assert.equal((await send(base, { path: '/limited' })).slice(0, 3), '503', base);
    }
  });
});
