/**
 * `large_client_header_buffers` on HTTP/2 against real nginx (h2c with prior knowledge, node:http2's
 * client, which Huffman-codes a field when that is shorter): a name or value longer, encoded, than one
 * buffer, and a header list whose names and values come to more than all of them, end the connection
 * with GOAWAY ENHANCE_YOUR_CALM; just under either is answered. The buffers are the address's default
 * server's, whatever server `:authority` names, or over TLS the server its SNI name selected. Each
 * is logged at `info` in nginx's words.
 */
import assert from 'node:assert/strict';
import { connect, type OutgoingHttpHeaders, type SecureClientSessionOptions } from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { TestPki } from '../helpers/tls-certs.ts';
import { waitFor } from '../helpers/wait-for.ts';

const body = (port: number) => `
    server {
        listen 127.0.0.1:${port} http2;
        server_name localhost;
        large_client_header_buffers 4 512;
        location / { return 200 "default\\n"; }
    }
    server {
        listen 127.0.0.1:${port} http2;
        server_name big;
        large_client_header_buffers 4 8k;
        location / { return 200 "big\\n"; }
    }
`;

const pki = new TestPki();
const cert = pki.server('h2', ['localhost', 'big']);

const tlsBody = (port: number) => `
    ssl_certificate ${cert.cert};
    ssl_certificate_key ${cert.key};
    server {
        listen 127.0.0.1:${port} ssl http2;
        server_name localhost;
        large_client_header_buffers 4 512;
        location / { return 200 "default\\n"; }
    }
    server {
        listen 127.0.0.1:${port} ssl http2;
        server_name big;
        large_client_header_buffers 4 8k;
        location / { return 200 "big\\n"; }
    }
`;

/** `:method GET`, `:path /`, `:scheme http`, `:authority localhost`: 46 bytes of the list. */
const PSEUDO: OutgoingHttpHeaders = { ':path': '/', ':authority': 'localhost' };

/** Fields `x-0`… with values of the given lengths (each field 3 bytes more). */
function fields(...valueBytes: number[]): OutgoingHttpHeaders {
  return Object.fromEntries(valueBytes.map((n, i) => [`x-${i}`, 'v'.repeat(n)]));
}

/** Fields of 3 bytes (`a-b`, empty) and one shorter, `bytes` in all: more than node:http2's default 128. */
function shortFields(bytes: number): OutgoingHttpHeaders {
  const names: string[] = [];
  for (let i = 0; names.length * 3 < bytes - (bytes % 3); i++) names.push(`${letter(i / 26)}-${letter(i)}`);
  if (bytes % 3 !== 0) names.push('z'.repeat(bytes % 3));
  return Object.fromEntries(names.map((name) => [name, '']));
}

function letter(n: number): string {
  return String.fromCharCode(97 + (Math.floor(n) % 26));
}

const CASES: readonly Case[] = [
  // 'x' is 7 bits in Huffman code: 585 of them are 512 bytes, 586 are 513
  ['a value of 512 bytes', { ...PSEUDO, 'x-long': 'x'.repeat(512) }],
  ['a value Huffman-coded to 512 bytes', { ...PSEUDO, 'x-long': 'x'.repeat(585) }],
  ['a value Huffman-coded to 513 bytes', { ...PSEUDO, 'x-long': 'x'.repeat(586) }],
  // '{' is 15 bits: sent raw
  ['a raw value of 512 bytes', { ...PSEUDO, 'x-long': '{'.repeat(512) }],
  ['a raw value of 513 bytes', { ...PSEUDO, 'x-long': '{'.repeat(513) }],
  ['a name of 512 bytes', { ...PSEUDO, [`x-${'~'.repeat(510)}`]: 'v' }],
  ['a name of 513 bytes', { ...PSEUDO, [`x-${'~'.repeat(511)}`]: 'v' }],
  ['a list of 2048 bytes', { ...PSEUDO, ...fields(497, 497, 497, 499) }],
  ['a list of 2049 bytes', { ...PSEUDO, ...fields(497, 497, 497, 500) }],
  ['a list of 2048 bytes in short fields', { ...PSEUDO, ...shortFields(2048 - 46) }],
  ['a list of 2049 bytes in short fields', { ...PSEUDO, ...shortFields(2049 - 46) }],
  [
    'a long value to the server with larger buffers',
    { ...PSEUDO, ':authority': 'big', 'x-long': '{'.repeat(600) },
  ],
  ['a short one to it', { ...PSEUDO, ':authority': 'big', 'x-long': '{'.repeat(500) }],
];

/** The error log's lines about header blocks too large, without time, pid and connection numbers. */
function tooLargeLines(log: string): string[] {
  return log
    .split('\n')
    .filter((line) => line.includes('too large'))
    .map((line) => line.replace(/^\S+ \S+ \[(\w+)\] \d+#\d+: \*\d+ (.*), client: .*$/, '$1 $2'));
}

type Case = readonly [string, OutgoingHttpHeaders, SecureClientSessionOptions?];

const TLS_CASES: readonly Case[] = [
  ['SNI big, :authority localhost', { ...PSEUDO, 'x-long': '{'.repeat(600) }, { servername: 'big' }],
  ['SNI localhost, :authority big', { ...PSEUDO, ':authority': 'big', 'x-long': '{'.repeat(600) }, {}],
  [
    'no SNI, :authority big',
    { ...PSEUDO, ':authority': 'big', 'x-long': '{'.repeat(600) },
    { servername: '' },
  ],
];

/** Each case on a session of its own: the status and body, or the GOAWAY that ended the session. */
async function answers(origin: string, cases: readonly Case[] = CASES): Promise<string[]> {
  const out: string[] = [];
  for (const [name, headers, tls] of cases) {
    const session = connect(origin, { servername: 'localhost', ...tls, rejectUnauthorized: false });
    try {
      out.push(
        await new Promise<string>((resolve, reject) => {
          let goaway = '';
          session.on('goaway', (code, lastStreamId) => {
            goaway = `GOAWAY ${code}, last stream ${lastStreamId}`;
          });
          session.on('error', () => {});
          const stream = session.request(headers);
          let answer = '';
          stream.on('response', (h) => {
            answer = String(h[':status']);
          });
          stream.setEncoding('utf8').on('data', (chunk: string) => {
            answer += ` ${chunk.trim()}`;
          });
          // a GOAWAY may be read after the stream it ended closed: the session's end says
          stream.on('close', () => {
            if (answer !== '') resolve(`${name}: ${answer}`);
            else if (session.closed) resolve(`${name}: ${goaway || 'nothing'}`);
            else session.on('close', () => resolve(`${name}: ${goaway || 'nothing'}`));
          });
          stream.on('error', (err: Error & { code?: string }) => {
            if (err.code !== 'ERR_HTTP2_SESSION_ERROR' && err.code !== 'ERR_HTTP2_STREAM_ERROR') reject(err);
          });
          stream.end();
        }),
      );
    } finally {
      session.destroy();
    }
  }
  return out;
}

describe('HTTP/2 header size limits (large_client_header_buffers), replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(body, { replicaArgs: ['--error-log-level', 'info'] });
  });

  after(() => both?.stop());

  test('the same answer or GOAWAY for every case', { timeout: 60_000 }, async () => {
    const fromNginx = await answers(`http://127.0.0.1:${both.nginxPort}`);
    assert.ok(fromNginx.includes('a list of 2049 bytes: GOAWAY 11, last stream 1'), fromNginx.join('\n'));
    assert.ok(fromNginx.includes('a list of 2048 bytes: 200 default'), fromNginx.join('\n'));
    assert.deepEqual(await answers(`http://127.0.0.1:${both.replicaPort}`), fromNginx);
  });

  test('the same error-log lines, in order', async () => {
    const expected = tooLargeLines(both.nginx.errorLog());
    assert.equal(expected.length, 6, expected.join('\n'));
    // the replica's error log comes through a pipe: wait for its lines to arrive
    await waitFor(() => tooLargeLines(both.replica.process.stderr).length >= expected.length, {
      message: 'the replica to log as many lines',
    }).catch(() => undefined);
    assert.deepEqual(tooLargeLines(both.replica.process.stderr), expected);
  });

  test('a request sent right after the one too large on its session is not answered either', async () => {
    const fromNginx = await twoAtOnce(`http://127.0.0.1:${both.nginxPort}`);
    assert.equal(fromNginx[0], 'stream 1: GOAWAY 11, last stream 1');
    assert.deepEqual(await twoAtOnce(`http://127.0.0.1:${both.replicaPort}`), fromNginx);
  });
});

/** A header list too large and a good request written together: how each of the two streams ends. */
async function twoAtOnce(origin: string): Promise<string[]> {
  const session = connect(origin);
  session.on('error', () => {});
  let goaway = '';
  session.on('goaway', (code, lastStreamId) => {
    goaway = `GOAWAY ${code}, last stream ${lastStreamId}`;
  });
  const ended = (headers: OutgoingHttpHeaders) =>
    new Promise<string>((resolve) => {
      const stream = session.request(headers);
      let status = '';
      stream.on('response', (h) => {
        status = String(h[':status']);
      });
      stream.on('error', () => {});
      stream.resume();
      stream.on('close', () => {
        const answer = (): void => resolve(`stream ${stream.id}: ${status || goaway || 'nothing'}`);
        if (status !== '' || session.closed) answer();
        else session.once('close', answer);
      });
      stream.end();
    });
  try {
    return await Promise.all([ended({ ...PSEUDO, ...fields(497, 497, 497, 500) }), ended(PSEUDO)]);
  } finally {
    session.destroy();
  }
}

describe('HTTP/2 header size limits over TLS: the SNI name selects the buffers, replica vs nginx', () => {
  let both: SideBySide;

  before(async () => {
    both = await startSideBySide(tlsBody);
  });

  after(async () => {
    await both?.stop();
    pki.remove();
  });

  test('the same answer or GOAWAY for every case', { timeout: 60_000 }, async () => {
    const fromNginx = await answers(`https://127.0.0.1:${both.nginxPort}`, TLS_CASES);
    assert.deepEqual(fromNginx, [
      'SNI big, :authority localhost: 200 default',
      'SNI localhost, :authority big: GOAWAY 11, last stream 1',
      'no SNI, :authority big: GOAWAY 11, last stream 1',
    ]);
    assert.deepEqual(await answers(`https://127.0.0.1:${both.replicaPort}`, TLS_CASES), fromNginx);
  });
});
