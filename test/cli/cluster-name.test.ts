/**
 * Issue 18 §3.8: the operations docs tell users to give each limitswitch cluster sharing one Redis its
 * own cluster name or key prefix; `--cluster-name` and `--key-prefix` (or their environment variables)
 * are how.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { startControlPlane, stopAll, TempDir } from '../helpers/limitswitch-process.ts';
import { RedisServer } from '../helpers/redis-server.ts';

const BIN = new URL('../../bin/limitswitch.js', import.meta.url).pathname;
const CONFIG = `events {}
http {
    keyval_zone zone=switches:1m;
    server { listen 8080; location /api { api write=on; } }
}
`;

describe('--cluster-name and --key-prefix', () => {
  let redis: RedisServer;
  const dir = new TempDir();
  before(async () => {
    redis = await RedisServer.start();
  });
  after(async () => {
    await stopAll();
    await redis.stop();
    dir.remove();
  });

  it('put every key under <prefix>:{<cluster>}:, so two clusters share one Redis apart', async () => {
    const config = dir.write('nginx.conf', CONFIG);
    const blue = await startControlPlane([
      '--redis',
      redis.url,
      '-c',
      config,
      '--cluster-name',
      'blue',
      '--key-prefix',
      'acme',
    ]);
    const plain = await startControlPlane(['--redis', redis.url, '-c', config]);
    const write = await fetch(`${blue.url}/api/9/http/keyvals/switches`, {
      method: 'POST',
      body: JSON.stringify({ '/coffee': '1' }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(write.status, 201);
    assert.equal(
      await redis.cli('hget', 'acme:{blue}:kv:switches', '/coffee'),
      '{"value":"1","expireAtMs":null}',
    );
    assert.equal(await redis.cli('exists', 'limitswitch:{default}:kv:switches'), '0');
    // The default cluster in the same Redis does not see blue's switch.
    assert.deepEqual(await (await fetch(`${plain.url}/api/9/http/keyvals/switches`)).json(), {});
    assert.deepEqual(await (await fetch(`${blue.url}/api/9/http/keyvals/switches`)).json(), {
      '/coffee': '1',
    });
  });

  it('are read from LIMITSWITCH_CLUSTER_NAME and LIMITSWITCH_KEY_PREFIX too', async () => {
    const config = dir.write('nginx.conf', CONFIG);
    const green = await startControlPlane(['--redis', redis.url, '-c', config], {
      LIMITSWITCH_CLUSTER_NAME: 'green',
      LIMITSWITCH_KEY_PREFIX: 'ops',
    });
    const write = await fetch(`${green.url}/api/9/http/keyvals/switches`, {
      method: 'POST',
      body: JSON.stringify({ '/tea': '1' }),
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(write.status, 201);
    assert.equal(
      await redis.cli('hget', 'ops:{green}:kv:switches', '/tea'),
      '{"value":"1","expireAtMs":null}',
    );
  });

  it('refuse a name Redis Cluster hash tags cannot carry, before anything starts', () => {
    const run = spawnSync(process.execPath, [BIN, 'control-plane', '--cluster-name', 'a}b'], {
      encoding: 'utf8',
      env: { ...process.env, REDIS_URL: '' },
    });
    assert.equal(run.status, 1);
    assert.match(
      run.stderr,
      /--cluster-name, --key-prefix: store prefix and cluster name must match \^\[A-Za-z0-9_\.-\]\+\$: "limitswitch", "a}b"/,
    );
  });
});
