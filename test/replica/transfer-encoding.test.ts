/**
 * `Transfer-Encoding` values nginx refuses, side by side with nginx: a coding it does not know is
 * its 501 — `chunked, identity` too, which node:http's parser refuses before the replica reads the
 * head — and a second line, or one beside `Content-Length`, or in an HTTP/1.0 request, a 400.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';

let both: SideBySide;

before(async () => {
  both = await startSideBySide(
    (port) => `
    server {
        listen 127.0.0.1:${port};
        location / { return 200 "TEST\\n"; }
    }`,
  );
});

after(async () => {
  await both?.stop();
});

/** The status line of the answer to a head with `Transfer-Encoding: value` (and an empty chunked body). */
function statusLine(port: number, value: string, version = '1.1'): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1').split('\r\n')[0]!));
    socket.end(
      `GET / HTTP/${version}\r\nHost: localhost\r\nConnection: close\r\nTransfer-Encoding: ${value}\r\n\r\n0\r\n\r\n`,
    );
  });
}

const CASES: readonly [string, string, string?][] = [
  ['identity', 'HTTP/1.1 501 Not Implemented'],
  ['chunked, identity', 'HTTP/1.1 501 Not Implemented'],
  ['gzip, chunked', 'HTTP/1.1 501 Not Implemented'],
  ['chunked\r\nTransfer-Encoding: chunked', 'HTTP/1.1 400 Bad Request'],
  ['chunked\r\nContent-Length: 5', 'HTTP/1.1 400 Bad Request'],
  ['chunked', 'HTTP/1.1 400 Bad Request', '1.0'],
  ['chunked', 'HTTP/1.1 200 OK'],
];

for (const side of ['nginx', 'replica'] as const) {
  describe(`${side}: Transfer-Encoding as nginx reads it`, () => {
    for (const [value, expected, version] of CASES) {
      it(`${JSON.stringify(value)}${version === undefined ? '' : ` in HTTP/${version}`}: ${expected}`, async () => {
        const port = side === 'nginx' ? both.nginxPort : both.replicaPort;
        assert.equal(await statusLine(port, value, version), expected);
      });
    }
  });
}
