/**
 * Upgrade requests (WebSocket) on the data path, against a real upgrading upstream: the tunnel echoes
 * both ways; decisions apply as to any request (reject page, 444, delay, 499 while held); a location
 * that does not tunnel gets a plain request; a non-101 answer is relayed; connect failures give 502
 * or fail over; a location's connect and read timeouts give 504 and nginx's error-log words; silence
 * past proxy_read_timeout and a graceful close end tunnels.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Decision } from '../../../src/replica/http/contract/decision.ts';
import type { UpstreamError } from '../../../src/replica/http/contract/exchange-events.ts';
import { freePort } from '../../helpers/free-port.ts';
import { startFullBacklogListener } from '../../helpers/full-backlog-listener.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { nginxPage, startProxy, type TestProxy, type UpstreamRecord } from './harness.ts';
import {
  answerOf,
  closed,
  echo,
  openUpgrade,
  readBytes,
  receivedText,
  startUpgradeUpstream,
  tunnelOf,
  type UpgradeUpstream,
} from './upgrade-harness.ts';

const REJECT: Decision = { action: 'reject', code: 503 };
const CLOSE: Decision = { action: 'reject', code: 444 };

/**
 * The decision for a path: `/reject…`, `/close…`, `/delay…` (300 ms), `/idle…` and `/stall…` (read
 * timeout 200 ms).
 */
function decide(url: string | undefined): Decision {
  if (url?.startsWith('/reject')) return REJECT;
  if (url?.startsWith('/close')) return CLOSE;
  if (url?.startsWith('/delay')) return { action: 'delay', delayMs: 300 };
  if (url?.startsWith('/idle') || url?.startsWith('/stall')) return { action: 'pass', readTimeoutMs: 200 };
  return { action: 'pass' };
}

describe('data path: upgrade requests', () => {
  let upstream: UpgradeUpstream;
  let proxy: TestProxy<Decision>;
  const decided: string[] = [];
  const clientClosed: { url: string; phase: string }[] = [];

  before(async () => {
    upstream = await startUpgradeUpstream();
    proxy = await startProxy<Decision>([{ port: upstream.port }], {
      decide: (ctx) => {
        decided.push(ctx.req.url ?? '');
        return decide(ctx.req.url);
      },
      canUpgrade: (ctx) => !ctx.req.url?.startsWith('/plain'),
      onClientClosed: (ctx, _decision, phase) => clientClosed.push({ url: ctx.req.url ?? '', phase }),
    });
  });

  after(async () => {
    await proxy?.close();
    await upstream?.close();
  });

  test("a 101 is relayed and the tunnel echoes both ways; the upstream saw Upgrade, nginx's default Host", async () => {
    const tunnel = tunnelOf(
      await openUpgrade(proxy.port, '/chat?room=1', {
        'x-forwarded-for': '203.0.113.7',
        'sec-websocket-key': 'k',
      }),
    );
    assert.equal(tunnel.res.statusCode, 101);
    assert.equal(tunnel.res.statusMessage, 'Switching Protocols');
    assert.equal(tunnel.res.headers.upgrade, 'websocket');
    assert.equal(tunnel.res.headers.connection, 'upgrade');
    assert.equal(tunnel.res.headers['sec-websocket-accept'], 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
    // the upstream's Server is not relayed: the proxy's own goes out, as nginx's does
    assert.match(String(tunnel.res.headers.server), /^limitswitch\/\d/);
    assert.equal(tunnel.res.headers['x-pad'], undefined);
    assert.match(tunnel.res.headers.date ?? '', /GMT$/);
    assert.equal(await echo(tunnel.socket, 'hello'), 'hello');
    assert.equal(await echo(tunnel.socket, 'x'.repeat(200_000)), 'x'.repeat(200_000));

    const seen = upstream.upgrades.at(-1)!;
    assert.equal(seen.url, '/chat?room=1');
    assert.equal(seen.headers.upgrade, 'websocket');
    assert.equal(seen.headers.connection, 'upgrade');
    // `$proxy_host`: the group's name (no proxy_set_header line here)
    assert.equal(seen.headers.host, 'backend');
    assert.equal(seen.headers['sec-websocket-key'], 'k');
    // the client's line as sent; nothing else X-Forwarded-* is added
    assert.equal(seen.headers['x-forwarded-for'], '203.0.113.7');
    assert.equal(seen.headers['x-forwarded-proto'], undefined);
    assert.equal(seen.headers['x-forwarded-host'], undefined);
    tunnel.socket.end();
    await closed(tunnel.socket);
  });

  test('bytes the upstream sends right behind its 101, and bytes the client sends early, get through', async () => {
    const pushed = tunnelOf(await openUpgrade(proxy.port, '/push'));
    assert.equal(await readBytes(pushed.socket, 'welcome'.length, pushed.head), 'welcome');
    pushed.socket.destroy();

    const socket = connect(proxy.port, '127.0.0.1');
    const received = receivedText(socket);
    socket.write(
      'GET /early HTTP/1.1\r\nHost: cafe.example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nfirst frame',
    );
    await received.until('first frame');
    assert.match(received.text, /^HTTP\/1\.1 101 Switching Protocols\r\n[\s\S]*\r\n\r\nfirst frame$/);
    socket.destroy();
  });

  test('a rejected upgrade gets the status page and never reaches the upstream; 444 closes', async () => {
    const before = upstream.upgrades.length;
    const rejected = answerOf(await openUpgrade(proxy.port, '/reject'));
    assert.equal(rejected.status, 503);
    assert.equal(rejected.body, nginxPage('503 Service Temporarily Unavailable'));
    assert.equal(rejected.headers.connection, 'close');
    assert.deepEqual(await openUpgrade(proxy.port, '/close'), { kind: 'closed' });
    assert.equal(upstream.upgrades.length, before);
  });

  test('a delayed upgrade is held, then tunnelled', async () => {
    const startMs = performance.now();
    const tunnel = tunnelOf(await openUpgrade(proxy.port, '/delay'));
    assert.ok(performance.now() - startMs >= 290, 'held for the delay first');
    assert.equal(await echo(tunnel.socket, 'after the delay'), 'after the delay');
    tunnel.socket.destroy();
  });

  test('a client that leaves while held is reported (499) and nothing goes upstream', async () => {
    const before = upstream.upgrades.length;
    const socket = connect(proxy.port, '127.0.0.1');
    socket.write('GET /delay/gone HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    await waitFor(() => decided.includes('/delay/gone'), { message: 'the decision' });
    socket.end();
    await closed(socket);
    await waitFor(() => clientClosed.some((c) => c.url === '/delay/gone'), { message: 'the 499' });
    assert.deepEqual(
      clientClosed.find((c) => c.url === '/delay/gone'),
      { url: '/delay/gone', phase: 'delay' },
    );
    assert.equal(upstream.upgrades.length, before);
  });

  test('a client that resets its connection while held is a 499; the listener keeps serving', async () => {
    const socket = connect(proxy.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write('GET /delay/reset HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n');
    await waitFor(() => decided.includes('/delay/reset'), { message: 'the decision' });
    socket.resetAndDestroy();
    await waitFor(() => clientClosed.some((c) => c.url === '/delay/reset'), { message: 'the 499' });
    const tunnel = tunnelOf(await openUpgrade(proxy.port, '/after-reset'));
    assert.equal(await echo(tunnel.socket, 'alive'), 'alive');
    tunnel.socket.destroy();
  });

  test('an upstream answer other than 101 is relayed as a response', async () => {
    const refused = answerOf(await openUpgrade(proxy.port, '/refuse'));
    assert.equal(refused.status, 403);
    assert.equal(refused.body, 'refused');
    assert.equal(refused.headers['content-type'], 'text/plain');
  });

  test('a location that does not tunnel: a plain request upstream (no Upgrade), body and keep-alive kept', async () => {
    const socket = connect(proxy.port, '127.0.0.1');
    const received = receivedText(socket);
    socket.write(
      'POST /plain/ws HTTP/1.1\r\nHost: cafe.example.com\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
        'Content-Length: 5\r\n\r\nhello',
    );
    await received.until('"body":"hello"}');
    // the same connection serves the next request
    socket.write('GET /plain/next HTTP/1.1\r\nHost: cafe.example.com\r\nConnection: close\r\n\r\n');
    await received.closed;
    assert.equal(received.text.match(/HTTP\/1\.1 200 OK\r\n/g)?.length, 2);
    const [first, second] = upstream.plain.slice(-2) as [UpstreamRecord, UpstreamRecord];
    assert.equal(first.url, '/plain/ws');
    assert.equal(first.method, 'POST');
    assert.equal(first.body, 'hello');
    assert.equal(first.headers.upgrade, undefined);
    assert.equal(first.headers.connection, 'keep-alive');
    assert.equal(first.headers['x-forwarded-for'], undefined);
    assert.equal(second.url, '/plain/next');
  });

  test('an upstream silent past proxy_read_timeout before its answer: 504 with nginx page', async () => {
    const startMs = performance.now();
    const answer = answerOf(await openUpgrade(proxy.port, '/stall'));
    assert.equal(answer.status, 504);
    assert.equal(answer.body, nginxPage('504 Gateway Time-out'));
    assert.ok(performance.now() - startMs >= 180, 'after the read timeout');
  });

  test('past proxy_read_timeout without a byte either way, the tunnel is closed', async () => {
    const tunnel = tunnelOf(await openUpgrade(proxy.port, '/idle'));
    assert.equal(await echo(tunnel.socket, 'ping'), 'ping');
    const quietSinceMs = performance.now();
    await closed(tunnel.socket);
    const quietMs = performance.now() - quietSinceMs;
    assert.ok(quietMs >= 180, `closed after ${quietMs} ms of silence`);
  });
});

describe('data path: upgrade failures and failover', () => {
  let upstream: UpgradeUpstream;
  let deadPort: number;

  before(async () => {
    upstream = await startUpgradeUpstream();
    deadPort = await freePort();
  });

  after(async () => {
    await upstream?.close();
  });

  test('connection refused by the only server: 502 with nginx page', async () => {
    const proxy = await startProxy<Decision>([{ port: deadPort }], {
      decide: () => ({ action: 'pass' }),
      canUpgrade: () => true,
    });
    try {
      const answer = answerOf(await openUpgrade(proxy.port, '/ws'));
      assert.equal(answer.status, 502);
      assert.equal(answer.body, nginxPage('502 Bad Gateway'));
    } finally {
      await proxy.close();
    }
  });

  /** nginx's error-log line without the request context. */
  const logged = (error: UpstreamError) => `[${error.level}] ${error.message}, upstream: "${error.upstream}"`;

  test("a location's proxy_connect_timeout bounds the connect: 504, logged in nginx's words", async () => {
    const blackhole = await startFullBacklogListener();
    const errors: string[] = [];
    const proxy = await startProxy<Decision>([{ port: blackhole.port }], {
      decide: () => ({ action: 'pass', connectTimeoutMs: 300 }),
      canUpgrade: () => true,
      onUpstreamError: (_ctx, _decision, error) => errors.push(logged(error)),
    });
    try {
      const startMs = performance.now();
      const answer = answerOf(await openUpgrade(proxy.port, '/ws'));
      const elapsedMs = performance.now() - startMs;
      assert.equal(answer.status, 504);
      assert.equal(answer.body, nginxPage('504 Gateway Time-out'));
      // The listener's own connect timeout is 60 s.
      assert.ok(elapsedMs >= 290 && elapsedMs < 5000, `answered after ${elapsedMs.toFixed(0)} ms`);
      assert.deepEqual(errors, [
        `[error] upstream timed out (110: Connection timed out) while connecting to upstream, upstream: "http://127.0.0.1:${blackhole.port}/ws"`,
      ]);
    } finally {
      await proxy.close();
      await blackhole.close();
    }
  });

  test("a read timeout and a refused connection are logged in nginx's words", async () => {
    const errors: string[] = [];
    const proxy = await startProxy<Decision>([{ port: upstream.port }], {
      decide: () => ({ action: 'pass', readTimeoutMs: 200 }),
      canUpgrade: () => true,
      onUpstreamError: (_ctx, _decision, error) => errors.push(logged(error)),
    });
    const refused = await startProxy<Decision>([{ port: deadPort }], {
      decide: () => ({ action: 'pass' }),
      canUpgrade: () => true,
      onUpstreamError: (_ctx, _decision, error) => errors.push(logged(error)),
    });
    try {
      assert.equal(answerOf(await openUpgrade(proxy.port, '/stall')).status, 504);
      assert.equal(answerOf(await openUpgrade(refused.port, '/ws')).status, 502);
      assert.deepEqual(errors, [
        `[error] upstream timed out (110: Connection timed out) while reading response header from upstream, upstream: "http://127.0.0.1:${upstream.port}/stall"`,
        `[error] connect() failed (111: Connection refused) while connecting to upstream, upstream: "http://127.0.0.1:${deadPort}/ws"`,
      ]);
    } finally {
      await proxy.close();
      await refused.close();
    }
  });

  test('round robin and failover as for other requests: a refused server is skipped', async () => {
    const proxy = await startProxy<Decision>([{ port: deadPort }, { port: upstream.port }], {
      decide: () => ({ action: 'pass' }),
      canUpgrade: () => true,
    });
    try {
      const before = upstream.upgrades.length;
      for (const path of ['/one', '/two', '/three']) {
        const tunnel = tunnelOf(await openUpgrade(proxy.port, path));
        assert.equal(await echo(tunnel.socket, path), path);
        tunnel.socket.destroy();
      }
      assert.deepEqual(
        upstream.upgrades.slice(before).map((r) => r.url),
        ['/one', '/two', '/three'],
      );
    } finally {
      await proxy.close();
    }
  });

  test('without canUpgrade, an upgrade request is a plain request', async () => {
    const proxy = await startProxy<Decision>([{ port: upstream.port }], {
      decide: () => ({ action: 'pass' }),
    });
    try {
      const answer = answerOf(await openUpgrade(proxy.port, '/no-hook'));
      assert.equal(answer.status, 200);
      const record = JSON.parse(answer.body) as UpstreamRecord;
      assert.equal(record.url, '/no-hook');
      assert.equal(record.headers.upgrade, undefined);
    } finally {
      await proxy.close();
    }
  });
});

describe('data path: graceful close with open tunnels', () => {
  test('close() ends open tunnels at once (both sides) and resolves; held requests still finish', async () => {
    const upstream = await startUpgradeUpstream();
    const proxy = await startProxy<Decision>([{ port: upstream.port }], {
      decide: (ctx) => decide(ctx.req.url),
      canUpgrade: () => true,
    });
    try {
      const upstreamSide = upstream.nextTunnel();
      const tunnel = tunnelOf(await openUpgrade(proxy.port, '/ws'));
      assert.equal(await echo(tunnel.socket, 'open'), 'open');
      const upstreamSocket = await upstreamSide;
      const upstreamEnded = new Promise<void>((resolve) => upstreamSocket.once('end', () => resolve()));
      assert.equal(proxy.proxy.tunnels, 1);

      const held = openUpgrade(proxy.port, '/delay/while-closing');
      await waitFor(() => proxy.proxy.held === 1, { message: 'the upgrade to be held' });
      const closing = proxy.proxy.close({ forceAfterMs: 60_000 });
      await closed(tunnel.socket);
      await upstreamEnded;
      // the held upgrade is forwarded when its delay is over; its tunnel is closed at once
      const late = tunnelOf(await held);
      await closed(late.socket);
      await closing;
      assert.equal(proxy.proxy.tunnels, 0);
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });
});
