/**
 * Files served from disk (`root`, `alias`, `index`, `types`, `default_type`), as nginx's static,
 * index, not_modified and range modules serve them: real nginx and a replica process serve the same
 * files under the same configuration, and each request must get the same status, the same fields
 * that describe the file and the same body (the port in a redirect's `Location` aside).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import { waitFor } from '../helpers/wait-for.ts';

/** More than a loopback connection buffers, so that a client that reads nothing holds the answer. */
const BIG_BYTES = 64 * 1024 * 1024;

const FIELDS = [
  'content-type',
  'content-length',
  'last-modified',
  'etag',
  'accept-ranges',
  'content-range',
  'location',
];

function body(listen: number, files: string): string {
  return `
    limit_req_zone $host zone=once:1m rate=1r/m;
    limit_conn_zone $host zone=conn:1m;
    server {
        listen 127.0.0.1:${listen};
        server_name localhost;
        root ${files}/site;
        default_type application/octet-stream;
        types { text/html html; text/css css; }
        location /pages/ { index first.html second.html; }
        location /img/ { alias ${files}/images/; types { image/png png; } }
        location /nest/ {
            alias ${files}/nested/;
            location /nest/deep/ { index deep.txt; }
        }
        location /plain/ { types { } default_type text/plain; }
        location /limited/ { limit_req zone=once; }
        location /conn/ { limit_conn conn 1; }
        location /back { return 200 "from return"; }
        location /back.css { return 200 "typed by its URI"; }
    }
`;
}

interface Answer {
  readonly status: number;
  readonly fields: Record<string, string | undefined>;
  readonly body: string;
}

function send(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      method,
      path,
      headers: { host: 'localhost', ...headers },
      agent: false,
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const fields: Record<string, string | undefined> = {};
        for (const name of FIELDS) {
          const value = res.headers[name];
          fields[name] = typeof value === 'string' ? value.replace(/:\d+\//, ':PORT/') : undefined;
        }
        let text = Buffer.concat(chunks).toString('latin1');
        // a page's tail names its server (nginx/1.22.1, limitswitch/…): its length differs with it
        const tail = /<hr><center>[^<]*<\/center>/;
        if (tail.test(text)) {
          text = text.replace(tail, '<hr><center>SERVER</center>');
          fields['content-length'] = 'PAGE';
        }
        resolve({ status: res.statusCode!, fields, body: text });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

describe('replica vs nginx: static files', () => {
  const dir = new TempDir();
  const files = dir.path;
  let nginx: RunningNginx;
  let replica: ReplicaRun;
  let replicaPort = 0;
  const put = (path: string, content: string): void => {
    const full = join(files, path);
    mkdirSync(join(full, '..'), { recursive: true });
    writeFileSync(full, content);
    // a fixed time, so that Last-Modified and ETag are known to the requests
    utimesSync(full, 1_700_000_000, 1_700_000_000);
  };

  before(async () => {
    put('site/index.html', '<p>root index</p>');
    put('site/a.html', 'hello, world');
    put('site/s.css', 'body {}');
    put('site/data.bin', '0123456789abcdefghij');
    put('site/pages/second.html', 'second index');
    mkdirSync(join(files, 'site/empty'));
    mkdirSync(join(files, 'site/sub dir'));
    put('images/logo.png', 'PNG');
    put('nested/top.txt', 'top');
    put('nested/deep/deep.txt', 'deep');
    put('site/plain/x.html', 'plain html');
    put('site/limited/index.html', 'limited');
    put('site/conn/big.bin', 'x'.repeat(BIG_BYTES));
    replicaPort = await freePort();
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${body(replicaPort, files)}\n}\n`);
    [nginx, replica] = await Promise.all([
      startNginx({ http: (port) => body(port, files) }),
      startReplica(config, [], { status: false }),
    ]);
  });

  after(async () => {
    await Promise.all([nginx?.stop(), stopAll()]);
    dir.remove();
  });

  const lastModified = new Date(1_700_000_000 * 1000).toUTCString();
  const etag = (size: number): string => `"${(1_700_000_000).toString(16)}-${size.toString(16)}"`;

  const cases: readonly (readonly [string, string, string, Record<string, string>?, number?])[] = [
    ['a file', 'GET', '/a.html', {}, 200],
    ['a type from types', 'GET', '/s.css', {}, 200],
    ['default_type', 'GET', '/data.bin', {}, 200],
    ['HEAD', 'HEAD', '/a.html', {}, 200],
    ['the index', 'GET', '/', {}, 200],
    ['the first index that exists', 'GET', '/pages/', {}, 200],
    ['a directory without its slash', 'GET', '/pages?x=1', {}, 301],
    ['a directory with a space, escaped', 'GET', '/sub%20dir', {}, 301],
    ['a directory without an index', 'GET', '/empty/', {}, 403],
    ['a missing file', 'GET', '/missing.html', {}, 404],
    ['a missing directory', 'GET', '/gone/', {}, 404],
    ['POST to a file', 'POST', '/a.html', {}, 405],
    ['PUT to a file', 'PUT', '/a.html', {}, 405],
    ['DELETE to a directory', 'DELETE', '/empty/', {}, 405],
    ['POST to a missing file', 'POST', '/missing.html', {}, 404],
    ['If-Modified-Since, the same date', 'GET', '/a.html', { 'If-Modified-Since': lastModified }, 304],
    [
      'If-Modified-Since, another date',
      'GET',
      '/a.html',
      { 'If-Modified-Since': 'Sat, 01 Jan 2000 00:00:00 GMT' },
      200,
    ],
    ['If-None-Match', 'GET', '/a.html', { 'If-None-Match': `"x", W/${etag(12)}` }, 304],
    ['If-None-Match, another tag', 'GET', '/a.html', { 'If-None-Match': '"x"' }, 200],
    ['If-Match, another tag', 'GET', '/a.html', { 'If-Match': '"x"' }, 412],
    ['If-Match, the tag', 'GET', '/a.html', { 'If-Match': etag(12) }, 200],
    [
      'If-Unmodified-Since, earlier',
      'GET',
      '/a.html',
      { 'If-Unmodified-Since': 'Sat, 01 Jan 2000 00:00:00 GMT' },
      412,
    ],
    ['a range', 'GET', '/data.bin', { Range: 'bytes=2-5' }, 206],
    ['a suffix range', 'GET', '/data.bin', { Range: 'bytes=-3' }, 206],
    ['an open range', 'GET', '/data.bin', { Range: 'bytes=15-' }, 206],
    ['a range past the end', 'GET', '/data.bin', { Range: 'bytes=30-' }, 416],
    ['a malformed range', 'GET', '/data.bin', { Range: 'bytes=x' }, 416],
    ['ranges larger than the file', 'GET', '/data.bin', { Range: 'bytes=0-15,5-19' }, 200],
    ['If-Range, a stale tag', 'GET', '/data.bin', { Range: 'bytes=2-5', 'If-Range': '"old"' }, 200],
    ['If-Range, the date', 'GET', '/data.bin', { Range: 'bytes=2-5', 'If-Range': lastModified }, 206],
    ['alias', 'GET', '/img/logo.png', {}, 200],
    ['alias, missing', 'GET', '/img/none.png', {}, 404],
    ['a nested location inherits alias', 'GET', '/nest/top.txt', {}, 200],
    ['a nested location, its index under the alias', 'GET', '/nest/deep/', {}, 200],
    ['an empty types block', 'GET', '/plain/x.html', {}, 200],
    // limit_req counts a request once, its index redirect included
    ['an index under limit_req', 'GET', '/limited/', {}, 200],
    ['return: default_type', 'GET', '/back', {}, 200],
    ['return: the type of the URI', 'GET', '/back.css', {}, 200],
  ];

  for (const [name, method, path, headers, status] of cases) {
    test(name, async () => {
      const [fromNginx, fromReplica] = await Promise.all([
        send(nginx.port, method, path, headers),
        send(replica.ports[String(replicaPort)]!, method, path, headers),
      ]);
      assert.equal(fromNginx.status, status, 'nginx');
      assert.deepEqual(fromReplica, fromNginx);
    });
  }

  test('several ranges: a multipart answer of the same length and parts', async () => {
    const range = { Range: 'bytes=0-1,4-6' };
    const [fromNginx, fromReplica] = await Promise.all([
      send(nginx.port, 'GET', '/data.bin', range),
      send(replica.ports[String(replicaPort)]!, 'GET', '/data.bin', range),
    ]);
    assert.equal(fromNginx.status, 206);
    assert.equal(fromReplica.status, 206);
    // the boundary is a counter of each server's own
    const boundless = (a: Answer): string => a.body.replaceAll(/\d{20}/g, 'B');
    assert.equal(boundless(fromReplica), boundless(fromNginx));
    assert.equal(fromReplica.fields['content-length'], fromNginx.fields['content-length']);
    assert.match(fromReplica.fields['content-type']!, /^multipart\/byteranges; boundary=\d{20}$/);
  });

  test('limit_conn: a file being sent holds its slot until its answer ends', async () => {
    for (const port of [nginx.port, replica.ports[String(replicaPort)]!]) {
      const slow = connect(port, '127.0.0.1');
      slow.write('GET /conn/big.bin HTTP/1.1\r\nHost: localhost\r\n\r\n');
      // the answer has begun; nothing is read of it from here on
      await once(slow, 'readable');
      assert.equal((await send(port, 'GET', '/conn/big.bin', { Range: 'bytes=0-0' })).status, 503, `${port}`);
      slow.destroy();
      await waitFor(
        async () => (await send(port, 'GET', '/conn/big.bin', { Range: 'bytes=0-0' })).status === 206,
      );
    }
  });

  test('the files are as the cases expect', () => {
    assert.equal(statSync(join(files, 'site/a.html')).size, 12);
  });
});
