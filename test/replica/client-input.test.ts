/**
 * Bad client input, answered as nginx answers it and never counted against an upstream. Real nginx
 * (with its default header buffers) and a replica process serve the same configuration in front of
 * the same two-server upstream and get the same requests, each on its own connection: three kinds of
 * duplicate Host, a 64 KB header line, a 40 KB request URI, an `HTTP/2.0` request line, and bodies
 * around `client_max_body_size` (the 1m default, a location's 2k, a location's 0), declared with
 * Content-Length or chunked. Both must answer the same status lines, pages and `Connection`, write
 * the same error-log lines, and afterwards serve clean requests from both servers, with no server
 * taken out of the group.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { serverValue } from '../../src/replica/http/wire/server-tokens.ts';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** The configuration under test. */
function body(listen: number, a: number, b: number): string {
  return `
    upstream two {
        server 127.0.0.1:${a};
        server 127.0.0.1:${b};
    }
    server {
        listen 127.0.0.1:${listen};
        server_name cafe.example.com;
        location / { proxy_pass http://two; }
        location /small { client_max_body_size 2k; proxy_pass http://two; }
        location /any { client_max_body_size 0; proxy_pass http://two; }
    }
`;
}

interface Case {
  readonly name: string;
  /** What the client writes, in order (the head and, after it, the body). */
  readonly parts: readonly (string | Buffer)[];
  /** The status nginx answers (checked against nginx too). */
  readonly status: number;
}

const host = 'Host: cafe.example.com\r\n';
const get = (extra = '') => `GET /coffee HTTP/1.1\r\n${host}${extra}Connection: close\r\n\r\n`;
const post = (uri: string, headers: string) =>
  `POST ${uri} HTTP/1.1\r\n${host}${headers}Connection: close\r\n\r\n`;
const MB = 1024 * 1024;
const bytes = (n: number) => Buffer.alloc(n, 'a');
/** A chunked body of `n` bytes in chunks of at most `chunk`. */
function chunked(n: number, chunk: number): Buffer {
  const parts: Buffer[] = [];
  for (let left = n; left > 0; left -= chunk) {
    const size = Math.min(chunk, left);
    parts.push(Buffer.from(`${size.toString(16)}\r\n`), bytes(size), Buffer.from('\r\n'));
  }
  parts.push(Buffer.from('0\r\n\r\n'));
  return Buffer.concat(parts);
}

const DUPLICATE_HOSTS: readonly Case[] = [
  { name: 'two identical Host lines', parts: [get(host)], status: 400 },
  { name: 'Host and host', parts: [get('host: cafe.example.com\r\n')], status: 400 },
  { name: 'an empty second Host', parts: [get('Host:\r\n')], status: 400 },
];

const HEADS: readonly Case[] = [
  { name: 'a 64 KB header line', parts: [get(`X-Big: ${'b'.repeat(64 * 1024)}\r\n`)], status: 400 },
  {
    name: 'a 40 KB request URI',
    parts: [`GET /${'u'.repeat(40 * 1024)} HTTP/1.1\r\n${host}Connection: close\r\n\r\n`],
    status: 414,
  },
  { name: 'an HTTP/2.0 request line', parts: [`GET /coffee HTTP/2.0\r\n${host}\r\n`], status: 505 },
];

const BODIES: readonly Case[] = [
  {
    name: '1m + 1 declared (default limit)',
    parts: [post('/', `Content-Length: ${MB + 1}\r\n`), bytes(MB + 1)],
    status: 413,
  },
  {
    name: '1m declared (default limit)',
    parts: [post('/', `Content-Length: ${MB}\r\n`), bytes(MB)],
    status: 200,
  },
  {
    name: '1m + 1 chunked (default limit)',
    parts: [post('/', 'Transfer-Encoding: chunked\r\n'), chunked(MB + 1, 64 * 1024)],
    status: 413,
  },
  {
    name: '2049 declared (location 2k)',
    parts: [post('/small', 'Content-Length: 2049\r\n'), bytes(2049)],
    status: 413,
  },
  {
    name: '2048 declared (location 2k)',
    parts: [post('/small', 'Content-Length: 2048\r\n'), bytes(2048)],
    status: 200,
  },
  {
    name: '3k chunked (location 2k)',
    parts: [post('/small', 'Transfer-Encoding: chunked\r\n'), chunked(3072, 3072)],
    status: 413,
  },
  {
    name: '3m declared (location 0)',
    parts: [post('/any', `Content-Length: ${3 * MB}\r\n`), bytes(3 * MB)],
    status: 200,
  },
  {
    name: '3m chunked (location 0)',
    parts: [post('/any', 'Transfer-Encoding: chunked\r\n'), chunked(3 * MB, 64 * 1024)],
    status: 200,
  },
];

interface Answer {
  readonly statusLine: string;
  readonly connection: string | undefined;
  /** The page, with nginx's tail written as the replica's. */
  readonly body: string;
  /** A socket error the client met (a reset that cut the answer), or null. */
  readonly error: string | null;
}

/** Sends one case on a fresh connection and reads the answer until the server closes. */
function send(port: number, parts: readonly (string | Buffer)[]): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | null = null;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const connection = lines
        .find((l) => l.toLowerCase().startsWith('connection:'))
        ?.slice(11)
        .trim();
      let content = text.slice(end + 4);
      if (lines.some((l) => /^transfer-encoding: chunked$/i.test(l))) {
        content = content.replace(/^[0-9a-f]+\r\n/, '').replace(/\r\n0\r\n\r\n$/, '');
      }
      resolve({ statusLine, connection, body: content.replace('nginx/1.22.1', serverValue(true)), error });
    });
    socket.once('connect', () => {
      for (const part of parts) socket.write(part);
    });
  });
}

/** The upstream's answer names the server, so both can be seen in use. */
function upstream(name: string): { server: Server } {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end(name));
  });
  return { server };
}

/**
 * Error-log lines about requests, with what legitimately differs masked. nginx's warnings that it
 * buffered a body to a file are left out: the replica streams bodies (docs/replica-http.md).
 */
function requestLines(errorLog: string): string[] {
  return errorLog
    .split('\n')
    .filter((line) => line.includes(', request: "') && !line.includes(' is buffered to a temporary file '))
    .map((line) =>
      line
        .replace(/^\d{4}\/\d{2}\/\d{2} \d{2}:\d{2}:\d{2} /, 'DATE ')
        .replace(/\] \d+#\d+: \*\d+ /, '] PID: *N ')
        // nginx checks each chunk's declared size, the replica the bytes as they pass (see docs)
        .replace(/chunked body: \d+\+\d+ bytes/, 'chunked body: X+Y bytes'),
    );
}

/**
 * Lines longer than nginx's 2048-byte buffer are cut at its end, after a prefix (pid, connection
 * number) whose length differs between the two: such lines are compared up to the shorter cut.
 */
function comparable(nginx: string[], replica: string[]): [string[], string[]] {
  const cut = nginx.map((line, i) => {
    const other = replica[i] ?? '';
    return line.length > 1900 && other.length > 1900 ? Math.min(line.length, other.length) : Infinity;
  });
  return [nginx.map((l, i) => l.slice(0, cut[i])), replica.map((l, i) => l.slice(0, cut[i]))];
}

describe('replica vs nginx: bad client input never counts against an upstream', () => {
  const dir = new TempDir();
  const a = upstream('a');
  const b = upstream('b');
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  const answers = new Map<string, { nginx: Answer[]; replica: Answer[] }>();

  async function play(cases: readonly Case[], name: string): Promise<void> {
    const run = async (port: number) => {
      const out: Answer[] = [];
      for (const c of cases) out.push(await send(port, c.parts));
      return out;
    };
    answers.set(name, {
      nginx: await run(nginx.port),
      replica: await run(replica.ports[String(listenPort)]!),
    });
  }

  let listenPort = 0;

  before(async () => {
    const ports: number[] = [];
    for (const { server } of [a, b]) {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      ports.push((server.address() as { port: number }).port);
    }
    listenPort = await freePort();
    const config = dir.write(
      'nginx.conf',
      `events {}\nhttp {\n${body(listenPort, ports[0]!, ports[1]!)}\n}\n`,
    );
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => body(port, ports[0]!, ports[1]!), headerBuffers: 'nginx' }),
      startReplica(config, ['--error-log', dir.file('error.log'), '--error-log-level', 'info'], {
        status: false,
      }),
    ]);
    await play(DUPLICATE_HOSTS, 'duplicate hosts');
    // straight after: clean requests, which both servers must serve
    await play(
      [0, 1, 2, 3].map((i) => ({ name: `clean ${i}`, parts: [get()], status: 200 })),
      'clean',
    );
    await play(HEADS, 'heads');
    await play(BODIES, 'bodies');
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    a.server.close();
    b.server.close();
    dir.remove();
  });

  for (const [group, cases] of [
    ['duplicate hosts', DUPLICATE_HOSTS],
    ['heads', HEADS],
    ['bodies', BODIES],
  ] as const) {
    test(`${group}: the statuses, pages and Connection nginx answers`, () => {
      const { nginx: fromNginx, replica: fromReplica } = answers.get(group)!;
      assert.deepEqual(
        fromNginx.map((x) => x.statusLine.slice(9, 12)),
        cases.map((c) => String(c.status)),
        'nginx answered as measured',
      );
      // which server answers a 200 depends on the rotation: the replica picks a server for a
      // chunked body before it knows it is too large, nginx reads the body first
      const shown = ({ error: _error, ...answer }: Answer) =>
        answer.statusLine.startsWith('HTTP/1.1 200 ') ? { ...answer, body: 'a or b' } : answer;
      for (const [i, c] of cases.entries()) {
        assert.deepEqual(shown(fromReplica[i]!), shown(fromNginx[i]!), c.name);
        assert.equal(fromReplica[i]!.error, null, `${c.name}: the answer was cut`);
      }
    });
  }

  test('after the duplicate Host requests, both servers serve clean requests', () => {
    const { nginx: fromNginx, replica: fromReplica } = answers.get('clean')!;
    assert.deepEqual(
      fromNginx.map((x) => [x.statusLine, x.body]),
      fromReplica.map((x) => [x.statusLine, x.body]),
    );
    assert.deepEqual(fromReplica.map((x) => x.body).sort(), ['a', 'a', 'b', 'b']);
  });

  test('no server was taken out, and no line blames one; the same lines as nginx', async () => {
    const expected = requestLines(nginx.errorLog());
    assert.equal(expected.filter((l) => l.includes('upstream')).length, 0, expected.join('\n'));
    await waitFor(() => requestLines(dir.read('error.log')).length >= expected.length, {
      message: 'the replica error log',
    });
    const actual = requestLines(dir.read('error.log'));
    assert.equal(actual.filter((l) => l.includes('upstream')).length, 0, actual.join('\n'));
    const [left, right] = comparable(expected, actual);
    assert.deepEqual(right, left);
    // the cases that write a line, each as nginx words it
    const context = (request: string, withHost = true) =>
      `client: 127.0.0.1, server: cafe.example.com, request: "${request}"${withHost ? ', host: "cafe.example.com"' : ''}`;
    const info = (text: string, request: string, withHost = true) =>
      `DATE [info] PID: *N ${text}, ${context(request, withHost)}`;
    const error = (text: string, request: string) => `DATE [error] PID: *N ${text}, ${context(request)}`;
    const duplicate = (line: string) =>
      info(
        `client sent duplicate host header: "${line}", previous value: "Host: cafe.example.com" while reading client request headers`,
        'GET /coffee HTTP/1.1',
      );
    assert.deepEqual(
      expected.map((line) => line.slice(0, 300)),
      [
        duplicate('Host: cafe.example.com'),
        duplicate('host: cafe.example.com'),
        duplicate('Host: '),
        `DATE [info] PID: *N client sent too long header line: "X-Big: ${'b'.repeat(300)}`,
        `DATE [info] PID: *N client sent too long URI while reading client request line, client: 127.0.0.1, server: cafe.example.com, request: "GET /${'u'.repeat(300)}`,
        info('client sent invalid version while reading client request line', 'GET /coffee HTTP/2.0', false),
        error(`client intended to send too large body: ${MB + 1} bytes`, 'POST / HTTP/1.1'),
        error('client intended to send too large chunked body: X+Y bytes', 'POST / HTTP/1.1'),
        error('client intended to send too large body: 2049 bytes', 'POST /small HTTP/1.1'),
        error('client intended to send too large chunked body: X+Y bytes', 'POST /small HTTP/1.1'),
      ].map((line) => line.slice(0, 300)),
    );
  });
});
