/**
 * Request heads whose lines end in a bare LF, or in CRs before it, read as nginx reads them: real
 * nginx and a replica process serve the same configuration in front of the same echoing upstream and
 * get the same raw requests, each on its own connection. Both must answer the same status lines, and
 * the upstream must see the same request from both (method, target, headers, body).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { rawExchange } from '../helpers/raw-peers.ts';

function body(listen: number, upstream: number): string {
  return `
    server {
        listen 127.0.0.1:${listen};
        server_name localhost;
        location / { proxy_pass http://127.0.0.1:${upstream}; }
    }
`;
}

interface Case {
  readonly name: string;
  /** What the client writes, each part flushed before the next. */
  readonly parts: readonly (string | Buffer)[];
  /** The status line(s) nginx answers, in order (checked against nginx too). */
  readonly statuses: readonly number[];
}

const CASES: readonly Case[] = [
  { name: 'HTTP/1.0, LF only', parts: ['GET /lf HTTP/1.0\nHost: localhost\nX-A: a\n\n'], statuses: [200] },
  {
    name: 'HTTP/1.1, LF only',
    parts: ['GET /lf?q=1 HTTP/1.1\nHost: localhost\nX-A: a\nConnection: close\n\n'],
    statuses: [200],
  },
  {
    name: 'CRLF and LF mixed',
    parts: ['GET /mixed HTTP/1.1\r\nHost: localhost\nX-A: a\r\nConnection: close\n\r\n'],
    statuses: [200],
  },
  {
    name: 'CRs before a header line LF',
    parts: ['GET / HTTP/1.0\nHost: localhost\r\r\n\n'],
    statuses: [200],
  },
  {
    name: 'two CRs after the request line',
    parts: ['GET / HTTP/1.0\r\r\nHost: localhost\n\n'],
    statuses: [400],
  },
  {
    name: 'a CR inside a header value',
    parts: ['GET / HTTP/1.0\nHost: localhost\nX-A: a\rb\n\n'],
    statuses: [400],
  },
  { name: 'a line of CRs', parts: ['GET / HTTP/1.0\nHost: localhost\n\r\r\n'], statuses: [400] },
  {
    name: 'an LF inside a header value: the rest is a header with no value',
    parts: ['GET / HTTP/1.0\nHost: localhost\nX-A: a\nb\n\n'],
    statuses: [200],
  },
  {
    name: 'an LF inside Host: a second Host',
    parts: ['GET / HTTP/1.0\nHost: local\nhost\n\n'],
    statuses: [400],
  },
  {
    name: 'an LF inside a value: a line with a space',
    parts: ['GET / HTTP/1.0\nX-A: a\nb c\n\n'],
    statuses: [400],
  },
  {
    name: 'blank lines before the request line',
    parts: ['\r\n\nGET / HTTP/1.0\nHost: localhost\n\n'],
    statuses: [200],
  },
  {
    name: 'a body after an LF head (its LFs kept)',
    parts: ['POST /post HTTP/1.0\nHost: localhost\nContent-Length: 8\n\nab\ncd\n\n\n'],
    statuses: [200],
  },
  {
    name: 'a chunked body after an LF head',
    parts: [
      'POST /chunked HTTP/1.1\nHost: localhost\nTransfer-Encoding: chunked\nConnection: close\n\n3\r\nab\n\r\n0\r\n\r\n',
    ],
    statuses: [200],
  },
  {
    name: 'pipelined LF heads',
    parts: [
      'GET /1 HTTP/1.1\nHost: localhost\n\nGET /2 HTTP/1.1\nHost: localhost\n\nGET /3 HTTP/1.1\nHost: localhost\nConnection: close\n\n',
    ],
    statuses: [200, 200, 200],
  },
  {
    name: 'pipelined LF heads behind one node:http reads (HTTP/1.0 keep-alive)',
    parts: [
      'GET /1 HTTP/1.0\nHost: localhost\nConnection: keep-alive\n\nGET /2 HTTP/1.1\nHost: localhost\n\nGET /3 HTTP/1.1\nHost: localhost\nConnection: close\n\n',
    ],
    statuses: [200, 200, 200],
  },
  {
    name: 'an LF head in two reads',
    parts: ['GET /split HTTP/1.1\nHost: local', 'host\nConnection: close\n\n'],
    statuses: [200],
  },
];

/**
 * The upstream's answer is the request it was sent, with what legitimately differs left out, on a line
 * of its own (so that the next status line of a pipeline starts one).
 */
function echoUpstream(): Server {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // nginx talks HTTP/1.0 to upstreams, buffering a chunked body; the replica HTTP/1.1, streaming,
      // and it passes Host and X-Forwarded-* by default (docs/replica-http.md)
      const headers = req.rawHeaders.filter(
        (_, i, all) =>
          i % 2 === 0 &&
          !/^(connection|content-length|transfer-encoding|host|x-forwarded-.*)$/i.test(all[i]!),
      );
      const values = headers.map((name) => `${name}: ${req.headers[name.toLowerCase()]}`);
      const echo = `${JSON.stringify([req.method, req.url, values, Buffer.concat(chunks).toString('latin1')])}\n`;
      // with a length nginx keeps the client's connection (node:http sends none to an HTTP/1.0 request)
      res.setHeader('content-length', Buffer.byteLength(echo, 'latin1'));
      res.end(echo, 'latin1');
    });
  });
}

interface Answer {
  readonly statuses: number[];
  readonly echoes: string[];
}

async function send(port: number, parts: readonly (string | Buffer)[]): Promise<Answer> {
  const { text } = await rawExchange(port, parts, { timeoutMs: 5000 });
  const statuses = [...text.matchAll(/^HTTP\/1\.1 (\d{3}) /gm)].map((m) => Number(m[1]));
  const echoes = [...text.matchAll(/^\["[A-Z]+",.*\]$/gm)].map((m) => m[0]);
  return { statuses, echoes };
}

describe('replica vs nginx: request heads with bare LF line ends', () => {
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
      startNginx({ http: (port) => body(port, upstreamPort), headerBuffers: 'nginx' }),
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
      const fromNginx = await send(nginx.port, c.parts);
      const fromReplica = await send(replica.ports[String(listenPort)]!, c.parts);
      assert.deepEqual(fromNginx.statuses, c.statuses, 'nginx');
      assert.deepEqual(fromReplica.statuses, c.statuses, 'replica');
      assert.deepEqual(fromReplica.echoes, fromNginx.echoes);
      assert.equal(fromNginx.echoes.length, c.statuses.filter((s) => s === 200).length);
    });
  }
});
