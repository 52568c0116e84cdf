/**
 * Issue 18 §3.1: a replica (or `demo`) whose port is taken logged EADDRINUSE, kept running and
 * registered as live; `demo` hung. Now it exits 1 with nginx's words and never registers.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { freePorts, LimitswitchProcess, TempDir } from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';

function occupy(port: number): Promise<Server> {
  const server = createServer();
  return new Promise((resolve) => server.listen(port, '0.0.0.0', () => resolve(server)));
}

describe('a port that cannot be bound', () => {
  let redis: RedisServer;
  const dir = new TempDir();
  const blockers: Server[] = [];
  before(async () => {
    redis = await RedisServer.start();
  });
  after(async () => {
    for (const b of blockers) b.close();
    await redis.stop();
    dir.remove();
  });

  it('replica: exits 1 with "bind() to 0.0.0.0:PORT failed (98: Address already in use)", never registered', async () => {
    const [taken, upstream] = await freePorts(2);
    blockers.push(await occupy(taken!));
    const config = dir.write(
      'nginx.conf',
      `events {}\nhttp {\n    server {\n        listen ${taken};\n        location / { proxy_pass http://127.0.0.1:${upstream}; }\n    }\n}\n`,
    );
    const replica = new LimitswitchProcess('replica', ['-c', config, '--redis', redis.url, '--id', 'r1']);
    const exit = await replica.exited;
    assert.deepEqual(exit, { code: 1, signal: null }, replica.output());
    const line = `bind() to 0.0.0.0:${taken} failed (98: Address already in use)`;
    // The process's last word, as `nginx: [emerg] …`, and the same line in the nginx-format error log.
    assert.match(replica.stderr, new RegExp(`^limitswitch: \\[emerg\\] ${escapeRegExp(line)}$`, 'm'));
    assert.match(replica.stderr, new RegExp(`\\[emerg\\] \\d+#\\d+: ${escapeRegExp(line)}$`, 'm'));
    assert.equal(await redis.cli('hlen', 'limitswitch:{default}:replicas'), '0');
  });

  it('replica: a --status-listen port in use is the same failure, and deregisters', async () => {
    const [proxy, status, upstream] = await freePorts(3);
    blockers.push(await occupy(status!));
    const config = dir.write(
      'status.conf',
      `events {}\nhttp {\n    server {\n        listen 127.0.0.1:${proxy};\n        location / { proxy_pass http://127.0.0.1:${upstream}; }\n    }\n}\n`,
    );
    const replica = new LimitswitchProcess('replica', [
      '-c',
      config,
      '--redis',
      redis.url,
      '--id',
      'r2',
      '--status-listen',
      `127.0.0.1:${status}`,
    ]);
    const exit = await replica.exited;
    assert.deepEqual(exit, { code: 1, signal: null }, replica.output());
    assert.match(
      replica.stderr,
      new RegExp(
        `^limitswitch: \\[emerg\\] ${escapeRegExp(`bind() to 127.0.0.1:${status} failed (98: Address already in use)`)}$`,
        'm',
      ),
    );
    assert.equal(await redis.cli('hexists', 'limitswitch:{default}:replicas', 'r2'), '0');
  });

  it('demo: exits 1 instead of hanging when its control-plane port is taken', async () => {
    const [cp, r1, r2, tea, coffee] = await freePorts(5);
    blockers.push(await occupy(cp!));
    const config = dir.write(
      'cafe.conf',
      `events {}\nhttp {\n    upstream tea { server 127.0.0.1:${tea}; }\n    upstream coffee { server 127.0.0.1:${coffee}; }\n    server {\n        listen 8081;\n        location /tea { proxy_pass http://tea; }\n    }\n}\n`,
    );
    const demo = new LimitswitchProcess('demo', [
      '-c',
      config,
      '--control-plane-port',
      String(cp),
      '--replica-ports',
      `${r1},${r2}`,
    ]);
    const exit = await demo.exited;
    assert.deepEqual(exit, { code: 1, signal: null }, demo.output());
    assert.match(
      demo.stderr,
      new RegExp(
        `^limitswitch: \\[emerg\\] ${escapeRegExp(`bind() to 127.0.0.1:${cp} failed (98: Address already in use)`)}$`,
        'm',
      ),
    );
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
