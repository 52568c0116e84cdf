/**
 * HTTP/1.1 read and written by the replica itself (http1-connection.ts) against node:http, which it
 * stands in for: the same handler behind both, the same bytes sent to each, and what comes back —
 * the response bytes (Date aside), the request and its body as the handler sees them — must be the
 * same. Heads it does not read itself go to node:http with the connection, mid-stream, without a
 * byte lost.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer as createHttpServer, IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Http1Connection, type Http1Host } from '../../../src/replica/http/inbound/http1-connection.ts';
import { readOwnHead } from '../../../src/replica/http/inbound/own-request-head.ts';

/** What a scripted response does: the calls the exchange makes, in its order. */
type Script = (res: ServerResponse) => void;

const SCRIPTS: Record<string, Script> = {
  length: (res) => {
    res.writeHead(200, 'OK', ['content-type', 'text/plain', 'content-length', '5']);
    res.end('hello');
  },
  chunked: (res) => {
    res.writeHead(200, 'OK', ['content-type', 'text/plain']);
    res.write(Buffer.from('he'));
    res.end(Buffer.from('llo'));
  },
  empty: (res) => {
    res.writeHead(200, 'OK', ['content-type', 'text/plain']);
    res.end();
  },
  'no-content': (res) => {
    res.writeHead(204, 'No Content', ['x-a', 'b']);
    res.end();
  },
  'not-modified': (res) => {
    res.writeHead(304, 'Not Modified', ['etag', '"x"']);
    res.end(Buffer.from('ignored'));
  },
  close: (res) => {
    res.shouldKeepAlive = false;
    res.writeHead(503, 'Service Temporarily Unavailable', ['content-length', '3']);
    res.end('bye');
  },
  'close-chunked': (res) => {
    res.shouldKeepAlive = false;
    res.writeHead(200, 'OK', []);
    res.end('unsized');
  },
  'own-date-and-connection': (res) => {
    res.writeHead(200, 'OK', [
      'Date',
      'Mon, 01 Jan 2024 00:00:00 GMT',
      'Connection',
      'close',
      'content-length',
      '2',
    ]);
    res.end('ok');
  },
  'utf8-text': (res) => {
    res.writeHead(200, 'OK', ['content-type', 'text/plain']);
    res.end('café');
  },
};

/** The request as a handler sees it. */
function seen(req: IncomingMessage): unknown {
  return {
    method: req.method,
    url: req.url,
    httpVersion: req.httpVersion,
    rawHeaders: req.rawHeaders,
    headers: { ...req.headers },
  };
}

interface Served {
  readonly byPlain: boolean;
  readonly request: unknown;
}

let nodePort = 0;
let plainPort = 0;
const served: Served[] = [];
/** Responses whose request body the client cut off (the host's `bodyCut`). */
const cut: unknown[] = [];
const closers: (() => void)[] = [];
/** Every socket of the test, either end: destroyed at the end, so none keeps the process alive. */
const sockets = new Set<Socket>();
function tracked(socket: Socket): Socket {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
  return socket;
}

function handler(req: IncomingMessage, res: ServerResponse): void {
  served.push({ byPlain: !(req instanceof IncomingMessage), request: seen(req) });
  const name = (req.url ?? '/').split('?')[0]!.slice(1);
  const script = SCRIPTS[name];
  if (script !== undefined) {
    script(res);
    return;
  }
  // a body node:http reads: echoed back with its length
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    res.writeHead(200, 'OK', ['content-length', `${body.length}`]);
    res.end(body);
  });
}

before(async () => {
  const nodeServer = createHttpServer({ requireHostHeader: false }, handler);
  nodeServer.keepAliveTimeout = 75_000;
  nodeServer.listen(0, '127.0.0.1');
  await once(nodeServer, 'listening');
  nodePort = (nodeServer.address() as AddressInfo).port;
  // the plain listener hands over to a second node:http server that never listens itself
  const fallback = createHttpServer({ requireHostHeader: false }, handler);
  fallback.keepAliveTimeout = 75_000;
  const connections = new Set<Http1Connection>();
  const host: Http1Host = {
    keepAliveTimeoutMs: 75_000,
    headersTimeoutMs: 60_000,
    closing: false,
    maxHeadBytes: () => 16 * 1024,
    request: (req, res) => handler(req as unknown as IncomingMessage, res as unknown as ServerResponse),
    bodyCut: (res) => {
      cut.push(res);
      res.destroy();
    },
    handOver: (socket) => fallback.emit('connection', socket),
    released: (connection) => connections.delete(connection),
  };
  nodeServer.on('connection', tracked);
  const plain = createNetServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    connections.add(new Http1Connection(tracked(socket), host));
  });
  plain.listen(0, '127.0.0.1');
  await once(plain, 'listening');
  plainPort = (plain.address() as AddressInfo).port;
  closers.push(
    () => nodeServer.close(),
    () => nodeServer.closeAllConnections(),
    () => plain.close(),
    () => fallback.closeAllConnections(),
    () => {
      for (const c of connections) c.socket.destroy();
    },
  );
});

after(() => {
  for (const close of closers) close();
  for (const socket of sockets) socket.destroy();
});

/**
 * Sends `bytes` (in pieces, one write each, a turn of the event loop apart) and reads until the
 * server closes or `responses` answers have arrived (counted by their status lines).
 */
async function exchange(port: number, pieces: readonly string[], responses: number): Promise<string> {
  const socket: Socket = tracked(connect(port, '127.0.0.1'));
  await once(socket, 'connect');
  let text = '';
  const done = new Promise<void>((resolve) => {
    const check = () => {
      if (complete(text, responses)) resolve();
    };
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      check();
    });
    socket.on('close', () => resolve());
  });
  for (const piece of pieces) {
    socket.write(piece, 'latin1');
    await new Promise((r) => setTimeout(r, 20));
  }
  await done;
  socket.destroy();
  return oneChunkPerBody(text.replace(/Date: [^\r]*\r\n/g, 'Date: <now>\r\n'));
}

/**
 * Chunked bodies with their data in one chunk: where the chunks fall is not part of what is compared
 * (node:http 22+ sends a `write` and the `end` that follows it in the same turn as one chunk, 20 as two).
 */
function oneChunkPerBody(text: string): string {
  let out = '';
  let at = 0;
  for (let headEnd = text.indexOf('\r\n\r\n'); headEnd !== -1; headEnd = text.indexOf('\r\n\r\n', at)) {
    const head = text.slice(at, headEnd + 4);
    out += head;
    at = headEnd + 4;
    const length = /content-length: (\d+)/i.exec(head);
    if (length !== null) {
      out += text.slice(at, at + Number(length[1]));
      at += Number(length[1]);
      continue;
    }
    if (!/transfer-encoding: chunked/i.test(head)) continue;
    let data = '';
    let size = -1;
    while (size !== 0) {
      const lineEnd = text.indexOf('\r\n', at);
      size = lineEnd === -1 ? Number.NaN : Number.parseInt(text.slice(at, lineEnd), 16);
      if (Number.isNaN(size)) return out + text.slice(at);
      data += text.slice(lineEnd + 2, lineEnd + 2 + size);
      at = lineEnd + 4 + size;
    }
    out += data === '' ? '0\r\n\r\n' : `${data.length.toString(16)}\r\n${data}\r\n0\r\n\r\n`;
  }
  return out + text.slice(at);
}

/** `count` whole responses are in `text` (bodies framed by length or chunked; no body when neither). */
function complete(text: string, count: number): boolean {
  let at = 0;
  for (let n = 0; n < count; n++) {
    const headEnd = text.indexOf('\r\n\r\n', at);
    if (headEnd === -1) return false;
    const head = text.slice(at, headEnd);
    let end = headEnd + 4;
    const length = /content-length: (\d+)/i.exec(head);
    if (length !== null) end += Number(length[1]);
    else if (/transfer-encoding: chunked/i.test(head)) {
      const last = text.indexOf('0\r\n\r\n', end);
      if (last === -1) return false;
      end = last + 5;
    }
    if (text.length < end) return false;
    at = end;
  }
  return true;
}

async function both(
  pieces: readonly string[],
  responses = 1,
): Promise<{ node: string; plain: string; plainServed: Served[] }> {
  served.length = 0;
  const node = await exchange(nodePort, pieces, responses);
  served.length = 0;
  const plain = await exchange(plainPort, pieces, responses);
  return { node, plain, plainServed: [...served] };
}

describe('HTTP/1.1 read by the replica itself, against node:http', () => {
  for (const name of Object.keys(SCRIPTS)) {
    for (const method of ['GET', 'HEAD']) {
      test(`${method} /${name}: the same response bytes`, async () => {
        const { node, plain, plainServed } = await both([`${method} /${name} HTTP/1.1\r\nHost: a\r\n\r\n`]);
        assert.equal(plainServed[0]?.byPlain, true, 'read by the replica');
        assert.equal(plain, node);
      });
    }
  }

  test('Connection: close from the client: the same answer, and the connection ends', async () => {
    const { node, plain, plainServed } = await both([
      'GET /length HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n',
    ]);
    assert.equal(plainServed[0]?.byPlain, true);
    assert.match(plain, /Connection: close/);
    assert.equal(plain, node);
  });

  test('the request as the handler sees it: line, raw headers, folded headers', async () => {
    const head =
      'GET /length?q=1&r=%20 HTTP/1.1\r\nHost: a\r\nhost: b\r\nX-A: 1\r\nx-a:   2\r\nCookie: c=1\r\ncookie: d=2\r\n' +
      'Set-Cookie: s\r\nAccept: x\r\nACCEPT: y\r\nContent-Type: t\r\ncontent-type: u\r\nContent-Length: 0\r\n\r\n';
    served.length = 0;
    await exchange(nodePort, [head], 1);
    const byNode = served[0]!;
    served.length = 0;
    await exchange(plainPort, [head], 1);
    const byPlain = served[0]!;
    assert.equal(byNode.byPlain, false);
    assert.equal(byPlain.byPlain, true);
    assert.deepEqual(byPlain.request, byNode.request);
  });

  test('pipelined: read here, a chunked body handed to node:http mid-stream, and what follows it answered there', async () => {
    const pieces = [
      'GET /length HTTP/1.1\r\nHost: a\r\n\r\n' +
        'POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nbody\r\n0\r\n\r\n' +
        'GET /chunked HTTP/1.1\r\nHost: a\r\n\r\n',
    ];
    const { node, plain, plainServed } = await both(pieces, 3);
    assert.equal(plain, node);
    assert.deepEqual(
      plainServed.map((s) => s.byPlain),
      [true, false, false],
    );
    assert.match(plain, /\r\n\r\nbody/);
  });

  test('a body by Content-Length, in pieces across reads: read here, the same bytes echoed', async () => {
    const body = 'x'.repeat(50_000);
    const pieces = [
      `POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
      body.slice(10, 30_000),
      `${body.slice(30_000)}GET /length HTTP/1.1\r\nHost: a\r\n\r\n`,
    ];
    const { node, plain, plainServed } = await both(pieces, 2);
    assert.deepEqual(
      plainServed.map((s) => s.byPlain),
      [true, true],
    );
    assert.ok(plain.includes(body));
    assert.equal(plain, node);
  });

  test('a body nobody reads is dropped after the answer, and the next request follows it', async () => {
    const pieces = [
      'POST /length HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\n\r\nab',
      'cdefGET /chunked HTTP/1.1\r\nHost: a\r\n\r\n',
    ];
    const { node, plain, plainServed } = await both(pieces, 2);
    assert.deepEqual(
      plainServed.map((s) => s.byPlain),
      [true, true],
    );
    assert.equal(plain, node);
  });

  test('a client that closes its side within a body: the host hears of it, nothing is answered', async () => {
    cut.length = 0;
    served.length = 0;
    const socket = tracked(connect(plainPort, '127.0.0.1'));
    await once(socket, 'connect');
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
    });
    socket.end('POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 10\r\n\r\nshort');
    await once(socket, 'close');
    assert.equal(served[0]?.byPlain, true);
    assert.equal(cut.length, 1);
    assert.equal(text, '');
  });

  test('a head cut across two reads goes to node:http whole', async () => {
    const { node, plain, plainServed } = await both(['GET /length HTTP/1.1\r\nHo', 'st: a\r\n\r\n']);
    assert.equal(plain, node);
    assert.deepEqual(
      plainServed.map((s) => s.byPlain),
      [false],
    );
  });

  test('keep-alive: requests one after another on one connection are all read here', async () => {
    const socket = tracked(connect(plainPort, '127.0.0.1'));
    await once(socket, 'connect');
    served.length = 0;
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
    });
    for (let n = 1; n <= 3; n++) {
      socket.write(`GET /length HTTP/1.1\r\nHost: a\r\n\r\n`);
      while (!complete(text, n)) await once(socket, 'data');
    }
    socket.destroy();
    assert.deepEqual(
      served.map((s) => s.byPlain),
      [true, true, true],
    );
  });

  test('a malformed head gets node:http answer', async () => {
    const { node, plain, plainServed } = await both(['GET / HTTP/1.1\r\nBad Header\r\n\r\n']);
    assert.equal(plainServed.length, 0);
    assert.match(plain, /^HTTP\/1\.1 400 /);
    assert.equal(plain, node);
  });
});

describe('the heads read here (readOwnHead)', () => {
  test('a plain GET is read: method, target, headers as sent, keep-alive', () => {
    assert.deepEqual(readOwnHead('GET /a?b=c HTTP/1.1\r\nHost: x\r\nAccept:  */*'), {
      method: 'GET',
      url: '/a?b=c',
      rawHeaders: ['Host', 'x', 'Accept', '*/*'],
      keepAlive: true,
      contentLength: 0,
    });
    // no value (`User-Agent: `): an empty one, as llhttp hands it over
    assert.deepEqual(readOwnHead('GET / HTTP/1.1\r\nX-A:\r\nUser-Agent: ')?.rawHeaders, [
      'X-A',
      '',
      'User-Agent',
      '',
    ]);
    assert.equal(readOwnHead('GET / HTTP/1.1\r\nConnection: Close')?.keepAlive, false);
    assert.equal(readOwnHead('POST / HTTP/1.1\r\nContent-Length: 0')?.contentLength, 0);
    assert.equal(readOwnHead('POST / HTTP/1.1\r\nContent-Length: 12')?.contentLength, 12);
  });

  const handedOn: Record<string, string> = {
    'HTTP/1.0': 'GET / HTTP/1.0\r\nHost: x',
    'a signed length': 'POST / HTTP/1.1\r\nContent-Length: +3',
    'a length past 2^53': 'POST / HTTP/1.1\r\nContent-Length: 9007199254740993',
    'a chunked body': 'POST / HTTP/1.1\r\nTransfer-Encoding: chunked',
    Expect: 'POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 0',
    'an upgrade': 'GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade',
    'another Connection token': 'GET / HTTP/1.1\r\nConnection: keep-alive, te',
    'two Content-Length lines': 'GET / HTTP/1.1\r\nContent-Length: 0\r\nContent-Length: 0',
    'obs-fold': 'GET / HTTP/1.1\r\nX-A: 1\r\n 2',
    'a tab in a value': 'GET / HTTP/1.1\r\nX-A: 1\t2',
    'trailing space': 'GET / HTTP/1.1\r\nX-A: 1 ',
    'a byte past ASCII': 'GET / HTTP/1.1\r\nX-A: caf\u00e9',
    'a bare LF': 'GET / HTTP/1.1\nHost: x',
    'an absolute target': 'GET http://x/ HTTP/1.1\r\nHost: x',
    'a fragment': 'GET /a#b HTTP/1.1\r\nHost: x',
    'a space in the name': 'GET / HTTP/1.1\r\nX A: 1',
    'an unknown method': 'PURGE / HTTP/1.1\r\nHost: x',
    CONNECT: 'CONNECT x:443 HTTP/1.1\r\nHost: x',
  };
  for (const [what, head] of Object.entries(handedOn)) {
    test(`${what}: left to node:http`, () => {
      assert.equal(readOwnHead(head), null);
    });
  }
});
