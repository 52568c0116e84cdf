/**
 * ngx_http_ssl_module's variables at the replica against real nginx, over the same certificates and
 * configuration: what the client offered (`$ssl_ciphers`, `$ssl_curves`, `$ssl_alpn_protocol`), and
 * the client certificate as nginx prints it — PEM three ways (`$ssl_client_raw_cert`, the tabbed
 * `$ssl_client_cert`, `$ssl_client_escaped_cert`), serial, SHA-1 fingerprint, validity dates and days
 * left, the legacy DNs — for a certificate the CA signed, one it did not (`optional_no_ca`), and none.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { connect } from 'node:tls';
import { type SideBySide, startSideBySide } from '../../helpers/side-by-side.ts';
import { TestPki } from '../../helpers/tls-certs.ts';

const pki = new TestPki();
const server = pki.server('server', ['localhost']);
const alice = pki.client('alice', '/O=Tenant A/CN=alice');
const mallory = pki.client('mallory', '/O=Elsewhere/CN=mallory', 'other');

const VARIABLES = [
  'ssl_protocol',
  'ssl_ciphers',
  'ssl_curves',
  'ssl_alpn_protocol',
  'ssl_early_data',
  'ssl_client_verify',
  'ssl_client_serial',
  'ssl_client_fingerprint',
  'ssl_client_v_start',
  'ssl_client_v_end',
  'ssl_client_v_remain',
  'ssl_client_s_dn_legacy',
  'ssl_client_i_dn_legacy',
  'ssl_client_raw_cert',
  'ssl_client_cert',
  'ssl_client_escaped_cert',
];

const body = (port: number) => `
    server {
        listen ${port} ssl;
        server_name localhost;
        ssl_certificate ${server.cert};
        ssl_certificate_key ${server.key};
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_client_certificate ${pki.ca.cert};
        ssl_verify_client optional_no_ca;
        location / { return 200 "${VARIABLES.map((v) => `${v}=[$${v}]`).join('\\n')}"; }
    }`;

interface Ask {
  readonly client?: { cert: string; key: string };
  readonly alpn?: string[];
  readonly maxVersion?: 'TLSv1.2';
  readonly ciphers?: string;
  readonly ecdhCurve?: string;
}

/** One GET over a connection of its own; the answer's body. */
function get(port: number, ask: Ask): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      {
        host: '127.0.0.1',
        port,
        servername: 'localhost',
        rejectUnauthorized: false,
        ...(ask.client === undefined
          ? {}
          : { cert: pki.read(ask.client.cert), key: pki.read(ask.client.key) }),
        ...(ask.alpn === undefined ? {} : { ALPNProtocols: ask.alpn }),
        ...(ask.maxVersion === undefined ? {} : { maxVersion: ask.maxVersion }),
        ...(ask.ciphers === undefined ? {} : { ciphers: ask.ciphers }),
        ...(ask.ecdhCurve === undefined ? {} : { ecdhCurve: ask.ecdhCurve }),
      },
      () => socket.write('GET / HTTP/1.0\r\nHost: localhost\r\n\r\n'),
    );
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('end', () => resolve(text.slice(text.indexOf('\r\n\r\n') + 4)));
    socket.on('error', reject);
  });
}

const ASKS: Readonly<Record<string, Ask>> = {
  'no certificate, ALPN': { alpn: ['http/1.1'] },
  'the CA signed it': { client: alice },
  'another CA signed it': { client: mallory },
  'TLSv1.2, two ciphers, two groups': {
    client: alice,
    maxVersion: 'TLSv1.2',
    ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA',
    ecdhCurve: 'secp384r1:X25519',
  },
};

describe('TLS variables: replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body);
  });

  after(async () => {
    await both?.stop();
    pki.remove();
  });

  // The certificates expire two days after they are made, to the second: in that first second
  // `$ssl_client_v_remain` is 2, then 1, so two requests a moment apart may straddle it. It is left
  // out of the comparison; the check of the named values below takes either.
  const steady = (text: string) => text.replace(/^ssl_client_v_remain=\[\d+\]$/m, 'ssl_client_v_remain=[…]');

  for (const [name, ask] of Object.entries(ASKS)) {
    test(`${name}: every variable as nginx prints it`, async () => {
      const expected = steady(await get(both.nginxPort, ask));
      assert.equal(steady(await get(both.replicaPort, ask)), expected);
    });
  }

  test('the values are what they are named for', async () => {
    const lines = (await get(both.replicaPort, ASKS['TLSv1.2, two ciphers, two groups']!)).split('\n');
    const value = (name: string) => lines.find((l) => l.startsWith(`${name}=`))!.slice(name.length + 2, -1);
    // the renegotiation SCSV is the test client's OpenSSL's to send (Node.js 20's does, 24's does not)
    assert.match(
      value('ssl_ciphers'),
      /^ECDHE-RSA-AES128-GCM-SHA256:AES256-SHA(:TLS_EMPTY_RENEGOTIATION_INFO_SCSV)?$/,
    );
    assert.equal(value('ssl_curves'), 'secp384r1:X25519');
    assert.equal(value('ssl_client_s_dn_legacy'), '/O=Tenant A/CN=alice');
    assert.match(value('ssl_client_fingerprint'), /^[0-9a-f]{40}$/);
    assert.match(value('ssl_client_v_end'), /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4} GMT$/);
    // whole days left on the request's seconds clock: 1, or 2 within the second the certificate was made
    assert.match(value('ssl_client_v_remain'), /^[12]$/);
    const raw = lines.slice(lines.findIndex((l) => l.startsWith('ssl_client_raw_cert=')));
    assert.match(raw[0]!, /^ssl_client_raw_cert=\[-----BEGIN CERTIFICATE-----$/);
    const tabbed = lines.slice(lines.findIndex((l) => l.startsWith('ssl_client_cert=')));
    assert.match(tabbed[1]!, /^\t[A-Za-z0-9+/]{64}$/);
    assert.match(value('ssl_client_escaped_cert'), /^-----BEGIN%20CERTIFICATE-----%0A/);
  });
});
