import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { request } from 'undici';
import { NGINX_CLIENT_TIMERS } from '../../../src/engine/http/client-timers.ts';
import { type Decision, PASS } from '../../../src/replica/http/contract/decision.ts';
import {
  DEFAULT_UPSTREAM_OPTIONS,
  UpstreamGroup,
} from '../../../src/replica/http/upstream/upstream-group.ts';
import { freePort } from '../../helpers/free-port.ts';
import { nginxPage, rawRequest, responseOf, startProxy, startUpstream } from './harness.ts';

/** A TCP server that accepts connections and never answers. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

test('connection refused → 502 with nginx page', async () => {
  const deadPort = await freePort();
  const proxy = await startProxy([{ port: deadPort }], { decide: () => PASS });
  try {
    const out = responseOf(
      await rawRequest(proxy.port, ['GET / HTTP/1.1', 'Host: cafe.example.com', 'Connection: close']),
    );
    assert.equal(out.status, 502);
    assert.equal(out.reason, 'Bad Gateway');
    assert.equal(out.header('content-type'), 'text/html');
    assert.equal(out.body, nginxPage('502 Bad Gateway'));
  } finally {
    await proxy.close();
  }
});

test('no response head within the read timeout → 504 with nginx page', async () => {
  const silent = await silentServer();
  const proxy = await startProxy([{ port: silent.port }], { decide: () => PASS }, { readTimeoutMs: 300 });
  try {
    const out = responseOf(
      await rawRequest(proxy.port, ['GET / HTTP/1.1', 'Host: cafe.example.com', 'Connection: close']),
    );
    assert.equal(out.status, 504);
    assert.equal(out.reason, 'Gateway Time-out');
    assert.equal(out.body, nginxPage('504 Gateway Time-out'));
  } finally {
    await proxy.close();
    await silent.close();
  }
});

test('an upstream that stalls mid-body gets the client connection cut, as nginx does', async () => {
  const upstream = await startUpstream((_req, res) => {
    res.writeHead(200, { 'content-length': '100' });
    res.write('only part');
  });
  const proxy = await startProxy([{ port: upstream.port }], { decide: () => PASS }, { readTimeoutMs: 300 });
  try {
    const res = await request(`http://127.0.0.1:${proxy.port}/`);
    assert.equal(res.statusCode, 200);
    await assert.rejects(res.body.text(), { code: 'UND_ERR_SOCKET' });
  } finally {
    await proxy.close();
    await upstream.close();
  }
});

test('a refused server is skipped: the request goes to the next one, and later ones avoid it', async () => {
  const live = await startUpstream((_req, res) => res.end('live'));
  const deadPort = await freePort();
  const proxy = await startProxy([{ port: deadPort }, { port: live.port }], { decide: () => PASS });
  try {
    for (let i = 0; i < 4; i++) {
      const res = await request(`http://127.0.0.1:${proxy.port}/`);
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), 'live');
    }
    assert.equal(live.requests.length, 4);
    const dead = proxy.upstreams.get('backend')!.peers[0]!;
    assert.equal(dead.fails, 1, 'the refused server failed once: out for fail_timeout');
  } finally {
    await proxy.close();
    await live.close();
  }
});

test('a POST whose connect was refused goes to the next server, body and all', async () => {
  const live = await startUpstream((_req, res) => res.end('live'));
  const deadPort = await freePort();
  const proxy = await startProxy([{ port: deadPort }, { port: live.port }], { decide: () => PASS });
  try {
    // smooth round robin with equal weights starts with the first (dead) server
    const res = await request(`http://127.0.0.1:${proxy.port}/`, { method: 'POST', body: 'payload' });
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), 'live');
    assert.deepEqual(
      live.requests.map((r) => [r.method, r.body]),
      [['POST', 'payload']],
    );
  } finally {
    await proxy.close();
    await live.close();
  }
});

/** A raw server that reads a request head, then does `act` with the connection. */
async function rawServer(act: (socket: Socket) => void): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer((socket) => {
    let head = '';
    socket.on('error', () => {});
    socket.on('data', (chunk: Buffer) => {
      if (head.includes('\r\n\r\n')) return;
      head += chunk.toString('latin1');
      if (head.includes('\r\n\r\n')) act(socket);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A body whose second half comes only after the first server had the request. */
const SLOW = 'slow body';

/** Bodies stream to the server, as with nginx's `proxy_request_buffering off`. */
const STREAMED: Decision = Object.freeze({
  action: 'pass',
  client: { ...NGINX_CLIENT_TIMERS, requestBuffering: false },
});

for (const [what, method, body, decision, status] of [
  ['a GET is tried on the next server', 'GET', undefined, PASS, 200],
  ['a POST is not sent to another server (not idempotent)', 'POST', undefined, PASS, 502],
  [
    'a PUT with a body read whole first is sent again, as nginx resends its buffered body',
    'PUT',
    'payload',
    PASS,
    200,
  ],
  // proxy_request_buffering off reads a body whole with its head as if buffered, as nginx does
  [
    'a PUT whose body came whole with its head is sent again, streaming or not',
    'PUT',
    'payload',
    STREAMED,
    200,
  ],
  ['a PUT with a streamed body is not sent again (what went is gone)', 'PUT', SLOW, STREAMED, 502],
] as const) {
  test(`a server that resets after reading the request: ${what}; it is marked down either way`, async () => {
    let acted = () => {};
    const resetDone = new Promise<void>((resolve) => {
      acted = resolve;
    });
    const reset = await rawServer((socket) => {
      socket.resetAndDestroy();
      acted();
    });
    const live = await startUpstream((_req, res) => res.end('live'));
    const proxy = await startProxy([{ port: reset.port }, { port: live.port }], { decide: () => decision });
    try {
      // a slow body: its second half comes once the first server had the request
      const sent =
        body === SLOW
          ? Readable.from(
              (async function* () {
                yield 'pay';
                await resetDone;
                yield 'load';
              })(),
            )
          : body;
      const res = await request(`http://127.0.0.1:${proxy.port}/`, { method, body: sent });
      assert.equal(res.statusCode, status);
      await res.body.dump();
      assert.equal(live.requests.length, status === 200 ? 1 : 0);
      const first = proxy.upstreams.get('backend')!.peers[0]!;
      assert.equal(first.fails, 1, 'the resetting server failed once: out for fail_timeout');
    } finally {
      await proxy.close();
      await live.close();
      await reset.close();
    }
  });
}

test('a head the proxy rejects counts against the server but is not retried: 502', async () => {
  const garbled = await rawServer((socket) => socket.end('HTTP/1.1 200 OK\r\nBad Header\r\n\r\n'));
  const live = await startUpstream((_req, res) => res.end('live'));
  const proxy = await startProxy([{ port: garbled.port }, { port: live.port }], { decide: () => PASS });
  try {
    const res = await request(`http://127.0.0.1:${proxy.port}/`);
    assert.equal(res.statusCode, 502);
    await res.body.dump();
    assert.equal(live.requests.length, 0);
    assert.equal(proxy.upstreams.get('backend')!.peers[0]!.fails, 1);
  } finally {
    await proxy.close();
    await live.close();
    await garbled.close();
  }
});

test('weighted servers share requests in nginx smooth round-robin order', async () => {
  const a = await startUpstream((_req, res) => res.end('a'));
  const b = await startUpstream((_req, res) => res.end('b'));
  const proxy = await startProxy(
    [
      { port: a.port, weight: 2 },
      { port: b.port, weight: 1 },
    ],
    { decide: () => PASS },
  );
  try {
    const order: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await request(`http://127.0.0.1:${proxy.port}/`);
      order.push(await res.body.text());
    }
    assert.deepEqual(order, ['a', 'b', 'a', 'a', 'b', 'a']);
  } finally {
    await proxy.close();
    await a.close();
    await b.close();
  }
});

test('nginx smooth weighted round robin: weights 5,1,1 give a a b a c a a', async () => {
  const group = new UpstreamGroup(
    'g',
    [
      { host: '127.0.0.1', port: 1, weight: 5 },
      { host: '127.0.0.1', port: 2, weight: 1 },
      { host: '127.0.0.1', port: 3, weight: 1 },
    ],
    {
      ...DEFAULT_UPSTREAM_OPTIONS,
      connectTimeoutMs: 1000,
      readTimeoutMs: 1000,
      sendTimeoutMs: 1000,
      failTimeoutMs: 1000,
    },
  );
  try {
    const names = Array.from({ length: 7 }, () => group.pick()!.origin.slice(-1));
    assert.deepEqual(names, ['1', '1', '2', '1', '3', '1', '1']);
  } finally {
    await group.close();
  }
});
