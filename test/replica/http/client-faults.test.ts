/**
 * What the client does wrong never counts against a server: a refusal never reaches one, and a
 * forwarded request the client spoils — a chunked body past the limit, broken chunked framing, a
 * client that goes away or stops sending its body, a request that cannot go out as written — ends without an
 * error-log line about the server and without taking a server of the group out. Refusals close the
 * connection lingering, so a client still sending its body reads the whole page.
 */
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { NGINX_CLIENT_TIMERS } from '../../../src/engine/http/client-timers.ts';
import type {
  ClientFault,
  ClientInputRules,
  DecideHook,
  Decision,
} from '../../../src/replica/http/contract/decision.ts';
import type { UpstreamError } from '../../../src/replica/http/contract/exchange-events.ts';
import { nginxPage, startProxy, startUpstream, type TestProxy, type TestUpstream } from './harness.ts';

/** A hook that answers `current.decision` and records what its client rules hear. */
function hook(current: { decision: Decision }, faults: ClientFault[]): DecideHook {
  const client: ClientInputRules = {
    maxHeaderBytes: () => 64 * 1024,
    unreadableHead: () => 400,
    clientFault: (_ctx, _decision, fault) => faults.push(fault),
  };
  return Object.assign(() => current.decision, { client });
}

interface Exchange {
  readonly text: string;
  /** The socket error the client saw (`ECONNRESET` when its answer was cut by a reset), or null. */
  readonly error: string | null;
}

/**
 * Writes `parts` on a fresh connection, each after the previous one was flushed; a number waits
 * until that many bytes came back first (an event, not a delay). Resolves when the connection closes.
 */
function exchange(
  port: number,
  parts: readonly (string | Buffer | (() => Promise<void>))[],
): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let error: string | null = null;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error = err.code ?? err.message;
    });
    socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), error }));
    socket.once('connect', async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        if (typeof part === 'function') await part();
        else await new Promise<void>((done) => socket.write(part, () => done()));
      }
    });
  });
}

const statusLine = (text: string) => text.split('\r\n')[0];
/** nginx's `proxy_request_buffering off`. */
const STREAMING = { ...NGINX_CLIENT_TIMERS, requestBuffering: false };
const bodyOf = (text: string) => text.slice(text.indexOf('\r\n\r\n') + 4);

describe('client faults never count against a server of the group', () => {
  let first: TestUpstream;
  let second: TestUpstream;
  let proxy: TestProxy<Decision>;
  let faults: ClientFault[];
  let upstreamErrors: UpstreamError[];
  const current: { decision: Decision } = { decision: { action: 'pass' } };

  const start = async (decision: Decision) => {
    current.decision = decision;
    faults = [];
    upstreamErrors = [];
    proxy = await startProxy([{ port: first.port }, { port: second.port }], {
      decide: hook(current, faults),
      onUpstreamError: (_ctx, _decision, error) => upstreamErrors.push(error),
    });
  };

  /** Both servers are up, and the next two requests reach one each. */
  const bothServersServe = async () => {
    const peers = proxy.upstreams.get('backend')!.peers;
    assert.deepEqual(
      peers.map((peer) => peer.fails),
      [0, 0],
    );
    const before = first.requests.length + second.requests.length;
    const firstBefore = first.requests.length;
    for (let i = 0; i < 2; i++) {
      current.decision = { action: 'pass' };
      const out = await exchange(proxy.port, ['GET /after HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n']);
      assert.equal(statusLine(out.text), 'HTTP/1.1 200 OK');
    }
    assert.equal(first.requests.length + second.requests.length, before + 2);
    assert.equal(first.requests.length, firstBefore + 1);
    assert.deepEqual(upstreamErrors, []);
  };

  beforeEach(async () => {
    first = await startUpstream();
    second = await startUpstream();
  });

  afterEach(async () => {
    await proxy.close();
    await first.close();
    await second.close();
  });

  test('a refusal: nginx page, Connection: close, no server contacted, the page read whole', async () => {
    await start({ action: 'refuse', code: 413 });
    const body = Buffer.alloc(2 * 1024 * 1024, 'a');
    const out = await exchange(proxy.port, [
      `POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
    ]);
    assert.equal(out.error, null);
    assert.equal(statusLine(out.text), 'HTTP/1.1 413 Request Entity Too Large');
    assert.match(out.text, /\r\nConnection: close\r\n/);
    assert.equal(bodyOf(out.text), nginxPage('413 Request Entity Too Large'));
    assert.deepEqual([first.started.length, second.started.length], [0, 0]);
    await bothServersServe();
  });

  test('a refusal is not lost to a reset: a client that reads only after sending its body gets it', async () => {
    await start({ action: 'refuse', code: 413 });
    const body = Buffer.alloc(8 * 1024 * 1024, 'a');
    const out = await new Promise<Exchange>((resolve) => {
      const socket = connect(proxy.port, '127.0.0.1');
      const chunks: Buffer[] = [];
      let error: string | null = null;
      socket.pause();
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('error', (err: NodeJS.ErrnoException) => {
        error = err.code ?? err.message;
      });
      socket.on('close', () => resolve({ text: Buffer.concat(chunks).toString('latin1'), error }));
      socket.write(`POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: ${body.length}\r\n\r\n`);
      socket.write(body, () => socket.resume());
    });
    assert.equal(out.error, null);
    assert.equal(statusLine(out.text), 'HTTP/1.1 413 Request Entity Too Large');
    assert.equal(bodyOf(out.text), nginxPage('413 Request Entity Too Large'));
  });

  test('a refusal answers an Expect: 100-continue without 100 Continue; a forward sends it', async () => {
    await start({ action: 'refuse', code: 413 });
    const refused = await exchange(proxy.port, [
      'POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n',
    ]);
    assert.equal(statusLine(refused.text), 'HTTP/1.1 413 Request Entity Too Large');
    current.decision = { action: 'pass' };
    const passed = await exchange(proxy.port, [
      'POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n',
      'hello',
    ]);
    assert.ok(passed.text.startsWith('HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n'), passed.text);
  });

  test('a chunked body past maxBodyBytes: 413, the line about the client, no server blamed', async () => {
    await start({ action: 'pass', maxBodyBytes: 2048 });
    const out = await exchange(proxy.port, [
      'POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n',
      `c00\r\n${'a'.repeat(3072)}\r\n0\r\n\r\n`,
    ]);
    assert.equal(out.error, null);
    assert.equal(statusLine(out.text), 'HTTP/1.1 413 Request Entity Too Large');
    assert.match(out.text, /\r\nConnection: close\r\n/);
    assert.equal(faults.length, 1);
    assert.equal(faults[0]!.level, 'error');
    assert.match(faults[0]!.message, /^client intended to send too large chunked body: \d+\+\d+ bytes$/);
    await bothServersServe();
  });

  test('broken chunked framing while forwarding: 400, nginx line, no server blamed', async () => {
    // streamed (a body read whole first reaches no server before it is all in)
    await start({ action: 'pass', client: STREAMING });
    const started = first.nextStarted();
    const out = await exchange(proxy.port, [
      'POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n',
      '3\r\nabc\r\n',
      async () => void (await started),
      'zz\r\n',
    ]);
    assert.equal(statusLine(out.text), 'HTTP/1.1 400 Bad Request');
    assert.deepEqual(faults, [{ level: 'error', message: 'client sent invalid chunked body' }]);
    await bothServersServe();
  });

  test('a client that goes away in the middle of its body: no server blamed', async () => {
    // streamed (a body read whole first reaches no server before it is all in)
    await start({ action: 'pass', client: STREAMING });
    const started = first.nextStarted();
    const socket = connect(proxy.port, '127.0.0.1');
    socket.on('error', () => {});
    socket.write('POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\nabc');
    const req = await started;
    await first.bodyReceived(req, 3);
    const aborted = new Promise((resolve) => req.once('close', resolve));
    socket.destroy();
    await aborted;
    await bothServersServe();
  });

  test('a client that half-closes before the end of its body: closed, nginx line, no server blamed', async () => {
    // streamed (a body read whole first reaches no server before it is all in)
    await start({ action: 'pass', client: STREAMING });
    const started = first.nextStarted();
    const socket = connect(proxy.port, '127.0.0.1');
    const answer: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => answer.push(chunk));
    socket.on('error', () => {});
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.write('POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\nabc');
    await started;
    socket.end();
    await closed;
    assert.equal(Buffer.concat(answer).length, 0);
    assert.deepEqual(faults, [{ level: 'info', message: 'client prematurely closed connection' }]);
    await bothServersServe();
  });

  test('a client slower with its body than the read timeout is not timed out', async () => {
    // streamed (a body read whole first reaches no server before it is all in)
    await start({
      action: 'pass',
      readTimeoutMs: 300,
      client: STREAMING,
    });
    const started = first.nextStarted();
    const out = await exchange(proxy.port, [
      'POST /upload HTTP/1.1\r\nHost: a\r\nContent-Length: 6\r\nConnection: close\r\n\r\nabc',
      async () => void (await started),
      // the slowness under test: longer than the read timeout and undici's timer granularity
      () => new Promise((resolve) => setTimeout(resolve, 1500)),
      'def',
    ]);
    assert.equal(statusLine(out.text), 'HTTP/1.1 200 OK');
    assert.equal(JSON.parse(bodyOf(out.text)).body, 'abcdef');
    assert.deepEqual(faults, []);
    await bothServersServe();
  });

  test('a request that cannot go out as written (a space in the rewritten target): 400, nothing logged, no server blamed', async () => {
    await start({ action: 'pass', path: '/a b' });
    const out = await exchange(proxy.port, ['GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n']);
    assert.equal(statusLine(out.text), 'HTTP/1.1 400 Bad Request');
    assert.deepEqual(faults, []);
    await bothServersServe();
  });
});
