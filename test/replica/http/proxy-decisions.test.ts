import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errors, request } from 'undici';
import { type Decision, PASS } from '../../../src/replica/http/contract/decision.ts';
import {
  nginxPage,
  rawRequest,
  responseOf,
  startProxy,
  startUpstream,
  type TestProxy,
  type TestUpstream,
  type UpstreamRecord,
} from './harness.ts';

/** The decision is chosen by the request path, so one proxy serves every case. */
const DECISIONS: Readonly<Record<string, Decision>> = {
  '/pass': PASS,
  '/proxy': { action: 'proxy', upstream: 'backend', path: '/rewritten?by=hook' },
  '/reject-503': { action: 'reject', code: 503 },
  '/reject-429': { action: 'reject', code: 429, retryAfterS: 7 },
  '/reject-420': { action: 'reject', code: 420 },
  '/reject-444': { action: 'reject', code: 444 },
  '/reject-494': { action: 'reject', code: 494 },
  '/return-text': { action: 'return', code: 200, body: 'hello from return\n' },
  '/return-json': {
    action: 'return',
    code: 201,
    body: '{"ok":true}',
    headers: { 'content-type': 'application/json', 'x-extra': '1' },
  },
  '/return-404': { action: 'return', code: 404 },
  '/return-redirect': { action: 'return', code: 301, headers: { location: 'http://cafe.example.com/' } },
  '/delay': { action: 'delay', delayMs: 150 },
  '/unknown-upstream': { action: 'proxy', upstream: 'nowhere' },
};

describe('proxy: hook decisions', () => {
  let upstream: TestUpstream;
  let proxy: TestProxy<Decision>;
  const hookErrors: unknown[] = [];

  before(async () => {
    upstream = await startUpstream();
    proxy = await startProxy([{ port: upstream.port }], {
      decide: (ctx) => {
        const decision = DECISIONS[ctx.req.url ?? ''];
        if (decision === undefined) throw new Error(`no decision for ${ctx.req.url}`);
        return decision;
      },
      onHookError: (err) => hookErrors.push(err),
    });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  const get = (path: string) =>
    rawRequest(proxy.port, [`GET ${path} HTTP/1.1`, 'Host: cafe.example.com', 'Connection: close']);

  test('reject 503: nginx status line and page', async () => {
    const before = upstream.requests.length;
    const out = responseOf(await get('/reject-503'));
    assert.equal(out.status, 503);
    assert.equal(out.reason, 'Service Temporarily Unavailable');
    assert.equal(out.header('content-type'), 'text/html');
    assert.equal(out.body, nginxPage('503 Service Temporarily Unavailable'));
    assert.equal(out.header('content-length'), String(out.body.length));
    assert.equal(out.header('retry-after'), undefined);
    assert.equal(upstream.requests.length, before, 'a rejected request is not forwarded');
  });

  test('reject 429 with Retry-After', async () => {
    const out = responseOf(await get('/reject-429'));
    assert.equal(out.status, 429);
    assert.equal(out.reason, 'Too Many Requests');
    assert.equal(out.header('retry-after'), '7');
    assert.equal(out.body, nginxPage('429 Too Many Requests'));
  });

  test('reject with a code nginx has no page for: empty reason, empty body', async () => {
    const out = responseOf(await get('/reject-420'));
    assert.equal(out.status, 420);
    assert.equal(out.reason, '');
    assert.equal(out.header('content-length'), '0');
    assert.equal(out.header('content-type'), undefined);
    assert.equal(out.body, '');
  });

  test('reject 494 goes out as 400 with its own page, as nginx does', async () => {
    const out = responseOf(await get('/reject-494'));
    assert.equal(out.status, 400);
    assert.equal(out.reason, 'Bad Request');
    assert.ok(out.body.includes('<title>400 Request Header Or Cookie Too Large</title>'));
    assert.ok(out.body.includes('<center>Request Header Or Cookie Too Large</center>'));
  });

  test('reject 444 closes the connection without a response', async () => {
    const before = upstream.requests.length;
    assert.deepEqual(await get('/reject-444'), { closedWithoutResponse: true });
    await assert.rejects(request(`http://127.0.0.1:${proxy.port}/reject-444`), (err: Error) => {
      assert.ok(err instanceof errors.SocketError);
      assert.equal(err.message, 'other side closed');
      return true;
    });
    assert.equal(upstream.requests.length, before);
  });

  test('reject on a keep-alive connection leaves it usable', async () => {
    const first = await request(`http://127.0.0.1:${proxy.port}/reject-503`);
    assert.equal(first.statusCode, 503);
    await first.body.dump();
    const second = await request(`http://127.0.0.1:${proxy.port}/pass`);
    assert.equal(second.statusCode, 200);
    await second.body.dump();
  });

  test('return with text: text/plain and the exact body', async () => {
    const out = responseOf(await get('/return-text'));
    assert.equal(out.status, 200);
    assert.equal(out.reason, 'OK');
    assert.equal(out.header('content-type'), 'text/plain');
    assert.equal(out.body, 'hello from return\n');
  });

  test('return with headers keeps the given content-type', async () => {
    const out = responseOf(await get('/return-json'));
    assert.equal(out.status, 201);
    assert.equal(out.header('content-type'), 'application/json');
    assert.equal(out.header('x-extra'), '1');
    assert.equal(out.body, '{"ok":true}');
  });

  test('return without a body sends nginx page; a redirect carries Location', async () => {
    const notFound = responseOf(await get('/return-404'));
    assert.equal(notFound.status, 404);
    assert.equal(notFound.body, nginxPage('404 Not Found'));
    const moved = responseOf(await get('/return-redirect'));
    assert.equal(moved.status, 301);
    assert.equal(moved.reason, 'Moved Permanently');
    assert.equal(moved.header('location'), 'http://cafe.example.com/');
    assert.equal(moved.body, nginxPage('301 Moved Permanently'));
  });

  test('proxy to a named upstream with the path the hook gives', async () => {
    const res = await request(`http://127.0.0.1:${proxy.port}/proxy`);
    const record = (await res.body.json()) as UpstreamRecord;
    assert.equal(record.url, '/rewritten?by=hook');
  });

  test('an unknown upstream name answers 502', async () => {
    const out = responseOf(await get('/unknown-upstream'));
    assert.equal(out.status, 502);
    assert.equal(out.body, nginxPage('502 Bad Gateway'));
  });

  test('delay holds the request, then forwards it', async () => {
    const startMs = performance.now();
    const res = await request(`http://127.0.0.1:${proxy.port}/delay`);
    const elapsedMs = performance.now() - startMs;
    const record = (await res.body.json()) as UpstreamRecord;
    assert.equal(res.statusCode, 200);
    assert.equal(record.url, '/delay');
    // timers never fire early; no upper bound (a loaded machine may be slow)
    assert.ok(elapsedMs >= 145, `held ${elapsedMs} ms`);
    assert.equal(proxy.proxy.held, 0);
  });

  test('a hook that throws gets a 500 and is reported', async () => {
    hookErrors.length = 0;
    const out = responseOf(await get('/no-such-decision'));
    assert.equal(out.status, 500);
    assert.equal(out.body, nginxPage('500 Internal Server Error'));
    assert.equal(hookErrors.length, 1);
    assert.equal((hookErrors[0] as Error).message, 'no decision for /no-such-decision');
  });
});
