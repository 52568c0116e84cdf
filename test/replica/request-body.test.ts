/**
 * Request bodies kept as nginx keeps them (`proxy_request_buffering on`), side by side with nginx: in
 * memory while under `client_body_buffer_size` and a quarter (`$request_body`; sizes chosen so that
 * what nginx reads with the head, at most its 1k header buffer, changes nothing), else in a file of
 * `client_body_temp_path` (`$request_body_file`, and `$request_body` empty), unlinked at once; every
 * body in a file under `client_body_in_file_only`, left after the request with `on`, removed with
 * `clean`; a chunked body read whole goes to the server de-chunked, with its Content-Length; a chunked
 * body past `client_max_body_size` is a 413. With `proxy_request_buffering off`, what has come is read
 * first: a body whole by then is kept as if buffered, else what came leaves with the head and the rest
 * streams.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Client } from 'undici';
import { type SideBySide, startSideBySide } from '../helpers/side-by-side.ts';
import { startUpstream, type TestUpstream, type UpstreamRecord } from './http/harness.ts';

const dir = mkdtempSync(join(tmpdir(), 'limitswitch-request-body-'));
let upstream: TestUpstream;
let both: SideBySide;

before(async () => {
  upstream = await startUpstream();
  both = await startSideBySide(
    (port) => `
    server {
        listen 127.0.0.1:${port};
        client_header_buffer_size 1k;
        client_body_buffer_size 1k;
        client_body_temp_path ${dir}/p${port} 1 2;
        add_header X-Body "$request_body";
        add_header X-Body-File "$request_body_file";
        location / { proxy_pass http://127.0.0.1:${upstream.port}; }
        location /only { client_body_in_file_only on; proxy_pass http://127.0.0.1:${upstream.port}; }
        location /clean { client_body_in_file_only clean; proxy_pass http://127.0.0.1:${upstream.port}; }
        location /small { client_max_body_size 100; proxy_pass http://127.0.0.1:${upstream.port}; }
        location /unbuffered { proxy_request_buffering off; proxy_pass http://127.0.0.1:${upstream.port}; }
    }`,
  );
});

after(async () => {
  await both?.stop();
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly body: string | undefined;
  readonly file: string | undefined;
  /** What the server got: its framing and body. */
  readonly sent: { length: unknown; chunked: unknown; body: string } | null;
}

/** One request on `client`: a body as a string (Content-Length) or as pieces (chunked). */
async function send(client: Client, path: string, body: string | string[]): Promise<Answer> {
  const res = await client.request({
    method: 'POST',
    path,
    body: typeof body === 'string' ? body : Readable.from(body),
  });
  const text = await res.body.text();
  const record = res.statusCode === 200 ? (JSON.parse(text) as UpstreamRecord) : null;
  return {
    status: res.statusCode,
    body: res.headers['x-body'] as string | undefined,
    file: res.headers['x-body-file'] as string | undefined,
    sent:
      record === null
        ? null
        : {
            length: record.headers['content-length'],
            chunked: record.headers['transfer-encoding'],
            body: record.body,
          },
  };
}

for (const side of ['nginx', 'replica'] as const) {
  describe(`${side}: request bodies kept as nginx keeps them`, () => {
    let client: Client;
    let port: number;

    before(() => {
      port = side === 'nginx' ? both.nginxPort : both.replicaPort;
      client = new Client(`http://127.0.0.1:${port}`, { pipelining: 0 });
    });

    after(async () => {
      await client?.close();
    });

    it('a body under the buffer and a quarter stays in memory: $request_body', async () => {
      const body = 'x'.repeat(1200);
      const answer = await send(client, '/', body);
      assert.deepEqual(answer, {
        status: 200,
        body,
        file: undefined,
        sent: { length: '1200', chunked: undefined, body },
      });
    });

    it('a larger one goes to a file, unlinked at once: $request_body_file, no $request_body', async () => {
      const body = 'y'.repeat(4000);
      const answer = await send(client, '/', body);
      assert.equal(answer.status, 200);
      assert.equal(answer.body, undefined);
      assert.match(answer.file ?? '', new RegExp(`^${dir}/p${port}/(\\d)/(\\d\\d)/\\d{7}\\2\\1$`));
      assert.equal(existsSync(answer.file!), false);
      assert.deepEqual(answer.sent, { length: '4000', chunked: undefined, body });
    });

    it('a chunked body read whole goes to the server with its Content-Length', async () => {
      const answer = await send(client, '/', ['abc', 'defgh']);
      assert.deepEqual(answer, {
        status: 200,
        body: 'abcdefgh',
        file: undefined,
        sent: { length: '8', chunked: undefined, body: 'abcdefgh' },
      });
      const large = await send(client, '/', ['z'.repeat(2000), 'z'.repeat(2000)]);
      assert.equal(large.body, undefined);
      assert.ok(large.file !== undefined);
      assert.deepEqual(large.sent, { length: '4000', chunked: undefined, body: 'z'.repeat(4000) });
    });

    it('client_body_in_file_only on: every body in a file, left after the request', async () => {
      const answer = await send(client, '/only', '0123456789');
      assert.equal(answer.body, undefined);
      assert.equal(readFileSync(answer.file!, 'latin1'), '0123456789');
      rmSync(answer.file!);
    });

    it('client_body_in_file_only clean: the file is removed once the request is over', async () => {
      const answer = await send(client, '/clean', '0123456789');
      assert.equal(answer.body, undefined);
      assert.ok(answer.file !== undefined);
      // the next request on the connection comes after the first was finalized
      await send(client, '/', 'next');
      assert.equal(existsSync(answer.file!), false);
    });

    it('a chunked body past client_max_body_size is a 413', async () => {
      const answer = await send(client, '/small', ['a'.repeat(60), 'b'.repeat(60)]);
      assert.equal(answer.status, 413);
    });
  });
}

/** A raw request on a connection of its own: `first` in one write, then `rest` once `between` resolves. */
async function rawExchange(
  port: number,
  first: string,
  between?: () => Promise<void>,
  rest = '',
): Promise<string> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const closed = new Promise((resolve) => socket.once('close', resolve));
  socket.write(first);
  if (between !== undefined) {
    await between();
    socket.write(rest);
  }
  await closed;
  return Buffer.concat(chunks).toString('latin1');
}

for (const side of ['nginx', 'replica'] as const) {
  describe(`${side}: proxy_request_buffering off reads what has come, as nginx does`, () => {
    const port = () => (side === 'nginx' ? both.nginxPort : both.replicaPort);
    const head = (length: number) =>
      `POST /unbuffered HTTP/1.1\r\nHost: a\r\nConnection: close\r\nContent-Length: ${length}\r\n\r\n`;

    it('a body whole with its head is read as if buffered: $request_body', async () => {
      const answer = await rawExchange(port(), `${head(10)}0123456789`);
      assert.match(answer, /^HTTP\/1\.1 200 /);
      assert.match(answer, /\r\nX-Body: 0123456789\r\n/);
    });

    it('a body still coming streams: what came leaves with the head, the rest follows; no $request_body', async () => {
      const started = upstream.nextStarted();
      const answer = await rawExchange(
        port(),
        `${head(10)}01234`,
        async () => {
          assert.equal(await upstream.bodyReceived(await started, 5), '01234');
        },
        '56789',
      );
      assert.match(answer, /^HTTP\/1\.1 200 /);
      assert.doesNotMatch(answer, /X-Body:/);
      assert.match(answer, /"body":"0123456789"/);
    });
  });
}
