/**
 * Differential: `proxy_pass https://…` and the `proxy_ssl_*` directives against nginx, both proxying to
 * the same TLS backends (node:tls servers that answer with what they saw of the connection): the answer
 * relayed with no SNI and no verification by default; `proxy_ssl_server_name on` sending `$proxy_host`'s
 * name, or `proxy_ssl_name`'s; `proxy_ssl_verify on` passing with the CA that signed the backend's
 * certificate and failing (502, nginx's error-log line) with another CA or another name, and in a
 * group the next server answering for one that fails (its failure counted: nginx's warning); a client
 * certificate a backend requires; `proxy_pass https://` with variables; sessions resumed unless
 * `proxy_ssl_session_reuse off`; an `upstream` block with `keepalive`, whose requests reuse one
 * connection.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import { after, before, describe, test } from 'node:test';
import type { TLSSocket } from 'node:tls';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { TestPki } from '../helpers/tls-certs.ts';

const pki = new TestPki();
const backendCert = pki.server('backend', ['backend.test']);
const clientCert = pki.client('client', '/O=Limitswitch Test/CN=proxy');
/** A certificate the test CA did not sign (and made for clients): no verification passes it. */
const untrustedCert = pki.client('untrusted', '/CN=backend.test', 'other');

/** The backends, one per location: nginx resumes a session saved for a server by any location. */
const BACKENDS = [
  'plain',
  'sni',
  'sniName',
  'verify',
  'otherCa',
  'otherName',
  'clientCert',
  'noClientCert',
  'variables',
  'kept',
  'resumed',
  'noReuse',
  'untrusted',
  'trusted',
] as const;
type BackendName = (typeof BACKENDS)[number];
/** Backends that refuse a client without a certificate signed by the test CA. */
const STRICT: ReadonlySet<BackendName> = new Set(['clientCert', 'noClientCert']);

/**
 * A TLS server that answers with what it saw of the connection: the SNI, the client certificate's CN
 * and whether the session was resumed; each connection numbered as it comes (`x-connection`).
 */
async function startBackend(requireCertificate: boolean, cert = backendCert): Promise<Server> {
  let connections = 0;
  const numbers = new WeakMap<object, number>();
  const server = createServer(
    {
      cert: pki.read(cert.cert),
      key: pki.read(cert.key),
      ca: pki.read(pki.ca.cert),
      requestCert: true,
      rejectUnauthorized: requireCertificate,
    },
    (req, res) => {
      const socket = req.socket as TLSSocket;
      if (!numbers.has(socket)) numbers.set(socket, ++connections);
      const sni = typeof socket.servername === 'string' ? socket.servername : '-';
      const cn = socket.getPeerCertificate()?.subject?.CN ?? '-';
      res.setHeader('x-connection', String(numbers.get(socket)));
      res.end(`uri=${req.url} sni=${sni} client=${cn} resumed=${socket.isSessionReused()}\n`);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

const http = (port: number, b: Record<BackendName, number>) => `
    upstream kept {
        server 127.0.0.1:${b.kept};
        keepalive 4;
    }
    # a connection per request, as nginx makes them without keepalive (the replica keeps them)
    upstream resumed {
        server 127.0.0.1:${b.resumed};
        keepalive_requests 1;
    }
    upstream verified_next {
        server 127.0.0.1:${b.untrusted};
        server 127.0.0.1:${b.trusted};
    }
    upstream not_resumed {
        server 127.0.0.1:${b.noReuse};
        keepalive_requests 1;
    }
    server {
        listen 127.0.0.1:${port};
        location /plain/ { proxy_pass https://127.0.0.1:${b.plain}; }
        location /sni/ {
            proxy_pass https://localhost:${b.sni};
            proxy_ssl_server_name on;
        }
        location /sni-name/ {
            proxy_pass https://127.0.0.1:${b.sniName};
            proxy_ssl_server_name on;
            proxy_ssl_name backend.test;
        }
        location /verify/ {
            proxy_pass https://127.0.0.1:${b.verify};
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate ${pki.ca.cert};
            proxy_ssl_name backend.test;
        }
        location /verify-other-ca/ {
            proxy_pass https://127.0.0.1:${b.otherCa};
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate ${pki.otherCa.cert};
            proxy_ssl_name backend.test;
        }
        location /verify-other-name/ {
            proxy_pass https://127.0.0.1:${b.otherName};
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate ${pki.ca.cert};
            proxy_ssl_name other.test;
        }
        location /client-cert/ {
            proxy_pass https://127.0.0.1:${b.clientCert};
            proxy_ssl_certificate ${clientCert.cert};
            proxy_ssl_certificate_key ${clientCert.key};
        }
        location /no-client-cert/ { proxy_pass https://127.0.0.1:${b.noClientCert}; }
        location /variables/ {
            set $backend 127.0.0.1:${b.variables};
            proxy_pass https://$backend;
        }
        location /kept/ {
            proxy_pass https://kept;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
        location /resumed/ { proxy_pass https://resumed; }
        location /next/ {
            proxy_pass https://verified_next;
            proxy_ssl_verify on;
            proxy_ssl_trusted_certificate ${pki.ca.cert};
            proxy_ssl_name backend.test;
        }
        location /no-reuse/ {
            proxy_pass https://not_resumed;
            proxy_ssl_session_reuse off;
        }
    }
`;

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly connection: string | null;
}

async function get(port: number, path: string): Promise<Answer> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  const body = await res.text();
  return {
    status: res.status,
    body: res.status === 200 ? body : '',
    connection: res.headers.get('x-connection'),
  };
}

/** The error-log lines about upstream TLS of requests for `uri`: their message and request. */
function tlsLines(log: string, uri: string): string[] {
  return log
    .split('\n')
    .filter((line) => /SSL/.test(line) && line.includes(`"GET ${uri} `))
    .map((line) =>
      line
        .replace(/^.*?\[(error|warn)\] \d+#\d+: \*\d+ /, '$1 ')
        .replace(/, client: .*$/, '')
        // OpenSSL 3.2 renamed the alerts' reason texts (`sslv3 alert …` is `ssl/tls alert …`, the
        // same error code): the replica's OpenSSL is Node's, nginx's the system's
        .replace('ssl/tls alert', 'sslv3 alert'),
    );
}

describe('proxy_pass https:// and proxy_ssl_*: the replica connects as nginx does', () => {
  const servers = new Map<BackendName, Server>();
  let both: SideBySide;

  before(async () => {
    const certOf = (name: BackendName) => (name === 'untrusted' ? untrustedCert : backendCert);
    await Promise.all(
      BACKENDS.map(async (name) => servers.set(name, await startBackend(STRICT.has(name), certOf(name)))),
    );
    const ports = Object.fromEntries(BACKENDS.map((name) => [name, portOf(servers.get(name)!)]));
    both = await startSideBySide((port) => http(port, ports as Record<BackendName, number>), {
      replicaArgs: ['--error-log-level', 'info'],
    });
  });

  after(async () => {
    await both?.stop();
    for (const server of servers.values()) server.close();
    pki.remove();
  });

  for (const path of [
    '/plain/x',
    '/sni/x',
    '/sni-name/x',
    '/verify/x',
    '/verify-other-ca/x',
    '/verify-other-name/x',
    '/client-cert/x',
    '/no-client-cert/x',
    '/variables/x',
  ]) {
    test(`GET ${path}`, async () => {
      const [nginx, replica] = await Promise.all([get(both.nginxPort, path), get(both.replicaPort, path)]);
      assert.deepEqual({ ...replica, connection: null }, { ...nginx, connection: null });
    });
  }

  test('proxy_ssl_session_reuse: a new connection resumes the session of the last one, unless off', async () => {
    for (const path of ['/resumed/x', '/no-reuse/x']) {
      for (let i = 0; i < 2; i++) {
        const [nginx, replica] = await Promise.all([get(both.nginxPort, path), get(both.replicaPort, path)]);
        assert.deepEqual({ ...replica, connection: null }, { ...nginx, connection: null }, `${path} #${i}`);
      }
    }
    const body = async (path: string) => (await get(both.replicaPort, path)).body;
    assert.equal(await body('/resumed/x'), 'uri=/resumed/x sni=- client=- resumed=true\n');
    assert.equal(await body('/no-reuse/x'), 'uri=/no-reuse/x sni=- client=- resumed=false\n');
  });

  test('what the backends saw: no SNI by default, $proxy_host or proxy_ssl_name with it on, the client certificate', async () => {
    // the first request's connection, kept by the replica
    const body = async (path: string) =>
      (await get(both.replicaPort, path)).body.replace(' resumed=false', '');
    assert.equal(await body('/plain/x'), 'uri=/plain/x sni=- client=-\n');
    assert.equal(await body('/sni/x'), 'uri=/sni/x sni=localhost client=-\n');
    assert.equal(await body('/sni-name/x'), 'uri=/sni-name/x sni=backend.test client=-\n');
    assert.equal(await body('/verify/x'), 'uri=/verify/x sni=- client=-\n');
    assert.equal(await body('/client-cert/x'), 'uri=/client-cert/x sni=- client=proxy\n');
    assert.equal((await get(both.replicaPort, '/verify-other-ca/z')).status, 502);
    assert.equal((await get(both.replicaPort, '/no-client-cert/z')).status, 502);
  });

  test('a failed verification or handshake is logged in nginx’s words', async () => {
    for (const port of [both.nginxPort, both.replicaPort]) {
      await get(port, '/verify-other-ca/y');
      await get(port, '/verify-other-name/y');
    }
    for (const uri of ['/verify-other-ca/y', '/verify-other-name/y', '/no-client-cert/x']) {
      const nginx = tlsLines(both.nginx.errorLog(), uri);
      assert.ok(nginx.length > 0, uri);
      assert.deepEqual(tlsLines(both.replica.process.stderr, uri), nginx);
    }
  });

  test('a server whose certificate fails verification: the next server answers, the failure logged and counted', async () => {
    const [nginx, replica] = await Promise.all([
      get(both.nginxPort, '/next/x'),
      get(both.replicaPort, '/next/x'),
    ]);
    assert.equal(replica.status, 200);
    assert.deepEqual({ ...replica, connection: null }, { ...nginx, connection: null });
    const lines = tlsLines(both.nginx.errorLog(), '/next/x');
    assert.equal(lines.length, 2, lines.join('\n'));
    assert.deepEqual(tlsLines(both.replica.process.stderr, '/next/x'), lines);
  });

  test('an upstream block with keepalive: the second request reuses the TLS connection', async () => {
    for (const port of [both.nginxPort, both.replicaPort]) {
      const first = await get(port, '/kept/a');
      const second = await get(port, '/kept/b');
      assert.equal(first.status, 200);
      assert.equal(second.connection, first.connection, `port ${port}`);
    }
  });
});
