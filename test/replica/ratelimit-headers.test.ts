/**
 * `limit_req_ratelimit_headers on` (extension): answers carry the IETF RateLimit fields
 * (draft-ietf-httpapi-ratelimit-headers-11) of the deciding limit_req zone — on proxied answers and
 * on rejections alike; off, none.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';

describe('limit_req_ratelimit_headers', () => {
  const dir = new TempDir();
  const upstream: Server = createServer((_req, res) => res.end('ok'));
  let replica: ReplicaRun;
  let url: string;

  before(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    const listen = await freePort();
    const port = (upstream.address() as AddressInfo).port;
    const config = `events {}
http {
    limit_req_zone $binary_remote_addr zone=api:1m rate=2r/s;
    server {
        listen 127.0.0.1:${listen};
        limit_req zone=api burst=3 nodelay;
        location /with { limit_req_ratelimit_headers on; proxy_pass http://127.0.0.1:${port}; }
        location /without { proxy_pass http://127.0.0.1:${port}; }
    }
}
`;
    replica = await startReplica(dir.write('nginx.conf', config), [], { status: false });
    url = `http://127.0.0.1:${replica.ports[String(listen)]}`;
  });

  after(async () => {
    await stopAll();
    upstream.close();
    dir.remove();
  });

  it('the policy (q = burst + 1 over the seconds to drain it) and what is left, request by request', async () => {
    const seen: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${url}/with`);
      await res.arrayBuffer();
      seen.push(`${res.status} ${res.headers.get('ratelimit-policy')} | ${res.headers.get('ratelimit')}`);
    }
    // rate 2r/s, burst 3: 4 requests over 2 s; each admitted one takes one of the burst
    assert.deepEqual(seen, [
      '200 "api";q=4;w=2 | "api";r=3;t=0',
      '200 "api";q=4;w=2 | "api";r=2;t=1',
      '200 "api";q=4;w=2 | "api";r=1;t=1',
      '200 "api";q=4;w=2 | "api";r=0;t=2',
      // refused: nothing left, passes again in 1 / rate
      '503 "api";q=4;w=2 | "api";r=0;t=1',
    ]);
  });

  it('off (the default): no RateLimit fields', async () => {
    const res = await fetch(`${url}/without`, { headers: { 'x-forwarded-for': '10.9.9.9' } });
    await res.arrayBuffer();
    assert.equal(res.headers.get('ratelimit'), null);
    assert.equal(res.headers.get('ratelimit-policy'), null);
  });
});
