/**
 * An HTTP/2 request's `:authority` against real nginx on the same h2c port (prior knowledge): nginx
 * 1.22 reads it as a Host line, so it is validated as one (`..examp-LE.com` is a 400, an upper-case
 * or trailing-dot name is `$host` lowercased without the dot), and a Host field beside it is a
 * second Host line (400). Cases from nginx's own h2_host.t. Not among them: an `:authority` with a
 * character RFC 3986 does not allow there (`example.com/\:552`), which node:http2 (nghttp2) resets
 * as a PROTOCOL_ERROR before the replica sees the stream, where nginx answers 400.
 */
import assert from 'node:assert/strict';
import { connect, type OutgoingHttpHeaders } from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { type SideBySide, startSideBySide } from '../../helpers/side-by-side.ts';

const body = (port: number) => `
    server {
        listen 127.0.0.1:${port} http2;
        server_name localhost;
        location / { return 200 "$host"; }
    }
`;

const CASES: readonly [string, OutgoingHttpHeaders][] = [
  ['lower case', { ':authority': 'l' }],
  ['upper case', { ':authority': 'L' }],
  ['a port', { ':authority': 'abcd-ef.g02.xyz:8080' }],
  ['an empty port', { ':authority': 'abcd-ef.g02.xyz:' }],
  ['a trailing dot and a port', { ':authority': 'abcd-ef.g02.xyz.:88' }],
  ['mixed case with a port', { ':authority': 'AbC-d93.0.34ZhGt-s.nk.Ru:88' }],
  ['an IPv6 literal with a port', { ':authority': '[abcd::ef98:0:7654:321]:80' }],
  ['a double dot', { ':authority': '..examp-LE.com' }],
  ['a lone dot', { ':authority': '.' }],
  ['a Host field beside :authority', { ':authority': 'localhost', host: 'localhost' }],
  ['a Host field alone', { host: 'Other.Example.' }],
];

/** Each case on one h2c session: the status and, for a 200, `$host`. */
async function answers(port: number): Promise<string[]> {
  const session = connect(`http://127.0.0.1:${port}`);
  try {
    const out: string[] = [];
    for (const [name, headers] of CASES) {
      out.push(
        await new Promise<string>((resolve, reject) => {
          const stream = session.request({ ':path': '/', ...headers });
          let status = 0;
          let text = '';
          stream.on('response', (h) => {
            status = Number(h[':status']);
          });
          stream.setEncoding('utf8').on('data', (chunk: string) => {
            text += chunk;
          });
          stream.on('end', () => resolve(`${name}: ${status === 200 ? `200 ${text}` : status}`));
          // a stream the server resets is an answer too (the session stays)
          stream.on('error', (err: Error & { code?: string }) =>
            err.code === 'ERR_HTTP2_STREAM_ERROR' ? resolve(`${name}: reset`) : reject(err),
          );
          stream.end();
        }),
      );
    }
    return out;
  } finally {
    session.close();
  }
}

describe('HTTP/2 :authority and Host, replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body);
  });

  after(() => both?.stop());

  test('the same statuses and $host for every case', async () => {
    const fromNginx = await answers(both.nginxPort);
    assert.ok(fromNginx.includes('a double dot: 400'), fromNginx.join('\n'));
    assert.deepEqual(await answers(both.replicaPort), fromNginx);
  });
});
