/**
 * WebSocket upgrades through a replica process, with the same configuration served by nginx 1.22 as
 * the oracle: limited and unlimited upgrade requests get the same statuses from both (101, the zone's
 * limit_req_status, 444 closing), a location without the upgrade lines sends the upstream a plain
 * request, a delayed upgrade is held then tunnelled, the replica counts them as any request, and
 * SIGTERM does not wait for open tunnels.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { freePort } from '../helpers/free-port.ts';
import { type ReplicaRun, startReplica, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { type RunningNginx, startNginx } from '../helpers/nginx.ts';
import type { UpstreamRecord } from './http/harness.ts';
import {
  closed,
  echo,
  openUpgrade,
  startUpgradeUpstream,
  tunnelOf,
  type UpgradeOutcome,
  type UpgradeUpstream,
} from './http/upgrade-harness.ts';

const http = (port: number, upstream: number) => `
    map $http_upgrade $connection_upgrade {
        default upgrade;
        '' close;
    }
    # 1r/m: a second request right after the first is over a burst of 0, whatever the machine's load.
    limit_req_zone $binary_remote_addr zone=ws:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=toomany:1m rate=1r/m;
    limit_req_zone $binary_remote_addr zone=closed:1m rate=1r/m;
    # 5r/s: a second request right away waits about 200 ms.
    limit_req_zone $binary_remote_addr zone=held:1m rate=5r/s;

    upstream backend { server 127.0.0.1:${upstream}; }

    server {
        listen 127.0.0.1:${port};
        proxy_http_version 1.1;
        proxy_set_header Upgrade $http_upgrade;
        proxy_set_header Connection $connection_upgrade;
        location /ws { limit_req zone=ws; proxy_pass http://backend; }
        location /toomany { limit_req zone=toomany; limit_req_status 429; proxy_pass http://backend; }
        location /closed { limit_req zone=closed; limit_req_status 444; proxy_pass http://backend; }
        location /held { limit_req zone=held burst=5; proxy_pass http://backend; }
        location /open { proxy_pass http://backend; }
        # its own proxy_set_header list replaces the server's: no Upgrade, a plain request upstream
        location /plain { proxy_set_header X-Plain yes; proxy_pass http://backend; }
    }
`;

/** What a client saw: 101, the response status, or 444 for a connection closed without an answer. */
async function statusOf(outcome: Promise<UpgradeOutcome>): Promise<number> {
  const seen = await outcome;
  if (seen.kind === 'closed') return 444;
  if (seen.kind === 'response') return seen.status;
  seen.socket.destroy();
  return 101;
}

const SEQUENCE = ['/ws/1', '/ws/2', '/toomany/1', '/toomany/2', '/closed/1', '/closed/2', '/open', '/plain'];
const EXPECTED = [101, 503, 101, 429, 101, 444, 101, 200];

describe('replica: WebSocket upgrades, nginx as the oracle', () => {
  const dir = new TempDir();
  let upstream: UpgradeUpstream;
  let replica: ReplicaRun;
  let nginx: RunningNginx;
  let port: number;

  before(async () => {
    const listen = await freePort();
    upstream = await startUpgradeUpstream();
    const config = dir.write('nginx.conf', `events {}\nhttp {\n${http(listen, upstream.port)}}\n`);
    [nginx, replica] = await Promise.all([
      startNginx({ http: (nginxPort) => http(nginxPort, upstream.port) }),
      startReplica(config),
    ]);
    port = replica.ports[String(listen)]!;
  });

  after(async () => {
    await stopAll();
    await nginx?.stop();
    await upstream?.close();
    dir.remove();
  });

  test('limited and unlimited upgrade requests: the same statuses from nginx and the replica', async () => {
    const seen: Record<string, number[]> = { nginx: [], replica: [] };
    const plain: Record<string, UpstreamRecord | undefined> = {};
    for (const [name, target] of [
      ['nginx', nginx.port],
      ['replica', port],
    ] as const) {
      for (const path of SEQUENCE) seen[name]!.push(await statusOf(openUpgrade(target, path)));
      plain[name] = upstream.plain.at(-1);
    }
    assert.deepEqual(seen.nginx, EXPECTED, 'nginx');
    assert.deepEqual(seen.replica, EXPECTED, 'replica');
    for (const name of ['nginx', 'replica']) {
      assert.equal(plain[name]?.url, '/plain', name);
      assert.equal(plain[name]?.headers.upgrade, undefined, `${name}: no Upgrade on a plain request`);
    }
  });

  test('through the replica, the tunnel echoes; a delayed upgrade is held, then tunnelled', async () => {
    const open = tunnelOf(await openUpgrade(port, '/open/echo'));
    assert.equal(await echo(open.socket, 'through the replica'), 'through the replica');
    open.socket.destroy();

    tunnelOf(await openUpgrade(port, '/held/1')).socket.destroy();
    const startMs = performance.now();
    const held = tunnelOf(await openUpgrade(port, '/held/2'));
    assert.ok(performance.now() - startMs >= 150, 'held by the delay first');
    assert.equal(await echo(held.socket, 'late'), 'late');
    held.socket.destroy();
  });

  test('the replica counts upgrade requests as any request', async () => {
    const api = await request(`${replica.statusUrl}/api/9/http/limit_reqs/`);
    const zero = { delayed_dry_run: 0, rejected_dry_run: 0 };
    assert.deepEqual(await api.body.json(), {
      ws: { passed: 1, delayed: 0, rejected: 1, ...zero },
      toomany: { passed: 1, delayed: 0, rejected: 1, ...zero },
      closed: { passed: 1, delayed: 0, rejected: 1, ...zero },
      held: { passed: 1, delayed: 1, rejected: 0, ...zero },
    });
  });

  test('SIGTERM: open tunnels are closed, the replica exits 0 without waiting for them', async () => {
    const tunnel = tunnelOf(await openUpgrade(port, '/open/last'));
    assert.equal(await echo(tunnel.socket, 'still open'), 'still open');
    const startMs = performance.now();
    replica.process.signal('SIGTERM');
    await closed(tunnel.socket);
    assert.deepEqual(await replica.process.exited, { code: 0, signal: null });
    const stopMs = performance.now() - startMs;
    assert.ok(stopMs < 10_000, `stopped after ${stopMs} ms (the forced close comes at 30 s)`);
  });
});
