/**
 * HTTP/2 through a replica with Node's http2 client: streams multiplexed on one connection are
 * limited one request each, as nginx's limit_req decides per stream, and the counters say exactly what
 * the client saw. The h2 request reaches an HTTP/1.1 upstream as one (Host from `:authority`, a body
 * without a length forwarded), and a plain `listen … http2` port takes h2c with prior knowledge and
 * HTTP/1.1 side by side.
 */
import assert from 'node:assert/strict';
import { type ClientHttp2Session, connect } from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import {
  freePorts,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../../helpers/limitswitch-process.ts';
import { TestPki } from '../../helpers/tls-certs.ts';
import { getOfferingSession } from '../../helpers/tls-client.ts';
import { startUpstream, type TestUpstream } from '../http/harness.ts';

const pki = new TestPki();
const cafe = pki.server('cafe', ['cafe.example.com']);

function h2Get(
  session: ClientHttp2Session,
  path: string,
  body?: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ':method': body === undefined ? 'GET' : 'POST' });
    let status = 0;
    let text = '';
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
    });
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      text += chunk;
    });
    stream.on('end', () => resolve({ status, text }));
    stream.on('error', reject);
    if (body === undefined) stream.end();
    else {
      // two DATA frames, no content-length
      stream.write(body.slice(0, 3));
      setImmediate(() => stream.end(body.slice(3)));
    }
  });
}

describe('HTTP/2 at the replica', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let replica: ReplicaRun;
  let tlsPort: number;
  let plainPort: number;

  before(async () => {
    upstream = await startUpstream();
    const [tls, plain] = await freePorts(2);
    const file = dir.write(
      'nginx.conf',
      `events {}
http {
    limit_req_zone $binary_remote_addr zone=streams:1m rate=1r/m;
    server {
        listen ${tls} ssl http2;
        server_name cafe.example.com;
        ssl_certificate ${cafe.cert};
        ssl_certificate_key ${cafe.key};
        location /coffee { limit_req zone=streams burst=2 nodelay; proxy_pass http://127.0.0.1:${upstream.port}; }
        location /echo {
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_pass http://127.0.0.1:${upstream.port};
        }
        location /vars { return 200 "[$http2] $server_protocol [$ssl_session_id]\\n"; }
    }
    server {
        listen ${plain} http2;
        location / { return 200 "$server_protocol $scheme [$http2]\\n"; }
    }
}
`,
    );
    replica = await startReplica(file);
    tlsPort = replica.ports[String(tls)]!;
    plainPort = replica.ports[String(plain)]!;
  });

  after(async () => {
    await stopAll();
    await upstream?.close();
    dir.remove();
    pki.remove();
  });

  test('ten multiplexed streams: burst 2 lets three pass, seven are rejected, the counters agree', async () => {
    const session = connect(`https://127.0.0.1:${tlsPort}`, {
      ca: pki.read(pki.ca.cert),
      servername: 'cafe.example.com',
    });
    try {
      const answers = await Promise.all(Array.from({ length: 10 }, () => h2Get(session, '/coffee')));
      assert.equal(session.alpnProtocol, 'h2');
      const statuses = answers.map((a) => a.status).sort();
      assert.deepEqual(statuses, [200, 200, 200, 503, 503, 503, 503, 503, 503, 503]);
    } finally {
      session.close();
    }
    const zone = (await (
      await request(`${replica.statusUrl}/api/9/http/limit_reqs/streams`)
    ).body.json()) as Record<string, number>;
    assert.equal(zone.passed, 3);
    assert.equal(zone.rejected, 7);
    assert.equal(zone.delayed, 0);
  });

  test('an h2 request reaches the upstream as HTTP/1.1: Host from :authority, a body without a length', async () => {
    const session = connect(`https://127.0.0.1:${tlsPort}`, {
      ca: pki.read(pki.ca.cert),
      servername: 'cafe.example.com',
    });
    try {
      const answer = await h2Get(session, '/echo?x=1', 'hello, h2');
      assert.equal(answer.status, 200);
      const seen = JSON.parse(answer.text) as {
        method: string;
        url: string;
        headers: Record<string, string>;
        body: string;
      };
      assert.equal(seen.method, 'POST');
      assert.equal(seen.url, '/echo?x=1');
      // node:http2 sends the TLS server name as :authority
      assert.equal(seen.headers.host, `cafe.example.com:${tlsPort}`);
      assert.equal(seen.headers['x-forwarded-proto'], 'https');
      assert.equal(seen.body, 'hello, h2');
      assert.equal(
        Object.keys(seen.headers).some((name) => name.startsWith(':')),
        false,
      );
    } finally {
      session.close();
    }
  });

  test('$http2 is h2 over TLS, empty for HTTP/1.1; $ssl_session_id is the session ID in hex', async () => {
    const session = connect(`https://127.0.0.1:${tlsPort}`, {
      ca: pki.read(pki.ca.cert),
      servername: 'cafe.example.com',
    });
    try {
      const h2 = await h2Get(session, '/vars');
      // nginx-tests (ssl.t): 64 hex digits, or none for a TLSv1.3 session not yet given an ID
      assert.match(h2.text, /^\[h2\] HTTP\/2\.0 \[([0-9a-f]{64})?\]\n$/);
    } finally {
      session.close();
    }
    // a new TLSv1.2 session given a ticket has no ID (OpenSSL sends none with the ticket); resumed, it
    // has the one the client offered it with (nginx-tests ssl.t: "session id", "session id reused")
    const h1 = await getOfferingSession(tlsPort, 'TLSv1.2', undefined, '/vars', 'cafe.example.com');
    assert.match(h1.body, /^\[\] HTTP\/1\.0 \[([0-9a-f]{64})?\]\n$/);
    const again = await getOfferingSession(tlsPort, 'TLSv1.2', h1.session!, '/vars', 'cafe.example.com');
    assert.match(again.body, /^\[\] HTTP\/1\.0 \[[0-9a-f]{64}\]\n$/);
  });

  test('a plain http2 port: h2c with prior knowledge and HTTP/1.1 on the same port', async () => {
    const session = connect(`http://127.0.0.1:${plainPort}`);
    try {
      assert.deepEqual(await h2Get(session, '/'), { status: 200, text: 'HTTP/2.0 http [h2c]\n' });
    } finally {
      session.close();
    }
    const h1 = await request(`http://127.0.0.1:${plainPort}/`);
    assert.equal(await h1.body.text(), 'HTTP/1.1 http []\n');
  });
});
