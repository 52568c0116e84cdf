import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { NGINX_CLIENT_TIMERS } from '../../../src/engine/http/client-timers.ts';
import type { DownstreamRequest } from '../../../src/replica/http/contract/decision.ts';
import { PASS } from '../../../src/replica/http/contract/decision.ts';

const STREAMING = { ...NGINX_CLIENT_TIMERS, requestBuffering: false };

import {
  echo,
  rawRequest,
  responseOf,
  startProxy,
  startUpstream,
  type TestProxy,
  type TestUpstream,
  type UpstreamRecord,
} from './harness.ts';

describe('proxy: forwarding', () => {
  let upstream: TestUpstream;
  let proxy: TestProxy<typeof PASS>;
  const seen: DownstreamRequest[] = [];

  before(async () => {
    upstream = await startUpstream((req, res, record) => {
      if (req.url === '/hop') {
        res.writeHead(200, {
          connection: 'x-up-private, keep-alive',
          'x-up-private': 'secret',
          'keep-alive': 'timeout=5',
          'proxy-authenticate': 'Basic',
          trailer: 'x-t',
          server: 'upstream/1.0',
          date: 'Thu, 01 Jan 1970 00:00:00 GMT',
          'x-accel-redirect': '/internal',
          'x-kept': 'yes',
          'set-cookie': ['a=1', 'b=2'],
        });
        res.end('ok');
        return;
      }
      echo(req, res, record);
    });
    proxy = await startProxy([{ port: upstream.port }], {
      decide: (ctx) => {
        seen.push(ctx);
        // nginx's `proxy_request_buffering off`: the body streams as it arrives
        if (ctx.req.url === '/upload-stream') return { ...PASS, client: STREAMING };
        return PASS;
      },
    });
  });
  after(async () => {
    await proxy.close();
    await upstream.close();
  });

  test("GET reaches the upstream with path and query; Host is nginx's default $proxy_host", async () => {
    const res = await request(`http://127.0.0.1:${proxy.port}/tea/cup?size=2&x=%20y`, {
      headers: { host: 'cafe.example.com', 'user-agent': 'test-agent' },
    });
    assert.equal(res.statusCode, 200);
    const record = (await res.body.json()) as UpstreamRecord;
    assert.equal(record.method, 'GET');
    assert.equal(record.url, '/tea/cup?size=2&x=%20y');
    // the group's name, as nginx's `proxy_set_header Host $proxy_host` default writes it
    assert.equal(record.headers.host, 'backend');
    assert.equal(record.headers['user-agent'], 'test-agent');
    // nothing is added that no proxy_set_header line asks for
    for (const name of ['x-forwarded-for', 'x-forwarded-proto', 'x-forwarded-host'])
      assert.equal(record.headers[name], undefined, name);
    assert.equal(res.headers['content-type'], 'application/json');
  });

  test('the hook sees the client address and the Host header', async () => {
    seen.length = 0;
    const res = await request(`http://127.0.0.1:${proxy.port}/`, {
      headers: { host: 'tea.example.com:8080' },
    });
    await res.body.dump();
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.remoteAddr, '127.0.0.1');
    assert.equal(seen[0]!.realipRemoteAddr, '127.0.0.1');
    assert.equal(seen[0]!.host, 'tea.example.com:8080');
    assert.equal(seen[0]!.req.url, '/');
    assert.ok(seen[0]!.remotePort > 0);
  });

  test("the client's X-Forwarded-* lines go as sent: no proxy_set_header line names them", async () => {
    const out = responseOf(
      await rawRequest(proxy.port, [
        'GET /xff HTTP/1.1',
        'Host: cafe.example.com',
        'X-Forwarded-For: 203.0.113.1, 198.51.100.2',
        'X-Forwarded-For: 192.0.2.3',
        'X-Forwarded-Proto: https',
        'X-Forwarded-Host: evil.example.com',
        'Connection: close',
      ]),
    );
    const record = JSON.parse(out.body) as UpstreamRecord;
    const lines = record.rawHeaders.flatMap((v, i) =>
      i % 2 === 0 && v.toLowerCase().startsWith('x-forwarded-') ? [`${v}: ${record.rawHeaders[i + 1]}`] : [],
    );
    assert.deepEqual(lines, [
      'X-Forwarded-For: 203.0.113.1, 198.51.100.2',
      'X-Forwarded-For: 192.0.2.3',
      'X-Forwarded-Proto: https',
      'X-Forwarded-Host: evil.example.com',
    ]);
  });

  test("the hop-by-hop headers nginx's default set names are not forwarded, others are", async () => {
    const out = responseOf(
      await rawRequest(proxy.port, [
        'GET /hop-request HTTP/1.1',
        'Host: cafe.example.com',
        'Connection: close, X-Private-Hop',
        'X-Private-Hop: 1',
        'Keep-Alive: timeout=5',
        'TE: trailers',
        'Trailer: X-Sum',
        'Upgrade: websocket',
        'Proxy-Authorization: Basic Zm9vOmJhcg==',
        'Proxy-Connection: keep-alive',
        'X-Real-IP: 192.0.2.99',
        'Accept: */*',
      ]),
    );
    const record = JSON.parse(out.body) as UpstreamRecord;
    const names = record.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
    for (const dropped of ['keep-alive', 'te', 'upgrade']) {
      assert.ok(!names.includes(dropped), `${dropped} must not reach the upstream`);
    }
    // nginx passes what the client's Connection names, Trailer and Proxy-*: the set does not name them
    for (const kept of ['x-private-hop', 'trailer', 'proxy-authorization', 'proxy-connection']) {
      assert.ok(names.includes(kept), `${kept} reaches the upstream`);
    }
    assert.equal(record.headers['x-real-ip'], '192.0.2.99');
    assert.equal(record.headers.accept, '*/*');
    // undici's own connection management header, not the client's
    assert.equal(record.headers.connection, 'keep-alive');
  });

  test('response headers nginx does not relay are dropped; Server/Date regenerated; the rest relayed', async () => {
    const out = responseOf(
      await rawRequest(proxy.port, ['GET /hop HTTP/1.1', 'Host: cafe.example.com', 'Connection: close']),
    );
    assert.equal(out.status, 200);
    assert.equal(out.body, 'ok');
    const names = out.headers.map(([n]) => n.toLowerCase());
    for (const dropped of ['keep-alive', 'trailer', 'x-accel-redirect']) {
      assert.ok(!names.includes(dropped), `${dropped} must not reach the client`);
    }
    // the server's Server is not relayed: the proxy's own goes out, as nginx's does
    assert.deepEqual(
      out.headers.filter(([n]) => n.toLowerCase() === 'server').map(([, v]) => v.replace(/\/.*/, '')),
      ['limitswitch'],
    );
    assert.equal(out.header('x-kept'), 'yes');
    // what the answer's Connection names, and Proxy-*, nginx relays
    assert.equal(out.header('x-up-private'), 'secret');
    assert.equal(out.header('proxy-authenticate'), 'Basic');
    assert.deepEqual(
      out.headers.filter(([n]) => n.toLowerCase() === 'set-cookie').map(([, v]) => v),
      ['a=1', 'b=2'],
    );
    assert.notEqual(out.header('date'), 'Thu, 01 Jan 1970 00:00:00 GMT');
    assert.equal(out.header('connection'), 'close');
  });

  test('a request body streams upstream while the client is still sending (proxy_request_buffering off)', async () => {
    const body = new PassThrough();
    const arrived = upstream.nextStarted();
    const pending = request(`http://127.0.0.1:${proxy.port}/upload-stream`, { method: 'POST', body });
    body.write('first-');
    const upstreamReq = await arrived;
    assert.equal(await upstream.bodyReceived(upstreamReq, 6), 'first-');
    body.end('second');
    const res = await pending;
    const record = (await res.body.json()) as UpstreamRecord;
    assert.equal(record.body, 'first-second');
    assert.equal(record.headers['transfer-encoding'], 'chunked');
  });

  test('a request body with Content-Length keeps it', async () => {
    const sized = await request(`http://127.0.0.1:${proxy.port}/upload`, {
      method: 'PUT',
      body: 'x'.repeat(100_000),
    });
    const sizedRecord = (await sized.body.json()) as UpstreamRecord;
    assert.equal(sizedRecord.method, 'PUT');
    assert.equal(sizedRecord.body.length, 100_000);
    assert.equal(sizedRecord.headers['content-length'], '100000');
  });

  test('HEAD gets the head only', async () => {
    const res = await request(`http://127.0.0.1:${proxy.port}/head`, { method: 'HEAD' });
    assert.equal(res.statusCode, 200);
    assert.equal(await res.body.text(), '');
    assert.ok(Number(res.headers['content-length']) > 0);
  });
});

describe('proxy: streaming responses', () => {
  test('the first chunk reaches the client before the upstream finishes', async () => {
    const upstreamSide: { finish?: () => void } = {};
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first;');
      upstreamSide.finish = () => res.end('last');
    });
    const proxy = await startProxy([{ port: upstream.port }], { decide: () => PASS });
    try {
      const res = await request(`http://127.0.0.1:${proxy.port}/stream`);
      assert.equal(res.headers['transfer-encoding'], 'chunked');
      const received: string[] = [];
      for await (const chunk of res.body) {
        received.push(String(chunk));
        if (received.length === 1) {
          assert.equal(received[0], 'first;');
          assert.ok(upstreamSide.finish, 'the upstream response is still open');
          upstreamSide.finish();
        }
      }
      assert.equal(received.join(''), 'first;last');
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });

  test('a large body is relayed intact through backpressure', async () => {
    const block = Buffer.alloc(64 * 1024, 'abcdefgh');
    const blocks = 64;
    const upstream = await startUpstream((_req, res) => {
      res.writeHead(200, { 'content-length': String(block.length * blocks) });
      let sent = 0;
      const pump = () => {
        while (sent < blocks) {
          sent++;
          if (!res.write(block)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    const proxy = await startProxy([{ port: upstream.port }], { decide: () => PASS });
    try {
      const res = await request(`http://127.0.0.1:${proxy.port}/big`);
      let total = 0;
      for await (const chunk of res.body) {
        total += (chunk as Buffer).length;
        // a slow reader: let the proxy's write buffer fill up
        if (total < block.length * 4) await new Promise((resolve) => setImmediate(resolve));
      }
      assert.equal(total, block.length * blocks);
      assert.equal(res.headers['content-length'], String(block.length * blocks));
    } finally {
      await proxy.close();
      await upstream.close();
    }
  });
});

test('a dual-stack listener reports IPv4 clients as IPv4, not IPv4-mapped IPv6', async () => {
  const upstream = await startUpstream();
  const seen: string[] = [];
  const proxy = await startProxy(
    [{ port: upstream.port }],
    {
      decide: (ctx) => {
        seen.push(ctx.remoteAddr, ctx.realipRemoteAddr);
        return PASS;
      },
    },
    {},
    '::',
  );
  try {
    const res = await request(`http://127.0.0.1:${proxy.port}/`);
    const record = (await res.body.json()) as UpstreamRecord;
    assert.deepEqual(seen, ['127.0.0.1', '127.0.0.1']);
    assert.equal(record.method, 'GET');
  } finally {
    await proxy.close();
    await upstream.close();
  }
});

test('real ip: a trusted peer is attributed to the header address, an untrusted one is not', async () => {
  const upstream = await startUpstream();
  const seen: string[] = [];
  const decide = (ctx: DownstreamRequest) => {
    seen.push(`${ctx.remoteAddr} via ${ctx.realipRemoteAddr}`);
    return PASS;
  };
  const trusted = await startProxy([{ port: upstream.port }], {
    decide,
    realIp: { trustedFrom: ['127.0.0.0/8'], header: 'X-Forwarded-For', recursive: false },
  });
  const untrusted = await startProxy([{ port: upstream.port }], {
    decide,
    realIp: { trustedFrom: ['192.0.2.0/24'], header: 'X-Forwarded-For', recursive: false },
  });
  try {
    const spoof = { 'x-forwarded-for': '203.0.113.9' };
    const viaTrusted = await request(`http://127.0.0.1:${trusted.port}/`, { headers: spoof });
    const trustedRecord = (await viaTrusted.body.json()) as UpstreamRecord;
    const viaUntrusted = await request(`http://127.0.0.1:${untrusted.port}/`, { headers: spoof });
    const untrustedRecord = (await viaUntrusted.body.json()) as UpstreamRecord;
    assert.deepEqual(seen, ['203.0.113.9 via 127.0.0.1', '127.0.0.1 via 127.0.0.1']);
    // the client's line goes on as sent, whoever the address was taken to be
    assert.equal(trustedRecord.headers['x-forwarded-for'], '203.0.113.9');
    assert.equal(untrustedRecord.headers['x-forwarded-for'], '203.0.113.9');
  } finally {
    await trusted.close();
    await untrusted.close();
    await upstream.close();
  }
});
