import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { foldHeaders } from '../../../src/replica/http/inbound/fold-headers.ts';

/** Every way node:http folds a duplicate line, and fields it folds by default. */
const LINES = [
  ['Host', 'a.example'],
  ['host', 'b.example'],
  ['Cookie', 'a=1'],
  ['cookie', 'b=2'],
  ['Set-Cookie', 'x=1'],
  ['set-cookie', 'y=2'],
  ['Accept', 'text/html'],
  ['ACCEPT', 'text/plain'],
  ['X-Custom', 'one'],
  ['x-custom', 'two'],
  ['Content-Type', 'text/plain'],
  ['content-type', 'text/html'],
  ['User-Agent', 'first'],
  ['User-Agent', 'second'],
  ['Authorization', 'Basic a'],
  ['Authorization', 'Basic b'],
  ['Referer', 'http://a/'],
  ['Referer', 'http://b/'],
  ['If-Modified-Since', 'x'],
  ['if-modified-since', 'y'],
  ['Proxy-Authorization', 'p'],
  ['Proxy-Authorization', 'q'],
  ['Max-Forwards', '1'],
  ['Max-Forwards', '2'],
  ['From', 'a@b'],
  ['From', 'c@d'],
  ['Age', '1'],
  ['Age', '2'],
  ['ETag', '"a"'],
  ['ETag', '"b"'],
  ['Expires', '0'],
  ['Expires', '1'],
  ['Location', '/a'],
  ['Location', '/b'],
  ['Retry-After', '1'],
  ['Retry-After', '2'],
  ['Server', 's1'],
  ['Server', 's2'],
  ['Last-Modified', 'x'],
  ['Last-Modified', 'y'],
  ['If-Unmodified-Since', 'x'],
  ['If-Unmodified-Since', 'y'],
  ['X-Forwarded-For', '10.0.0.1'],
  ['X-Forwarded-For', '10.0.0.2'],
  ['Vary', 'a'],
  ['Vary', 'b'],
  ['Connection', 'keep-alive'],
  ['Connection', 'x-hop'],
];

test('headers of a request the replica reads fold as node:http folds them', async () => {
  let seen: { raw: string[]; folded: IncomingHttpHeaders } | null = null;
  const server = createServer((req, res) => {
    seen = { raw: req.rawHeaders, folded: req.headers };
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const socket = connect(port, '127.0.0.1');
  socket.end(`GET / HTTP/1.1\r\n${LINES.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`);
  socket.resume();
  await once(socket, 'close');
  server.close();
  assert.ok(seen !== null, 'node:http read the request');
  const { raw, folded } = seen as { raw: string[]; folded: IncomingHttpHeaders };
  assert.deepEqual(foldHeaders(raw), { ...folded });
  // the rule is not trivial: some kept first, some joined, cookies joined with "; ", a list
  assert.equal(folded.host, 'a.example');
  assert.equal(folded.cookie, 'a=1; b=2');
  assert.deepEqual(folded['set-cookie'], ['x=1', 'y=2']);
  assert.equal(folded['x-custom'], 'one, two');
});
