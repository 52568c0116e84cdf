/**
 * The replica's state file (like NGINX Plus `state=`): a replica keeps the applied switches in it, and
 * a replica started while Redis is down loads them from it — ready, and enforcing them at once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { request } from 'undici';
import { freePort } from '../helpers/free-port.ts';
import {
  type ControlPlaneRun,
  metricValue,
  type ReplicaRun,
  startControlPlane,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { startUpstream, type TestUpstream } from './http/harness.ts';

describe('replica: state file', () => {
  const dir = new TempDir();
  let redis: RedisServer;
  let upstream: TestUpstream;
  let controlPlane: ControlPlaneRun;
  let first: ReplicaRun;
  let second: ReplicaRun | undefined;
  let config: string;
  let listen: number;
  let revision: number;

  before(async () => {
    listen = await freePort();
    [redis, upstream] = await Promise.all([RedisServer.start(), startUpstream()]);
    config = dir.write(
      'nginx.conf',
      `events {}
http {
    keyval_zone zone=limitreq_uri:64k type=prefix;
    keyval $uri $enablelimit zone=limitreq_uri;
    map $enablelimit $limit_key { default ""; 1 $binary_remote_addr; }
    limit_req_zone $limit_key zone=switched:1m rate=1r/m;
    upstream backend { server 127.0.0.1:${upstream.port}; }
    server {
        listen 127.0.0.1:${listen};
        location / { limit_req zone=switched; proxy_pass http://backend; }
    }
}
`,
    );
    [controlPlane, first] = await Promise.all([
      startControlPlane(['--redis', redis.url, '-c', config]),
      startReplica(config, ['--redis', redis.url, '--state-file', dir.file('state.json')]),
    ]);
  });

  after(async () => {
    await stopAll();
    await Promise.all([redis?.stop(), upstream?.close()]);
    dir.remove();
  });

  test('the applied switches are written to the state file', async () => {
    const res = await request(
      `${controlPlane.url}/api/9/http/keyvals/limitreq_uri?wait=applied&timeout=20s`,
      {
        method: 'POST',
        body: '{"/coffee":"1"}',
        headers: { 'content-type': 'application/json' },
      },
    );
    assert.equal(res.statusCode, 201, await res.body.text());
    revision = Number(res.headers['x-limitswitch-revision']);
    await waitFor(() => dir.read('state.json').includes('"/coffee"'), { message: 'the state file' });
    assert.deepEqual(await first.process.stop(), { code: 0, signal: null });
    const saved = JSON.parse(dir.read('state.json')) as { revision: number; zones: Record<string, unknown> };
    assert.equal(saved.revision, revision);
    assert.deepEqual(Object.keys(saved.zones.limitreq_uri as object), ['/coffee']);
  });

  test('a replica started while Redis is down enforces the switches from the state file', async () => {
    await redis.kill();
    second = await startReplica(config, ['--redis', redis.url, '--state-file', dir.file('state.json')]);
    const status = (path: string) => request(`${second!.statusUrl}${path}`);

    const ready = await status('/readyz');
    assert.equal(ready.statusCode, 200);
    const body = (await ready.body.json()) as Record<string, unknown>;
    assert.deepEqual(
      { status: body.status, revision: body.revision, connected: body.connected, source: body.source },
      { status: 'ready', revision, connected: false, source: 'state-file' },
    );
    assert.match(
      String(body.lastError),
      /^keyval store unavailable: redis:\/\/127\.0\.0\.1:\d+: connection refused/,
    );
    assert.deepEqual(await (await status('/api/9/http/keyvals/limitreq_uri')).body.json(), {
      '/coffee': '1',
    });
    const metrics = await (await status('/metrics')).body.text();
    assert.equal(metricValue(metrics, 'limitswitch_sync_connected'), 0);
    assert.equal(metricValue(metrics, 'limitswitch_sync_applied_revision'), revision);

    const base = `http://127.0.0.1:${second.ports[String(listen)]}`;
    const codes: number[] = [];
    for (const path of ['/coffee/latte', '/coffee/latte', '/tea', '/tea']) {
      const res = await request(`${base}${path}`);
      await res.body.dump();
      codes.push(res.statusCode);
    }
    assert.deepEqual(codes, [200, 503, 200, 200]);
  });
});
