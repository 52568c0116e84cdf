/**
 * A replica process routes by nginx's rules (`listen`, `server_name`, `location`) and forwards with
 * `proxy_pass` to an `upstream` group or to host:port (rewriting the URI part), with the header lines
 * `proxy_set_header` sets and nginx's defaults (which drop the hop-by-hop ones it names); `return` is
 * answered directly.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import {
  echo,
  rawRequest,
  responseOf,
  startUpstream,
  type TestUpstream,
  type UpstreamRecord,
} from './http/harness.ts';

describe('replica: routing and proxy_pass', () => {
  const dir = new TempDir();
  let tea: TestUpstream;
  let beans: TestUpstream;
  let replica: ReplicaRun;
  let base: string;

  before(async () => {
    const port = await freePort();
    [tea, beans] = await Promise.all([
      startUpstream(),
      startUpstream((req, res, record) => {
        if (req.url === '/beans/hop') {
          res.writeHead(200, {
            connection: 'x-up-private, keep-alive',
            'x-up-private': 'secret',
            'keep-alive': 'timeout=5',
            'x-kept': 'yes',
          });
          res.end('ok');
          return;
        }
        echo(req, res, record);
      }),
    ]);
    const config = dir.write(
      'nginx.conf',
      `events {}
http {
    upstream tea { server 127.0.0.1:${tea.port}; }
    server {
        listen ${port};
        server_name cafe.example.com;
        location /tea {
            proxy_set_header Host $host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-Host $host;
            proxy_pass http://tea;
        }
        location /coffee/ { proxy_pass http://127.0.0.1:${beans.port}/beans/; }
        location = /menu { return 200 "menu of the day\\n"; }
        location /old { return 301 http://cafe.example.com/new; }
    }
    upstream Beans { server 127.0.0.1:${beans.port}; }
    map $http_x_pick $pick {
        tea tea;
        beans beans;
        rewrite beans/beans/fixed;
        nowhere nowhere;
    }
    server {
        listen ${port};
        server_name pick.example.com;
        location / { proxy_pass http://$pick; }
    }
    server {
        listen ${port};
        server_name juice.example.com *.juice.example.com;
        location / { proxy_pass http://127.0.0.1:${beans.port}; }
    }
}
`,
    );
    replica = await startReplica(config, [], { status: false });
    base = `http://127.0.0.1:${replica.ports[String(port)]}`;
  });

  after(async () => {
    await stopAll();
    await Promise.all([tea?.close(), beans?.close()]);
    dir.remove();
  });

  async function get(path: string, host: string, headers: Record<string, string> = {}) {
    const res = await request(`${base}${path}`, { headers: { host, ...headers } });
    return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
  }

  test('a location proxied to an upstream group gets the request with the X-Forwarded-* lines it sets', async () => {
    const res = await get('/tea/green?cups=2', 'cafe.example.com', {
      'x-forwarded-for': '203.0.113.9',
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'evil.example',
    });
    assert.equal(res.status, 200);
    const seen = JSON.parse(res.text) as UpstreamRecord;
    assert.equal(seen.url, '/tea/green?cups=2');
    assert.equal(seen.headers.host, 'cafe.example.com');
    // nginx's $proxy_add_x_forwarded_for: the incoming list plus the peer (not trusted: no realip here).
    assert.equal(seen.headers['x-forwarded-for'], '203.0.113.9, 127.0.0.1');
    assert.equal(seen.headers['x-forwarded-proto'], 'http');
    assert.equal(seen.headers['x-forwarded-host'], 'cafe.example.com');
    assert.equal(tea.requests.length, 1);
    assert.equal(beans.requests.length, 0);
  });

  test('proxy_pass to host:port with a URI part replaces the matched prefix', async () => {
    const res = await get('/coffee/latte?milk=oat', 'cafe.example.com');
    assert.equal(res.status, 200);
    assert.equal((JSON.parse(res.text) as UpstreamRecord).url, '/beans/latte?milk=oat');
  });

  test('server_name picks the server: exact and wildcard names, else the default (first) server', async () => {
    const exact = await get('/orange', 'juice.example.com');
    assert.equal((JSON.parse(exact.text) as UpstreamRecord).url, '/orange');
    const wild = await get('/apple', 'fresh.juice.example.com');
    assert.equal((JSON.parse(wild.text) as UpstreamRecord).url, '/apple');
    const teaBefore = tea.requests.length;
    const unknown = await get('/tea/black', 'unknown.example.com');
    assert.equal(unknown.status, 200);
    assert.equal(tea.requests.length, teaBefore + 1);
    // The default server has no location for /juice: nginx would look for a file; the replica has none.
    const none = await get('/juice', 'unknown.example.com');
    assert.equal(none.status, 404);
  });

  test('proxy_pass with variables names an upstream per request (case-insensitively); a URI part is sent as is; any other host is a 502', async () => {
    const teaBefore = tea.requests.length;
    const toTea = await get('/menu?x=1', 'pick.example.com', { 'x-pick': 'tea' });
    assert.equal(toTea.status, 200);
    assert.equal((JSON.parse(toTea.text) as UpstreamRecord).url, '/menu?x=1');
    assert.equal(tea.requests.length, teaBefore + 1);
    const toBeans = await get('/menu', 'pick.example.com', { 'x-pick': 'beans' });
    assert.equal((JSON.parse(toBeans.text) as UpstreamRecord).url, '/menu');
    const fixed = await get('/menu?x=1', 'pick.example.com', { 'x-pick': 'rewrite' });
    assert.equal((JSON.parse(fixed.text) as UpstreamRecord).url, '/beans/fixed');
    const nowhere = await get('/menu', 'pick.example.com', { 'x-pick': 'nowhere' });
    assert.equal(nowhere.status, 502);
    assert.equal(tea.requests.length, teaBefore + 1);
  });

  test('return answers directly: text as text/plain, a redirect with Location', async () => {
    const upstreamCount = tea.requests.length + beans.requests.length;
    const menu = await get('/menu', 'cafe.example.com');
    assert.equal(menu.status, 200);
    assert.equal(menu.text, 'menu of the day\n');
    assert.equal(menu.headers['content-type'], 'text/plain');
    const moved = await get('/old/page', 'cafe.example.com');
    assert.equal(moved.status, 301);
    assert.equal(moved.headers.location, 'http://cafe.example.com/new');
    assert.match(moved.text, /<title>301 Moved Permanently<\/title>/);
    assert.equal(tea.requests.length + beans.requests.length, upstreamCount);
  });

  test("nginx's default set drops its hop-by-hop headers and sets Host; the answer loses what nginx does not relay", async () => {
    const port = Number(new URL(base).port);
    const out = responseOf(
      await rawRequest(port, [
        'GET /coffee/hop HTTP/1.1',
        'Host: cafe.example.com',
        'Connection: close, X-Client-Private',
        'X-Client-Private: secret',
        'Keep-Alive: timeout=9',
        'TE: trailers',
        'Proxy-Authorization: Basic Zm9vOmJhcg==',
        'X-End-To-End: kept',
      ]),
    );
    assert.equal(out.status, 200);
    assert.equal(out.body, 'ok');
    // nginx relays what an answer's Connection names
    assert.equal(out.header('x-up-private'), 'secret');
    assert.equal(out.header('keep-alive'), undefined);
    assert.equal(out.header('x-kept'), 'yes');
    const seen = beans.requests.at(-1)!;
    assert.equal(seen.url, '/beans/hop');
    for (const name of ['keep-alive', 'te']) {
      assert.equal(seen.headers[name], undefined, `${name} must not reach the upstream`);
    }
    // `$proxy_host`; and what the set does not name goes on, as nginx sends it
    assert.equal(seen.headers.host, `127.0.0.1:${beans.port}`);
    assert.equal(seen.headers['x-client-private'], 'secret');
    assert.equal(seen.headers['proxy-authorization'], 'Basic Zm9vOmJhcg==');
    assert.equal(seen.headers['x-forwarded-for'], undefined);
    assert.equal(seen.headers['x-end-to-end'], 'kept');
  });
});
