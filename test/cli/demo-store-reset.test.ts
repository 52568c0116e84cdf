/**
 * Issue 18 §3.2: the demo on Redis, Redis restarted empty: every switch disappeared within 350 ms and
 * the logs said nothing. The replicas already had the loud store reset (test/faults/store-reset.test.ts:
 * warning, metric, audit, restore); the demo's replicas logged nowhere. Now its log says it too.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePorts, LimitswitchProcess, TempDir } from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import { waitFor } from '../helpers/wait-for.ts';

const CAFE = fileURLToPath(new URL('../../examples/cafe/nginx.conf', import.meta.url));
const dir = new TempDir();
let redis: RedisServer | null = null;
let demo: LimitswitchProcess | null = null;
after(async () => {
  await demo?.stop();
  await redis?.stop();
  dir.remove();
});

it('demo --redis: a Redis restarted empty is a warning naming the epochs and the count, and the switch comes back, audited', async () => {
  redis = await RedisServer.start();
  const [cp, tea, coffee, r1, r2] = await freePorts(5);
  const config = dir.write(
    'nginx.conf',
    readFileSync(CAFE, 'utf8')
      .replace('127.0.0.1:8091', `127.0.0.1:${tea}`)
      .replace('127.0.0.1:8092', `127.0.0.1:${coffee}`),
  );
  demo = new LimitswitchProcess('demo', [
    '-c',
    config,
    '--redis',
    redis.url,
    '--control-plane-port',
    String(cp),
    '--replica-ports',
    `${r1},${r2}`,
    '--error-log',
    dir.file('error.log'),
  ]);
  const api = `http://127.0.0.1:${cp}`;
  await waitFor(async () => demo!.stdout.includes('Ctrl-C stops everything.'), { timeoutMs: 30_000 });
  const write = await fetch(`${api}/api/9/http/keyvals/limitreq_uri?wait=applied`, {
    method: 'POST',
    body: JSON.stringify({ '/coffee': '1' }),
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(write.status, 201, await write.text());

  await redis.kill();
  await redis.restart();
  await waitFor(
    () =>
      demo!.lines.some((l) =>
        /^keyval store came back empty \(epoch \S+ → \S+\): restored 1 switches from this replica$/.test(
          l.msg,
        ),
      ),
    { timeoutMs: 20_000, message: `the store reset warning in the demo's log:\n${demo.output()}` },
  );
  await waitFor(async () => {
    const zone = (await (await fetch(`${api}/api/9/http/keyvals/limitreq_uri`)).json()) as Record<
      string,
      string
    >;
    return zone['/coffee'] === '1';
  });
  const audit = (await (await fetch(`${api}/audit?limit=10`)).json()) as { reason: string | null }[];
  assert.ok(
    audit.some((e) => e.reason?.startsWith('store reset (epoch ')),
    JSON.stringify(audit),
  );
});
