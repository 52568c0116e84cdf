/**
 * Issue 18 §3.11: a cluster `DELETE` of a zone's counters zeroed `/limit_reqs` but left each replica's
 * own status API (`--status-listen`) with the old totals. Now the replica follows the reset.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, it } from 'node:test';
import {
  freePorts,
  startControlPlane,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const dir = new TempDir();
let redis: RedisServer | null = null;
const closers: (() => Promise<void>)[] = [];
after(async () => {
  for (const close of closers) await close();
  await stopAll();
  await redis?.stop();
  dir.remove();
});

it("a cluster DELETE /api/9/http/limit_reqs/{zone} zeroes the zone in every replica's own status API", async () => {
  redis = await RedisServer.start();
  const [port, upstream] = await freePorts(2);
  const app = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => app.listen(upstream, '127.0.0.1', () => resolve()));
  closers.push(() => new Promise<void>((resolve) => app.close(() => resolve())));
  const config = dir.write(
    'nginx.conf',
    `events {}
http {
    limit_req_zone $binary_remote_addr zone=one:1m rate=100r/s;
    server {
        listen 127.0.0.1:${port};
        location / { limit_req zone=one burst=100 nodelay; proxy_pass http://127.0.0.1:${upstream}; }
    }
}
`,
  );
  const cp = await startControlPlane(['--redis', redis.url, '-c', config]);
  const replica = await startReplica(config, ['--redis', redis.url, '--id', 'r1']);
  for (let i = 0; i < 3; i++) await (await fetch(`http://127.0.0.1:${port}/`)).text();
  const own = async () =>
    ((await (await fetch(`${replica.statusUrl}/api/9/http/limit_reqs/one`)).json()) as { passed: number })
      .passed;
  const cluster = async () =>
    ((await (await fetch(`${cp.url}/api/9/http/limit_reqs/one`)).json()) as { passed: number }).passed;
  assert.equal(await own(), 3);
  await waitFor(async () => (await cluster()) === 3, { message: 'the flush to reach the store' });

  assert.equal((await fetch(`${cp.url}/api/9/http/limit_reqs/one`, { method: 'DELETE' })).status, 204);
  assert.equal(await cluster(), 0);
  await waitFor(async () => (await own()) === 0, { message: "the replica's status API to follow the reset" });
  // Counting goes on from there, in both views.
  await (await fetch(`http://127.0.0.1:${port}/`)).text();
  assert.equal(await own(), 1);
  await waitFor(async () => (await cluster()) === 1, { message: 'the next flush' });
});
