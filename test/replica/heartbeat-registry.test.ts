/**
 * Replica processes report themselves to the store: the control plane's `/cluster/replicas` lists each
 * one live (id, version, config hash, applied revision, start time, zones); a SIGTERM deregisters it at
 * once, and one killed outright is marked gone when its heartbeat's TTL runs out.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { freePort } from '../helpers/free-port.ts';
import {
  type ControlPlaneRun,
  type ReplicaRun,
  startControlPlane,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

interface ClusterReplica {
  id: string;
  version: string;
  config_hash: string;
  config_hash_without_listen?: string;
  applied_revision: number;
  started_at: string;
  last_heartbeat: string;
  state: 'live' | 'lagging' | 'gone';
  keyval_zones: string[];
  limit_req_zones: string[];
}

describe('replica: heartbeat and registry', () => {
  const dir = new TempDir();
  let redis: RedisServer;
  let controlPlane: ControlPlaneRun;
  let stopped: ReplicaRun;
  let killed: ReplicaRun;
  const startedAt = Date.now();

  before(async () => {
    redis = await RedisServer.start();
    const config = dir.write(
      'nginx.conf',
      `events {}
http {
    keyval_zone zone=limitreq_uri:64k type=prefix;
    keyval $uri $enablelimit zone=limitreq_uri;
    map $enablelimit $limit_key { default ""; 1 $binary_remote_addr; }
    limit_req_zone $limit_key zone=req_zone_10:1m rate=10r/s;
    server {
        listen 127.0.0.1:${await freePort()};
        location / { limit_req zone=req_zone_10; return 200 ok; }
    }
}
`,
    );
    // Two replicas of one config; the second listens elsewhere.
    const other = dir.write(
      'other.conf',
      dir.read('nginx.conf').replace(/listen 127\.0\.0\.1:\d+/, `listen 127.0.0.1:${await freePort()}`),
    );
    [controlPlane, stopped, killed] = await Promise.all([
      startControlPlane(['--redis', redis.url]),
      startReplica(config, ['--redis', redis.url, '--id', 'replica-stopped']),
      startReplica(other, ['--redis', redis.url], { env: { POD_NAME: 'replica-killed' } }),
    ]);
  });

  after(async () => {
    await stopAll();
    await redis?.stop();
    dir.remove();
  });

  async function cluster(): Promise<{ revision: number; replicas: ClusterReplica[] }> {
    const res = await request(`${controlPlane.url}/cluster/replicas`);
    assert.equal(res.statusCode, 200);
    return (await res.body.json()) as { revision: number; replicas: ClusterReplica[] };
  }

  const stateOf = async (id: string) => (await cluster()).replicas.find((r) => r.id === id)?.state;

  test('/cluster/replicas lists every running replica live, with what it runs', async () => {
    const { revision, replicas } = await cluster();
    assert.deepEqual(
      replicas.map((r) => [r.id, r.state]),
      [
        ['replica-killed', 'live'],
        ['replica-stopped', 'live'],
      ],
    );
    for (const r of replicas) {
      assert.equal(r.version, '0.1.0');
      assert.match(r.config_hash, /^[0-9a-f]{16}$/);
      assert.equal(r.applied_revision, revision);
      assert.ok(Date.parse(r.started_at) >= startedAt - 1000, r.started_at);
      assert.ok(Date.parse(r.last_heartbeat) >= Date.parse(r.started_at), r.last_heartbeat);
      assert.deepEqual(r.keyval_zones, ['limitreq_uri']);
      assert.deepEqual(r.limit_req_zones, ['req_zone_10']);
    }
    // Same http block apart from the port (and the file it is read from): config_hash tells the
    // configs apart, the hash without listen addresses does not.
    assert.notEqual(replicas[0]!.config_hash, replicas[1]!.config_hash);
    assert.match(replicas[0]!.config_hash_without_listen ?? '', /^[0-9a-f]{16}$/);
    assert.equal(replicas[0]!.config_hash_without_listen, replicas[1]!.config_hash_without_listen);
  });

  test('SIGTERM deregisters at once', async () => {
    assert.deepEqual(await stopped.process.stop(), { code: 0, signal: null });
    assert.equal(await stateOf('replica-stopped'), 'gone');
    assert.equal(await stateOf('replica-killed'), 'live');
  });

  test('a replica killed outright is gone once its heartbeat expires', async () => {
    killed.process.signal('SIGKILL');
    await killed.process.exited;
    // The heartbeat TTL is 5 s: well before that it still counts as live.
    await waitFor(async () => (await stateOf('replica-killed')) === 'gone', {
      timeoutMs: 20_000,
      intervalMs: 200,
      message: 'the killed replica to be marked gone',
    });
  });
});
