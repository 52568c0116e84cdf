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
    const config = dir.write('nginx.conf', proxyConf(taken!, upstream!));
    const replica = new LimitswitchProcess('replica', ['-c', config, '--redis', redis.url, '--id', 'r1']);
    const exit = await replica.exited;
    assert.deepEqual(exit, { code: 1, signal: null }, replica.output());
    const line = `bind() to 0.0.0.0:${taken} failed (98: Address already in use)`;
    // The process's last word, as `nginx: [emerg] …`, and only that on the terminal (issue 34 §9):
    // the error log is the terminal too by default, and nginx does not say it twice there either.
    assert.equal(replica.stderr, `limitswitch: [emerg] ${line}\n`);
    assert.equal(await redis.cli('hlen', 'limitswitch:{default}:replicas'), '0');
  });

  it('replica --error-log FILE: the bind failure is in the file as nginx logs it, and once on the terminal', async () => {
    const [taken, upstream] = await freePorts(2);
    blockers.push(await occupy(taken!));
    const config = dir.write('logged.conf', proxyConf(taken!, upstream!));
    const errorLog = dir.file('error.log');
    const replica = new LimitswitchProcess('replica', [
      '-c',
      config,
      '--redis',
      redis.url,
      '--id',
      'r3',
      '--error-log',
      errorLog,
    ]);
    const exit = await replica.exited;
    assert.deepEqual(exit, { code: 1, signal: null }, replica.output());
    const line = `bind() to 0.0.0.0:${taken} failed (98: Address already in use)`;
    assert.equal(replica.stderr, `limitswitch: [emerg] ${line}\n`);
    assert.match(
      dir.read('error.log'),
      new RegExp(`^\\S+ \\S+ \\[emerg\\] \\d+#\\d+: ${escapeRegExp(line)}\n$`),
    );
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

  // Issue 34 §6: every port the demo binds has a flag, and the failure names it.
  const demoCases = [
    { part: 'control-plane', flag: '--control-plane-port <port>', taken: (p: DemoPorts) => p.cp },
    { part: 'replica', flag: '--replica-ports <ports>', taken: (p: DemoPorts) => p.r2 },
    { part: 'upstream (tea)', flag: '--upstream-ports <ports>', taken: (p: DemoPorts) => p.tea },
  ];
  for (const { part, flag, taken: takenOf } of demoCases) {
    it(`demo: exits 1 when its ${part} port is taken, once, naming ${flag.split(' ')[0]}`, async () => {
      const [cp, r1, r2, tea, coffee] = (await freePorts(5)) as number[];
      const ports: DemoPorts = { cp: cp!, r1: r1!, r2: r2!, tea: tea!, coffee: coffee! };
      const taken = takenOf(ports);
      blockers.push(await occupy(taken));
      const demo = new LimitswitchProcess('demo', [
        '--control-plane-port',
        String(cp),
        '--replica-ports',
        `${r1},${r2}`,
        '--upstream-ports',
        `${tea},${coffee}`,
        // Its own file, not the default one in the system's temporary directory.
        '--error-log',
        dir.file(`demo-${taken}-error.log`),
      ]);
      const exit = await demo.exited;
      assert.deepEqual(exit, { code: 1, signal: null }, demo.output());
      const line = `limitswitch: [emerg] bind() to 127.0.0.1:${taken} failed (98: Address already in use) — move it with ${flag}`;
      assert.match(demo.stderr, new RegExp(`^${escapeRegExp(line)}$`, 'm'));
      // Issue 34 §9: said once, not also as an error-log line.
      assert.equal(demo.stderr.split('bind() to').length - 1, 1, demo.output());
    });
  }
});

interface DemoPorts {
  cp: number;
  r1: number;
  r2: number;
  tea: number;
  coffee: number;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** A server on `port` proxying everything to `upstream`. */
function proxyConf(port: number, upstream: number): string {
  return `events {}\nhttp {\n    server {\n        listen ${port};\n        location / { proxy_pass http://127.0.0.1:${upstream}; }\n    }\n}\n`;
}
