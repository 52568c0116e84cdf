/**
 * What an attack campaign against the replica found, each sent by a real client or upstream to a real
 * replica process: bytes that ended the process, answers that let an upstream or a request inject
 * header lines, and requests answered or forwarded where nginx does neither. After each, the process
 * still answers the next request.
 */
import assert from 'node:assert/strict';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import {
  freePorts,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { rawExchange, responseCount, ScriptedUpstream } from '../helpers/raw-peers.ts';
import { TestPki } from '../helpers/tls-certs.ts';

const pki = new TestPki();
const first = pki.server('first', ['a.example']);
const second = pki.server('second', ['b.example']);

const OK = 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nup\n';

describe('hostile input: one client or upstream cannot end, hold or subvert the replica', () => {
  const dir = new TempDir();
  let replica: ReplicaRun;
  let upstream: ScriptedUpstream;
  let plain: number;
  let tls: number;

  before(async () => {
    upstream = await ScriptedUpstream.start(() => OK);
    const [plainPort, tlsPort] = await freePorts(2);
    const file = dir.write(
      'nginx.conf',
      `events {}
http {
    server {
        listen ${tlsPort} ssl;
        server_name a.example;
        ssl_certificate ${first.cert};
        ssl_certificate_key ${first.key};
        location / { return 200 "a\\n"; }
    }
    server {
        listen ${tlsPort} ssl;
        server_name b.example;
        ssl_certificate ${second.cert};
        ssl_certificate_key ${second.key};
        location / { return 200 "b\\n"; }
    }
    server {
        listen ${plainPort};
        location /redirect { return 301 https://example.com$uri; }
        location ~ ^/captured/(\\w+)/(?<rest>.*)$ { return 200 "first=$1 rest=$2\\n"; }
        location /ws {
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection "upgrade";
            proxy_read_timeout 30s;
            proxy_pass http://127.0.0.1:${upstream.port};
        }
        location / { proxy_pass http://127.0.0.1:${upstream.port}; }
    }
}
`,
    );
    replica = await startReplica(file);
    plain = replica.ports[String(plainPort)]!;
    tls = replica.ports[String(tlsPort)]!;
  });

  after(async () => {
    await stopAll();
    await upstream.close();
    dir.remove();
    pki.remove();
  });

  /** The process runs and answers an ordinary request. */
  async function stillServing(): Promise<void> {
    assert.equal(replica.process.child.exitCode, null, replica.process.output());
    upstream.script = () => OK;
    const answer = await rawExchange(plain, ['GET /alive HTTP/1.1\r\nHost: x\r\n\r\n'], {
      until: (text) => responseCount(text) === 1,
    });
    assert.match(answer.text, /^HTTP\/1\.1 200 OK\r\n/, replica.process.output());
  }

  test('1. a TLS record too short for the ClientHello it announces closes that connection only', async () => {
    const answer = await rawExchange(tls, [Buffer.from([0x16, 0x03, 0x01, 0x00, 0x01, 0x01])], {
      end: true,
    });
    assert.equal(answer.ended, 'closed');
    await stillServing();
    assert.equal(await helloCertificate(tls, 'b.example'), 'b.example');
  });

  test('2. a decoded CR LF in a return URL stays inside the Location header', async () => {
    const answer = await rawExchange(plain, ['GET /redirect/a%0d%0ab HTTP/1.1\r\nHost: x\r\n\r\n'], {
      until: (text) => responseCount(text) === 1,
    });
    const head = answer.text.slice(0, answer.text.indexOf('\r\n\r\n'));
    assert.match(head, /^HTTP\/1\.1 301 Moved Permanently\r\n/);
    assert.match(head, /\r\nlocation: https:\/\/example\.com\/redirect\/a%0D%0Ab\r\n/i);
    assert.doesNotMatch(head, /\r\nb\r\n/);
    await stillServing();
  });

  for (const [name, reason] of [
    ['a control byte', 'O\x01K'],
    ['a bare CR', 'O\rX-Injected: 1'],
  ] as const) {
    test(`3, 7. an upstream reason phrase with ${name} is replaced, on either reader`, async () => {
      upstream.script = () => `HTTP/1.1 200 ${reason}\r\nContent-Length: 3\r\n\r\nup\n`;
      // HTTP/1.0 is read by node:http, HTTP/1.1 by the replica's own reader
      for (const version of ['1.0', '1.1']) {
        const answer = await rawExchange(plain, [`GET /reason HTTP/${version}\r\nHost: x\r\n\r\n`], {
          until: (text) => responseCount(text) === 1,
        });
        const head = answer.text.slice(0, answer.text.indexOf('\r\n\r\n'));
        assert.match(head, /^HTTP\/1\.1 200 OK\r\n/, `HTTP/${version}: ${JSON.stringify(head)}`);
        assert.doesNotMatch(head, /X-Injected/);
        assert.equal(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4), 'up\n');
      }
      await stillServing();
    });
  }

  test('3, 7. a bare LF in an upstream status line ends it, as nginx reads it: what follows is a header line', async () => {
    upstream.script = () => 'HTTP/1.1 200 O\nX-Injected: 1\r\nContent-Length: 3\r\n\r\nup\n';
    for (const version of ['1.0', '1.1']) {
      const answer = await rawExchange(plain, [`GET /reason HTTP/${version}\r\nHost: x\r\n\r\n`], {
        until: (text) => responseCount(text) === 1,
      });
      const head = answer.text.slice(0, answer.text.indexOf('\r\n\r\n'));
      // every line of the head ends in CRLF: the LF did not reach the client alone
      assert.match(head, /^HTTP\/1\.1 200 O\r\n/, `HTTP/${version}: ${JSON.stringify(head)}`);
      assert.equal(head.split('\r\n').filter((line) => line === 'X-Injected: 1').length, 1);
      assert.doesNotMatch(head.replaceAll('\r\n', ''), /[\r\n]/);
      assert.equal(answer.text.slice(answer.text.indexOf('\r\n\r\n') + 4), 'up\n');
    }
    await stillServing();
  });

  test('9. a ClientHello split over two TLS records selects the server its SNI names', async () => {
    assert.equal(await helloCertificate(tls, 'b.example', { splitFirstRecord: true }), 'b.example');
    assert.equal(await helloCertificate(tls, 'a.example', { splitFirstRecord: true }), 'a.example');
  });

  test('10. a request pipelined behind a refusal that closes the connection is not forwarded', async () => {
    const before = upstream.received.length;
    const answer = await rawExchange(plain, [
      'TRACE / HTTP/1.1\r\nHost: x\r\n\r\nGET /behind-trace HTTP/1.1\r\nHost: x\r\n\r\n',
    ]);
    assert.match(answer.text, /^HTTP\/1\.1 405 Not Allowed\r\n/);
    assert.equal(answer.ended, 'closed');
    assert.equal(responseCount(answer.text), 1);
    await stillServing();
    assert.deepEqual(
      upstream.received.slice(before).map((request) => request.split(' ')[1]),
      ['/alive'],
      'only the request after the attack reached the upstream',
    );
  });

  test('10. an HTTP/1.0 request with bytes pipelined behind it is answered, then the connection closes', async () => {
    const answer = await rawExchange(plain, [
      'GET /first HTTP/1.0\r\nHost: x\r\n\r\nGET /behind HTTP/1.1\r\nHost: x\r\n\r\n',
    ]);
    assert.equal(answer.ended, 'closed');
    assert.match(answer.text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.equal(responseCount(answer.text), 1);
    assert.equal(upstream.received.at(-1)?.split(' ')[1], '/first');
  });

  test('10. the captures of a regex location are $1… in its return', async () => {
    const answer = await rawExchange(plain, ['GET /captured/abc/d/e HTTP/1.1\r\nHost: x\r\n\r\n'], {
      until: (text) => responseCount(text) === 1,
    });
    assert.match(answer.text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(answer.text.endsWith('\r\n\r\nfirst=abc rest=d/e\n'), JSON.stringify(answer.text));
  });

  test('10. an upgrade request with a Content-Length body goes out with its body', async () => {
    const answer = await rawExchange(
      plain,
      [
        'GET /ws HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 5\r\n\r\n',
        'hello',
      ],
      { until: (text) => responseCount(text) === 1 },
    );
    assert.equal(answer.ended, 'until', answer.text);
    assert.match(answer.text, /^HTTP\/1\.1 200 OK\r\n/);
    assert.ok(upstream.received.at(-1)!.endsWith('\r\n\r\nhello'), upstream.received.at(-1));
  });
});

/**
 * The CN of the certificate a TLS client asking for `servername` gets; with `splitFirstRecord`, the
 * client's first record (its ClientHello) reaches the replica as two records, through a relay.
 */
async function helloCertificate(
  port: number,
  servername: string,
  options: { splitFirstRecord?: boolean } = {},
): Promise<string> {
  let relay: Server | null = null;
  let target = port;
  if (options.splitFirstRecord === true) {
    relay = await splittingRelay(port);
    target = (relay.address() as AddressInfo).port;
  }
  try {
    return await new Promise<string>((resolve, reject) => {
      const socket = tlsConnect({ port: target, host: '127.0.0.1', servername, rejectUnauthorized: false });
      socket.once('secureConnect', () => {
        const cn = socket.getPeerCertificate().subject.CN;
        socket.destroy();
        resolve((Array.isArray(cn) ? cn[0] : cn) ?? '');
      });
      socket.once('error', reject);
    });
  } finally {
    relay?.close();
  }
}

/** A relay to `port` that cuts the client's first TLS record into two records; the rest passes as is. */
async function splittingRelay(port: number): Promise<Server> {
  const server = createServer((client: Socket) => {
    const upstream = connect(port, '127.0.0.1');
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    let pending: Buffer | null = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      if (pending === null) {
        upstream.write(chunk);
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      if (pending.length < 5) return;
      const recordEnd = 5 + pending.readUInt16BE(3);
      if (pending.length < recordEnd) return;
      const fragment = pending.subarray(5, recordEnd);
      const cut = Math.floor(fragment.length / 2);
      const record = (bytes: Buffer) =>
        Buffer.concat([
          pending!.subarray(0, 3),
          Buffer.from([bytes.length >> 8, bytes.length & 0xff]),
          bytes,
        ]);
      upstream.write(Buffer.concat([record(fragment.subarray(0, cut)), record(fragment.subarray(cut))]));
      upstream.write(pending.subarray(recordEnd));
      pending = null;
    });
    upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}
