/**
 * The request head sent upstream, against real nginx: ngx_http_proxy_create_request's `proxy_set_header`
 * set (nginx's defaults, `Host $proxy_host` among them, merged with the lines in force), each value
 * evaluated for the request and an empty one sending nothing, then the client's lines but those the
 * set names. An echo server answers with the header lines it received.
 *
 * Compared: every line but Connection, Content-Length and Transfer-Encoding, in order, and Host's
 * value apart. Where the wire deliberately differs: nginx speaks HTTP/1.0 with `Connection: close`,
 * the replica HTTP/1.1 with kept connections (`Connection: keep-alive`), and its upstream client writes
 * Host and Connection first and the body's framing last.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { rawExchange } from '../helpers/raw-peers.ts';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

/** Answers every request with its header lines, one `name: value` a line. */
function echoServer(): Server {
  return createServer((socket: Socket) => {
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end === -1) return;
      const lines = text.slice(text.indexOf('\r\n') + 2, end + 2);
      socket.end(`HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: ${lines.length}\r\n\r\n${lines}`);
    });
    socket.on('error', () => {});
  });
}

function body(listen: number, upstream: number): string {
  return `
    upstream backend { server 127.0.0.1:${upstream}; }
    server {
        listen 127.0.0.1:${listen};
        server_name plain;
        location /defaults { proxy_pass http://backend; }
        location /port { proxy_pass http://127.0.0.1:${upstream}; }
        location /host {
            proxy_set_header Host $host;
            proxy_pass http://backend;
        }
        location /added {
            proxy_set_header X-Real-IP $remote_addr;
            proxy_set_header X-Request "$request_method $uri?$args";
            proxy_set_header X-Proxy $proxy_host:$proxy_port;
            proxy_pass http://backend;
        }
        location /empty {
            proxy_set_header User-Agent "";
            proxy_set_header X-Missing $http_x_missing;
            proxy_pass http://backend;
        }
        location /forwarded {
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Forwarded-Host $host;
            proxy_pass http://backend;
        }
        location /named {
            proxy_set_header x-client from-the-set;
            proxy_pass http://backend;
        }
    }
    server {
        listen 127.0.0.1:${listen};
        server_name inherit;
        proxy_set_header X-Level server;
        proxy_set_header X-Server-Only yes;
        location /inherited { proxy_pass http://backend; }
        location /own {
            proxy_set_header X-Level location;
            proxy_pass http://backend;
        }
    }
`;
}

/** Framing and connection lines, which the two write differently on purpose (see above). */
const WIRE = new Set(['connection', 'content-length', 'transfer-encoding']);

interface Seen {
  /** Host's value; null when none was sent. */
  readonly host: string | null;
  /** The other lines, in order. */
  readonly lines: readonly string[];
}

async function send(port: number, server: string, target: string, extra: readonly string[]): Promise<Seen> {
  const head = [`GET ${target} HTTP/1.1`, `Host: ${server}`, ...extra, 'Connection: close', '', ''];
  const { text } = await rawExchange(port, [head.join('\r\n')], { timeoutMs: 5000 });
  assert.match(text, /^HTTP\/1\.1 200 /, `${target}: ${text}`);
  const lines = text
    .slice(text.indexOf('\r\n\r\n') + 4)
    .split('\r\n')
    .filter((line) => line !== '');
  let host: string | null = null;
  const kept: string[] = [];
  for (const line of lines) {
    const name = line.slice(0, line.indexOf(':')).toLowerCase();
    if (name === 'host') host = line.slice(line.indexOf(':') + 1).trim();
    else if (!WIRE.has(name)) kept.push(line);
  }
  return { host, lines: kept };
}

describe('replica vs nginx: proxy_set_header and the request head sent upstream', () => {
  const upstream = echoServer();
  let upstreamPort = 0;
  let both: SideBySide;

  before(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as { port: number }).port;
    both = await startSideBySide((listen) => body(listen, upstreamPort));
  });

  after(async () => {
    await both?.stop();
    upstream.close();
  });

  const CLIENT = ['User-Agent: ua/1', 'X-Client: mine', 'Accept: */*'];

  async function same(server: string, target: string, extra: readonly string[] = CLIENT): Promise<Seen> {
    const fromNginx = await send(both.nginxPort, server, target, extra);
    const fromReplica = await send(both.replicaPort, server, target, extra);
    assert.deepEqual(fromReplica, fromNginx, `${server} ${target}`);
    return fromNginx;
  }

  test("nginx's defaults: Host is $proxy_host, the client's lines follow, no X-Forwarded-*", async () => {
    assert.deepEqual(await same('plain', '/defaults'), {
      host: 'backend',
      lines: ['User-Agent: ua/1', 'X-Client: mine', 'Accept: */*'],
    });
    assert.deepEqual(await same('plain', '/port'), {
      host: `127.0.0.1:${upstreamPort}`,
      lines: ['User-Agent: ua/1', 'X-Client: mine', 'Accept: */*'],
    });
  });

  test("the client's X-Forwarded-* and hop-by-hop lines: passed as sent, or dropped as nginx drops them", async () => {
    const seen = await same('plain', '/defaults', [
      'X-Forwarded-For: 203.0.113.1',
      'X-Forwarded-Proto: https',
      'Keep-Alive: timeout=5',
      'TE: trailers',
      'Upgrade: websocket',
      'Proxy-Authorization: Basic Zm9v',
    ]);
    assert.deepEqual(seen.lines, [
      'X-Forwarded-For: 203.0.113.1',
      'X-Forwarded-Proto: https',
      'Proxy-Authorization: Basic Zm9v',
    ]);
  });

  test('proxy_set_header Host $host', async () => {
    assert.equal((await same('plain', '/host')).host, 'plain');
  });

  test('added lines with variables come first, evaluated for the request', async () => {
    assert.deepEqual((await same('plain', '/added?a=1')).lines, [
      'X-Real-IP: 127.0.0.1',
      'X-Request: GET /added?a=1',
      'X-Proxy: backend:80',
      'User-Agent: ua/1',
      'X-Client: mine',
      'Accept: */*',
    ]);
  });

  test("an empty value sends nothing, and takes the client's line of that name away", async () => {
    assert.deepEqual((await same('plain', '/empty')).lines, ['X-Client: mine', 'Accept: */*']);
  });

  test('X-Forwarded-* only from proxy_set_header lines', async () => {
    // (the client sends no X-Forwarded-For: the harness's nginx takes $remote_addr from it)
    assert.deepEqual((await same('plain', '/forwarded')).lines, [
      'X-Forwarded-For: 127.0.0.1',
      'X-Forwarded-Proto: http',
      'X-Forwarded-Host: plain',
      'User-Agent: ua/1',
      'X-Client: mine',
      'Accept: */*',
    ]);
  });

  test("a client's line named by the set is not sent beside the set's (names in any case)", async () => {
    assert.deepEqual((await same('plain', '/named')).lines, [
      'x-client: from-the-set',
      'User-Agent: ua/1',
      'Accept: */*',
    ]);
  });

  test("a location's own lines replace the server's wholly", async () => {
    assert.deepEqual((await same('inherit', '/inherited')).lines.slice(0, 2), [
      'X-Level: server',
      'X-Server-Only: yes',
    ]);
    assert.deepEqual((await same('inherit', '/own')).lines, [
      'X-Level: location',
      'User-Agent: ua/1',
      'X-Client: mine',
      'Accept: */*',
    ]);
  });
});
