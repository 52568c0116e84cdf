/**
 * The client address on a replica process: from `real_ip_header` when the peer is in
 * `set_real_ip_from`, else the socket's own (a spoofed X-Forwarded-For from an untrusted peer is
 * ignored, so it cannot dodge its limit). The listener is dual-stack (`[::]`), so IPv4 peers arrive as
 * IPv4-mapped IPv6 and must still match an IPv4 `set_real_ip_from` and key as 4-byte addresses.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client } from 'undici';
import { freePorts } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { startUpstream, type TestUpstream, type UpstreamRecord } from './http/harness.ts';

describe('replica: real client address', () => {
  const dir = new TempDir();
  let upstream: TestUpstream;
  let replica: ReplicaRun;
  let xffPort: number;
  let xRealIpPort: number;
  const clients: Client[] = [];

  before(async () => {
    const [a, b] = (await freePorts(2)) as [number, number];
    upstream = await startUpstream();
    const config = dir.write(
      'nginx.conf',
      `events {}
http {
    # 1r/m, no burst: a second request from the same client address is rejected.
    limit_req_zone $binary_remote_addr zone=perclient:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=perclient2:1m rate=1r/m;
    upstream backend { server 127.0.0.1:${upstream.port}; }
    # what the upstream sees of the address: the client list plus $remote_addr
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    server {
        listen [::]:${a};
        set_real_ip_from 127.0.0.1;
        real_ip_header X-Forwarded-For;
        location / { limit_req zone=perclient; limit_req_status 429; proxy_pass http://backend; }
    }
    server {
        listen 127.0.0.1:${b};
        set_real_ip_from 127.0.0.0/8;
        real_ip_header X-Real-IP;
        location / { limit_req zone=perclient2; limit_req_status 429; proxy_pass http://backend; }
    }
}
`,
    );
    replica = await startReplica(config, [], { status: false });
    xffPort = replica.ports[String(a)]!;
    xRealIpPort = replica.ports[String(b)]!;
  });

  after(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await stopAll();
    await upstream?.close();
    dir.remove();
  });

  /** One GET from `localAddress` (a loopback address) to the replica's `port`. */
  async function get(localAddress: string, port: number, headers: Record<string, string>) {
    const client = new Client(`http://127.0.0.1:${port}`, { localAddress });
    clients.push(client);
    const res = await client.request({ method: 'GET', path: '/', headers });
    const text = await res.body.text();
    return {
      status: res.statusCode,
      seen: res.statusCode === 200 ? (JSON.parse(text) as UpstreamRecord) : null,
    };
  }

  test('a trusted peer: X-Forwarded-For is the client, one key per client', async () => {
    const one = await get('127.0.0.1', xffPort, { 'x-forwarded-for': '198.51.100.1' });
    assert.equal(one.status, 200);
    // nginx's $proxy_add_x_forwarded_for: the incoming header plus $remote_addr (the real client).
    assert.equal(one.seen?.headers['x-forwarded-for'], '198.51.100.1, 198.51.100.1');
    assert.equal((await get('127.0.0.1', xffPort, { 'x-forwarded-for': '198.51.100.2' })).status, 200);
    assert.equal((await get('127.0.0.1', xffPort, { 'x-forwarded-for': '198.51.100.1' })).status, 429);
    // The last address of the list is the client (real_ip_recursive off).
    const listed = await get('127.0.0.1', xffPort, { 'x-forwarded-for': '198.51.100.7, 198.51.100.2' });
    assert.equal(listed.status, 429);
  });

  test('an untrusted peer: a spoofed X-Forwarded-For is ignored, the socket address is the key', async () => {
    const first = await get('127.0.0.2', xffPort, { 'x-forwarded-for': '203.0.113.1' });
    assert.equal(first.status, 200);
    assert.equal(first.seen?.headers['x-forwarded-for'], '203.0.113.1, 127.0.0.2');
    // Another spoofed address does not make it another client.
    assert.equal((await get('127.0.0.2', xffPort, { 'x-forwarded-for': '203.0.113.2' })).status, 429);
    assert.equal((await get('127.0.0.2', xffPort, {})).status, 429);
  });

  test('real_ip_header X-Real-IP from a trusted network', async () => {
    const first = await get('127.0.0.3', xRealIpPort, { 'x-real-ip': '192.0.2.10' });
    assert.equal(first.status, 200);
    assert.equal(first.seen?.headers['x-forwarded-for'], '192.0.2.10');
    assert.equal((await get('127.0.0.4', xRealIpPort, { 'x-real-ip': '192.0.2.11' })).status, 200);
    assert.equal((await get('127.0.0.5', xRealIpPort, { 'x-real-ip': '192.0.2.10' })).status, 429);
  });
});
