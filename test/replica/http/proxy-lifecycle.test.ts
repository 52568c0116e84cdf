import assert from 'node:assert/strict';
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { test } from 'node:test';
import { request } from 'undici';
import type { Decision, DownstreamRequest } from '../../../src/replica/http/contract/decision.ts';
import { PASS } from '../../../src/replica/http/contract/decision.ts';
import type { ClientClosedPhase } from '../../../src/replica/http/contract/exchange-events.ts';
import { startProxy, startUpstream } from './harness.ts';

interface Closed {
  readonly ctx: DownstreamRequest;
  readonly decision: Decision;
  readonly phase: ClientClosedPhase;
}

/** Opens a connection, sends a GET, and resolves once the proxy's hook has seen it. */
async function sendAndAwaitHook(port: number, path: string, hookSaw: Promise<unknown>) {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`GET ${path} HTTP/1.1\r\nHost: cafe.example.com\r\n\r\n`);
  await hookSaw;
  return socket;
}

test('a client that disconnects while delayed is released at once and never proxied', async () => {
  const upstream = await startUpstream();
  let hookSaw!: () => void;
  const seen = new Promise<void>((resolve) => {
    hookSaw = resolve;
  });
  let closedResolve!: (closed: Closed) => void;
  const closed = new Promise<Closed>((resolve) => {
    closedResolve = resolve;
  });
  const delay: Decision = { action: 'delay', delayMs: 60_000 };
  const proxy = await startProxy([{ port: upstream.port }], {
    decide: () => {
      hookSaw();
      return delay;
    },
    onClientClosed: (ctx, decision, phase) => closedResolve({ ctx, decision, phase }),
  });
  try {
    const socket = await sendAndAwaitHook(proxy.port, '/held', seen);
    assert.equal(proxy.proxy.held, 1);
    socket.destroy();
    const report = await closed;
    assert.equal(report.phase, 'delay');
    assert.equal(report.decision, delay);
    assert.equal(report.ctx.req.url, '/held');
    assert.equal(report.ctx.remoteAddr, '127.0.0.1');
    assert.equal(proxy.proxy.held, 0, 'the timer was cleared');
    // a close that had to wait for the 60 s timer would hang here
    await proxy.close();
    assert.equal(upstream.started.length, 0, 'the upstream never saw the request');
  } finally {
    await proxy.close();
    await upstream.close();
  }
});

test('a client that disconnects mid-response aborts the upstream request and is reported', async () => {
  const upstream = await startUpstream((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.write('partial');
  });
  let closedResolve!: (closed: Closed) => void;
  const closed = new Promise<Closed>((resolve) => {
    closedResolve = resolve;
  });
  const proxy = await startProxy([{ port: upstream.port }], {
    decide: () => PASS,
    onClientClosed: (ctx, decision, phase) => closedResolve({ ctx, decision, phase }),
  });
  try {
    const socket = connect(proxy.port, '127.0.0.1');
    await once(socket, 'connect');
    const upstreamReq = upstream.nextStarted();
    socket.write('GET /slow HTTP/1.1\r\nHost: cafe.example.com\r\n\r\n');
    const req = await upstreamReq;
    const upstreamClosed = once(req.socket, 'close');
    await once(socket, 'data');
    socket.destroy();
    const report = await closed;
    assert.equal(report.phase, 'proxy');
    assert.equal(report.decision, PASS);
    await upstreamClosed;
  } finally {
    await proxy.close();
    await upstream.close();
  }
});

test('graceful close: refuses new connections, finishes forwarded and held requests, then resolves', async () => {
  const parked: ServerResponse[] = [];
  let parkedOne!: () => void;
  const firstParked = new Promise<void>((resolve) => {
    parkedOne = resolve;
  });
  const upstream = await startUpstream((req, res) => {
    if (req.url === '/slow') {
      parked.push(res);
      parkedOne();
      return;
    }
    res.end(`done ${req.url}`);
  });
  let heldResolve!: () => void;
  const heldSeen = new Promise<void>((resolve) => {
    heldResolve = resolve;
  });
  const proxy = await startProxy([{ port: upstream.port }], {
    decide: (ctx) => {
      if (ctx.req.url === '/held') {
        heldResolve();
        return { action: 'delay', delayMs: 300 };
      }
      return PASS;
    },
  });
  try {
    const slow = request(`http://127.0.0.1:${proxy.port}/slow`);
    const held = request(`http://127.0.0.1:${proxy.port}/held`);
    await firstParked;
    await heldSeen;
    assert.equal(proxy.proxy.held, 1);

    let closeDone = false;
    const closing = proxy.proxy.close().then(() => {
      closeDone = true;
    });
    await assert.rejects(
      new Promise((resolve, reject) => {
        const socket = connect(proxy.port, '127.0.0.1');
        socket.once('connect', () => resolve(socket));
        socket.once('error', reject);
      }),
      { code: 'ECONNREFUSED' },
    );

    const heldRes = await held;
    assert.equal(heldRes.statusCode, 200);
    assert.equal(await heldRes.body.text(), 'done /held');
    assert.equal(heldRes.headers.connection, 'close');
    assert.equal(closeDone, false, 'a forwarded request is still open');

    parked[0]!.end('done /slow');
    const slowRes = await slow;
    assert.equal(slowRes.statusCode, 200);
    assert.equal(await slowRes.body.text(), 'done /slow');
    await closing;
    assert.equal(closeDone, true);
  } finally {
    await proxy.close();
    await upstream.close();
  }
});
