/**
 * TLS at the replica against real nginx, with the same certificates (made with openssl in the test)
 * and the same configuration: SNI picks the server and its certificate (the default server's without
 * SNI or for an unknown name, the right one of two key types), `ssl_protocols` and `ssl_ciphers`
 * refuse what they do not allow, client certificates are verified as `ssl_verify_client` says
 * (on / optional / optional_no_ca: 496, 495, `$ssl_client_verify`; a server without certificates
 * of its own, SNI-picked, verifies on the default server's handshake), a `Host` other than the
 * negotiated name at a verifying server is 421, plain HTTP to the TLS port is 497, and a limit keyed
 * by `$ssl_client_s_dn` limits each client certificate apart. Same statuses, same bodies.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { freePort, freePorts } from '../../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../../helpers/nginx.ts';
import { TestPki } from '../../helpers/tls-certs.ts';
import { type TlsAnswer, type TlsRequest, tlsGet } from '../../helpers/tls-client.ts';
import { startUpstream, type TestUpstream } from '../http/harness.ts';

const pki = new TestPki();
const a = pki.server('a', ['a.example.com']);
const bRsa = pki.server('b-rsa', ['b.example.com']);
const bEc = pki.server('b-ec', ['b.example.com'], 'ec');
const m = pki.server('m', ['mtls.example.com', 'optional.example.com', 'noca.example.com']);
const alice = pki.client('alice', '/O=Tenant A/CN=alice');
const bob = pki.client('bob', '/O=Tenant B/CN=bob');
const mallory = pki.client('mallory', '/O=Elsewhere/CN=mallory', 'other');

function body(main: number, legacy: number, upstream: number): string {
  const mtls = (name: string, mode: string) => `
    server {
        listen ${main} ssl;
        server_name ${name};
        ssl_certificate ${m.cert};
        ssl_certificate_key ${m.key};
        ssl_client_certificate ${pki.ca.cert};
        ssl_verify_client ${mode};
        location / { return 200 "${mode} $ssl_client_verify [$ssl_client_s_dn] [$ssl_client_i_dn]\\n"; }
        location /limited { limit_req zone=tenant nodelay; proxy_pass http://127.0.0.1:${upstream}; }
    }`;
  return `
    limit_req_zone $ssl_client_s_dn zone=tenant:1m rate=1r/m;
    server {
        listen ${main} ssl default_server;
        server_name a.example.com;
        ssl_certificate ${a.cert};
        ssl_certificate_key ${a.key};
        ssl_protocols TLSv1.3;
        location / { return 200 "a $ssl_protocol sni=[$ssl_server_name] $scheme $https\\n"; }
    }
    server {
        listen ${main} ssl;
        server_name b.example.com;
        ssl_certificate ${bRsa.cert};
        ssl_certificate_key ${bRsa.key};
        ssl_certificate ${bEc.cert};
        ssl_certificate_key ${bEc.key};
        location / { return 200 "b $ssl_server_name\\n"; }
    }
    server {
        listen ${main} ssl;
        server_name nocert.example.com;
        ssl_verify_client on;
        location / { return 200 "nocert $ssl_server_name\\n"; }
    }
    server {
        listen ${main} ssl;
        server_name nocert-off.example.com;
        location / { return 200 "nocert-off $ssl_server_name $ssl_client_verify\\n"; }
    }
${mtls('mtls.example.com', 'on')}
${mtls('optional.example.com', 'optional')}
${mtls('noca.example.com', 'optional_no_ca')}
    server {
        listen ${legacy} ssl;
        ssl_certificate ${a.cert};
        ssl_certificate_key ${a.key};
        ssl_protocols TLSv1.2;
        ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256;
        ssl_prefer_server_ciphers on;
        location / { return 200 "legacy $ssl_protocol $ssl_cipher\\n"; }
    }
`;
}

const pem = (files: { cert: string; key: string }) => ({
  cert: pki.read(files.cert),
  key: pki.read(files.key),
});

/** Each case: a name, the port (main or legacy) and the request. Run in order (the limit counts). */
const CASES: readonly [string, 'main' | 'legacy', TlsRequest][] = [
  ['SNI a', 'main', { servername: 'a.example.com' }],
  ['SNI b (RSA offered)', 'main', { servername: 'b.example.com', sigalgs: 'rsa_pss_rsae_sha256' }],
  ['SNI b (ECDSA offered)', 'main', { servername: 'b.example.com', sigalgs: 'ecdsa_secp256r1_sha256' }],
  ['no SNI: the default server', 'main', {}],
  ['an unknown SNI name: the default server', 'main', { servername: 'unknown.example.com' }],
  [
    'TLSv1.2 where the default server allows TLSv1.3 only',
    'main',
    { servername: 'b.example.com', maxVersion: 'TLSv1.2' },
  ],
  ['TLSv1.3 where the address allows TLSv1.2 only', 'legacy', { minVersion: 'TLSv1.3' }],
  ['TLSv1.2 and the allowed cipher', 'legacy', { maxVersion: 'TLSv1.2' }],
  [
    'TLSv1.2 and only a cipher not allowed',
    'legacy',
    { maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES256-GCM-SHA384' },
  ],
  [
    'SNI of a server without certificates: the default server makes the handshake',
    'main',
    { servername: 'nocert-off.example.com' },
  ],
  [
    'SNI of a server without certificates, verify on (no CA: nothing to check it by): 496',
    'main',
    { servername: 'nocert.example.com' },
  ],
  ['verify on, no certificate: 496', 'main', { servername: 'mtls.example.com' }],
  ['verify on, the CA signed it', 'main', { servername: 'mtls.example.com', ...pem(alice) }],
  ['verify on, another CA signed it: 495', 'main', { servername: 'mtls.example.com', ...pem(mallory) }],
  ['verify optional, no certificate', 'main', { servername: 'optional.example.com' }],
  ['verify optional, another CA: 495', 'main', { servername: 'optional.example.com', ...pem(mallory) }],
  [
    'verify optional_no_ca, another CA: passes as FAILED',
    'main',
    { servername: 'noca.example.com', ...pem(mallory) },
  ],
  [
    'Host other than the SNI name at a verifying server: 421',
    'main',
    { servername: 'a.example.com', host: 'mtls.example.com' },
  ],
  ['limit by client DN: alice', 'main', { servername: 'mtls.example.com', path: '/limited', ...pem(alice) }],
  [
    'limit by client DN: alice again',
    'main',
    { servername: 'mtls.example.com', path: '/limited', ...pem(alice) },
  ],
  ['limit by client DN: bob', 'main', { servername: 'mtls.example.com', path: '/limited', ...pem(bob) }],
  [
    'limit by client DN: no certificate (optional, not accounted)',
    'main',
    { servername: 'optional.example.com', path: '/limited' },
  ],
  [
    'limit by client DN: no certificate again',
    'main',
    { servername: 'optional.example.com', path: '/limited' },
  ],
];

/** What the comparison looks at: status and body, or that the handshake failed (not why). */
function seen(answer: TlsAnswer): string {
  if ('error' in answer) return 'handshake refused';
  const text =
    answer.status === 200 ? answer.body.trim() : `${answer.body.match(/<title>(.*)<\/title>/)?.[1]}`;
  return `${answer.status} cn=${answer.serverCn} ${answer.keyType} ${answer.protocol}: ${text}`;
}

async function runCases(main: number, legacy: number): Promise<string[]> {
  const out: string[] = [];
  for (const [name, port, req] of CASES)
    out.push(`${name} → ${seen(await tlsGet(port === 'main' ? main : legacy, req))}`);
  return out;
}

/** Plain HTTP to the TLS port: the status line nginx answers with. */
function plainStatus(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () =>
      socket.write('GET / HTTP/1.1\r\nHost: a.example.com\r\n\r\n'),
    );
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('end', () => resolve(text.split('\r\n')[0]!));
    socket.on('error', reject);
  });
}

describe('TLS: replica vs nginx with the same certificates', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let nginxLegacy: number;
  let ports: [number, number];

  before(async () => {
    upstream = await startUpstream((_req, res) => res.end('upstream\n'));
    nginxLegacy = await freePort();
    nginx = await startNginx({
      http: (port) => {
        // the main port is picked after the legacy one was let go: the same port again would make one
        // address of both servers (the legacy one a name-based second server); another port is tried
        if (port === nginxLegacy) throw new Error('Address already in use: the legacy port');
        return body(port, nginxLegacy, upstream.port);
      },
    });
    const [main, legacy] = await freePorts(2);
    ports = [main!, legacy!];
    const file = dir.write(
      'nginx.conf',
      `events {}\nhttp {\n${body(ports[0], ports[1], upstream.port)}\n}\n`,
    );
    replica = await startReplica(file, [], { status: false });
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll(), upstream?.close()]);
    dir.remove();
    pki.remove();
  });

  test('every case answers as nginx answers it', async () => {
    const fromNginx = await runCases(nginx.port, nginxLegacy);
    const fromReplica = await runCases(replica.ports[String(ports[0])]!, replica.ports[String(ports[1])]!);
    assert.deepEqual(fromReplica, fromNginx);
    // and the cases show what they are named for
    const by = (name: string) => fromNginx.find((line) => line.startsWith(`${name} →`))!;
    assert.match(
      by('SNI a'),
      /200 cn=a\.example\.com rsa TLSv1\.3: a TLSv1\.3 sni=\[a\.example\.com\] https on/,
    );
    assert.match(by('no SNI: the default server'), /200 cn=a\.example\.com .*sni=\[\] https on/);
    assert.match(by('SNI b (RSA offered)'), /200 cn=b\.example\.com rsa TLSv1\.3/);
    assert.match(by('SNI b (ECDSA offered)'), /200 cn=b\.example\.com ec TLSv1\.3/);
    assert.match(by('TLSv1.2 where the default server allows TLSv1.3 only'), /handshake refused/);
    assert.match(by('TLSv1.2 and only a cipher not allowed'), /handshake refused/);
    assert.match(by('TLSv1.2 and the allowed cipher'), /legacy TLSv1\.2 ECDHE-RSA-AES128-GCM-SHA256/);
    assert.match(by('verify on, no certificate: 496'), /400 .*No required SSL certificate was sent/);
    assert.match(
      by('verify on, the CA signed it'),
      /on SUCCESS \[CN=alice,O=Tenant A\] \[CN=Test CA,O=Limitswitch Test\]/,
    );
    assert.match(by('verify on, another CA signed it: 495'), /400 .*The SSL certificate error/);
    assert.match(by('verify optional, no certificate'), /optional NONE \[\]/);
    assert.match(by('verify optional_no_ca, another CA: passes as FAILED'), /optional_no_ca FAILED:/);
    assert.match(by('Host other than the SNI name at a verifying server: 421'), /^.* → 421 /);
    assert.match(by('limit by client DN: alice'), / → 200 .*: upstream$/);
    assert.match(by('limit by client DN: alice again'), / → 503 /);
    assert.match(by('limit by client DN: bob'), / → 200 /);
    assert.match(by('limit by client DN: no certificate again'), / → 200 /);
  });

  test('plain HTTP to the TLS port gets the 497 page, as from nginx', async () => {
    const expected = await plainStatus(nginx.port);
    assert.equal(expected, 'HTTP/1.1 400 Bad Request');
    assert.equal(await plainStatus(replica.ports[String(ports[0])]!), expected);
  });
});
