/**
 * Absolute-form request targets (`GET http://host:port/path HTTP/1.0`), read as nginx reads them: real
 * nginx and a replica process serve the same two servers, and get the same raw requests, each on its
 * own connection. The target's host stands for Host in `$host` and server selection (`$http_host`
 * stays the header), `$request_uri` and `$uri` are the path's, the upstream is sent the path form, and
 * a host nginx refuses is its 400: the hosts of nginx's own host parsing cases, and more. A fragment
 * (`#`) in the target ends `$uri` and `$args` as in nginx.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { rawExchange } from '../helpers/raw-peers.ts';

const VARIABLES = 'host=$host http_host=$http_host request_uri=$request_uri uri=$uri args=$args';

function body(listen: number, upstream: number): string {
  return `
    server {
        listen 127.0.0.1:${listen};
        server_name localhost;
        location / { return 200 "${VARIABLES}"; }
        location /up/ { proxy_pass http://127.0.0.1:${upstream}; }
    }
    server {
        listen 127.0.0.1:${listen};
        server_name example.com;
        location / { return 200 "example.com: ${VARIABLES}"; }
        location = / { proxy_pass http://127.0.0.1:${upstream}; }
    }
`;
}

/** An absolute-form request for `target`, with a `Host: localhost` line unless `host` says otherwise. */
const absolute = (target: string, host: string | null = 'localhost', version = '1.0') =>
  `GET ${target} HTTP/${version}\r\n${host === null ? '' : `Host: ${host}\r\n`}\r\n`;

interface Case {
  readonly name: string;
  readonly request: string;
  /** The status nginx answers (checked against nginx too). */
  readonly status: number;
}

const IPV_FUTURE = "[v0123456789aBcDeF.!$&'()*+,;=-._~AbCdEfGhIjKlMnOpQrStUvWxYz0123456789:]";

const CASES: readonly Case[] = [
  { name: 'a domain', request: absolute('http://abcd-ef.g02.xyz/'), status: 200 },
  { name: 'a domain and port', request: absolute('http://www.abcd-ef.g02.xyz:10/'), status: 200 },
  { name: 'a trailing dot', request: absolute('http://www.abcd-ef.g02.xyz./'), status: 200 },
  { name: 'a trailing dot and port', request: absolute('http://abcd-ef.g02.xyz.:2/'), status: 200 },
  { name: 'upper case', request: absolute('http://AbC-d93.0.34ZhGt-s.nk.Ru/'), status: 200 },
  { name: 'IPv4', request: absolute('http://123.49.0.78/'), status: 200 },
  { name: 'IPv4 and port', request: absolute('http://123.40.56.78:123/'), status: 200 },
  { name: 'an IPv6 literal', request: absolute('http://[abcd::ef98:0:7654:321]/'), status: 200 },
  { name: 'an IPv6 literal and port', request: absolute('http://[abcd::ef98:0:7654:321]:5/'), status: 200 },
  { name: 'IPv4-mapped IPv6', request: absolute('http://[::ffff:12.30.67.89]:4321/'), status: 200 },
  { name: 'IPvFuture, every symbol', request: absolute(`http://${IPV_FUTURE}/`), status: 200 },
  { name: 'path separators', request: absolute('http://\\e/xample.com/'), status: 400 },
  { name: 'two dots', request: absolute('http://com.exa-m.45..:/'), status: 400 },
  {
    name: 'an IPv6 literal with separators',
    request: absolute('http://[abcd\\::ef98:0:7654:321/]:12/'),
    status: 400,
  },
  {
    name: 'an IPv6 literal with two dots',
    request: absolute('http://[ab..cd::ef98:0:7654:321]/'),
    status: 400,
  },
  { name: 'an underscore', request: absolute('http://a_b/'), status: 400 },
  { name: 'user info', request: absolute('http://user@localhost/'), status: 400 },
  { name: 'no host', request: absolute('http:///x'), status: 400 },
  { name: 'the target selects the server', request: absolute('http://EXAMPLE.com./a?b=1'), status: 200 },
  {
    name: 'over the Host header',
    request: absolute('http://localhost/v/../w?x', 'example.com'),
    status: 200,
  },
  { name: 'https', request: absolute('https://example.com/p?q=1', null), status: 200 },
  {
    name: 'no path, a query: the upstream gets /?q',
    request: absolute('http://example.com?q=1', null),
    status: 200,
  },
  { name: 'no path', request: absolute('http://localhost:8080', null), status: 200 },
  {
    name: 'an invalid Host header still refused',
    request: absolute('http://localhost/', 'a..b'),
    status: 400,
  },
  {
    name: 'HTTP/1.1 without Host still refused',
    request: absolute('http://localhost/', null, '1.1'),
    status: 400,
  },
  // a `#` ends `$uri`, and `$args` when it follows `?` (ngx_http_parse_complex_uri); nginx-tests' http_uri.t
  { name: 'a fragment ends the path', request: absolute('/foo/bar/..#frag'), status: 200 },
  { name: 'a fragment ends the args', request: absolute('/a?b=1#frag'), status: 200 },
  { name: 'a question mark in the fragment is no args', request: absolute('/a#f?b'), status: 200 },
  { name: 'absolute, args and a fragment', request: absolute('http://localhost/p?args#frag'), status: 200 },
  { name: 'the upstream gets the fragment nginx passes', request: absolute('/up/a?b#frag'), status: 200 },
  {
    name: 'the upstream gets the path form',
    request: absolute('http://Example.com:1/up/a?b', null),
    status: 200,
  },
];

function echoUpstream(): Server {
  return createServer((req, res) => res.end(`upstream: ${req.method} ${req.url}`));
}

interface Answer {
  readonly status: number;
  /** The body of a 200 (the variables, or what the upstream saw); pages differ in their signature. */
  readonly body: string;
}

async function send(port: number, request: string): Promise<Answer> {
  const { text } = await rawExchange(port, [request], { timeoutMs: 5000 });
  const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1] ?? 0);
  return { status, body: status === 200 ? text.slice(text.indexOf('\r\n\r\n') + 4) : '' };
}

describe('replica vs nginx: absolute-form request targets', () => {
  const dir = new TempDir();
  const upstream = echoUpstream();
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let listenPort = 0;

  before(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const upstreamPort = (upstream.address() as { port: number }).port;
    listenPort = await freePort();
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(listenPort, upstreamPort)}\n}\n`);
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => body(port, upstreamPort) }),
      startReplica(config, [], { status: false }),
    ]);
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    upstream.close();
    dir.remove();
  });

  for (const c of CASES) {
    test(c.name, async () => {
      const fromNginx = await send(nginx.port, c.request);
      const fromReplica = await send(replica.ports[String(listenPort)]!, c.request);
      assert.equal(fromNginx.status, c.status, 'nginx');
      assert.deepEqual(fromReplica, fromNginx);
    });
  }

  test('the host nginx keeps: lowercased, without port or trailing dot', async () => {
    const { body } = await send(replica.ports[String(listenPort)]!, absolute('http://EXAMPLE.com.:99/a?b=1'));
    assert.equal(
      body,
      'example.com: host=example.com http_host=localhost request_uri=/a?b=1 uri=/a args=b=1',
    );
  });
});
