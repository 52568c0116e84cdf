/**
 * A graceful stop (nginx's QUIT, the replica's SIGTERM) while an HTTP/2-over-TLS client keeps an idle
 * connection open after its request: nginx sends GOAWAY, closes the connection and exits; so must the
 * replica — an idle session may not hold the stop up.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { after, test } from 'node:test';
import { freePort } from '../../helpers/free-port.ts';
import { startReplica, TempDir } from '../../helpers/limitswitch-process.ts';
import { TestPki } from '../../helpers/tls-certs.ts';

const pki = new TestPki();
const cafe = pki.server('cafe', ['cafe.example.com']);
const dir = new TempDir();
after(() => {
  pki.remove();
  dir.remove();
});

test('an idle HTTP/2 client over TLS: the replica says GOAWAY, closes it and exits on a graceful stop', {
  timeout: 30_000,
}, async () => {
  const port = await freePort();
  const config = dir.write(
    'nginx.conf',
    `events {}
http {
    server {
        listen 127.0.0.1:${port} ssl http2;
        server_name cafe.example.com;
        ssl_certificate ${cafe.cert};
        ssl_certificate_key ${cafe.key};
        location / { return 200 "coffee\\n"; }
    }
}
`,
  );
  const replica = await startReplica(config, [], { status: false });
  const session = connect(`https://127.0.0.1:${port}`, {
    servername: 'cafe.example.com',
    rejectUnauthorized: false,
  });
  session.on('error', () => {});
  const goaway = new Promise<number>((resolve) => session.once('goaway', (code: number) => resolve(code)));
  const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
  const text = await new Promise<string>((resolve, reject) => {
    const stream = session.request({ ':path': '/', ':authority': 'cafe.example.com' });
    let body = '';
    stream.setEncoding('utf8').on('data', (chunk: string) => {
      body += chunk;
    });
    stream.on('end', () => resolve(body));
    stream.on('error', reject);
    stream.end();
  });
  assert.equal(text, 'coffee\n');
  // the session stays open and idle: the stop must not wait for the client to leave
  const exit = await replica.process.stop(15_000);
  assert.equal(exit.signal, null, 'the replica needed SIGKILL: the idle session held the stop up');
  assert.equal(exit.code, 0);
  assert.equal(await goaway, 0, 'GOAWAY with NO_ERROR');
  await closed;
});
