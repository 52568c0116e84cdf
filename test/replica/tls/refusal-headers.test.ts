/**
 * The pages nginx answers before it looks for a location — a client certificate missing (496) or
 * failing (495), plain HTTP to a TLS port (497) — carry the server level's `add_header … always`
 * lines, as they come from nginx: the replica and nginx side by side.
 */
import assert from 'node:assert/strict';
import { connect as connectPlain } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connect } from 'node:tls';
import { type SideBySide, startSideBySide } from '../../helpers/side-by-side.ts';
import { TestPki } from '../../helpers/tls-certs.ts';

const pki = new TestPki();
const server = pki.server('server', ['localhost']);
const mallory = pki.client('mallory', '/O=Elsewhere/CN=mallory', 'other');

const body = (port: number) => `
    server {
        listen ${port} ssl;
        server_name localhost;
        ssl_protocols TLSv1.2 TLSv1.3;
        ssl_certificate ${server.cert};
        ssl_certificate_key ${server.key};
        ssl_client_certificate ${pki.ca.cert};
        ssl_verify_client on;
        add_header X-Server "$server_name" always;
        add_header X-Verify "$ssl_client_verify" always;
        location / {
            add_header X-Location "not here" always;
            return 200 "in";
        }
    }`;

/** The status line and the X- lines of the answer. */
function headOf(text: string): string {
  const lines = text.slice(0, text.indexOf('\r\n\r\n')).split('\r\n');
  return [lines[0], ...lines.filter((l) => l.startsWith('X-'))].join('\n');
}

function overTls(port: number, client?: { cert: string; key: string }): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      {
        host: '127.0.0.1',
        port,
        servername: 'localhost',
        rejectUnauthorized: false,
        ...(client === undefined ? {} : { cert: pki.read(client.cert), key: pki.read(client.key) }),
      },
      () => socket.write('GET / HTTP/1.0\r\nHost: localhost\r\n\r\n'),
    );
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('end', () => resolve(headOf(text)));
    socket.on('error', reject);
  });
}

function plain(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectPlain(port, '127.0.0.1', () =>
      socket.write('GET / HTTP/1.0\r\nHost: localhost\r\n\r\n'),
    );
    let text = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('end', () => resolve(headOf(text)));
    socket.on('error', reject);
  });
}

describe('TLS refusal pages and add_header always: replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body);
  });

  after(async () => {
    await both?.stop();
    pki.remove();
  });

  test('no certificate (496)', async () => {
    const expected = await overTls(both.nginxPort);
    assert.equal(expected, 'HTTP/1.1 400 Bad Request\nX-Server: localhost\nX-Verify: NONE');
    assert.equal(await overTls(both.replicaPort), expected);
  });

  test('a certificate another CA signed (495)', async () => {
    const expected = await overTls(both.nginxPort, mallory);
    assert.match(expected, /^HTTP\/1\.1 400 Bad Request\nX-Server: localhost\nX-Verify: FAILED:/);
    assert.equal(await overTls(both.replicaPort, mallory), expected);
  });

  test('plain HTTP to the TLS port (497)', async () => {
    const expected = await plain(both.nginxPort);
    assert.equal(expected, 'HTTP/1.1 400 Bad Request\nX-Server: localhost');
    assert.equal(await plain(both.replicaPort), expected);
  });
});
