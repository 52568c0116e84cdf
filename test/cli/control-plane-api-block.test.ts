/**
 * Issue 18 §3.6: the control plane ignored the `api` server block of `-c FILE` — its `listen`, its
 * `allow`/`deny` — and answered reads from any address. Now it serves them as NGINX Plus would: the
 * block's `listen` unless `--listen` says otherwise, its rules for every API read and write (probes,
 * metrics and docs stay open), and `api write=off` as read-only.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { request } from 'undici';
import {
  freePorts,
  LimitswitchProcess,
  startControlPlane,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';

const JSON_TYPE = { 'content-type': 'application/json' };

const config = (port: number, rules: string, write = 'on') => `events {}
http {
    keyval_zone zone=switches:64k;
    server {
        listen 127.0.0.1:${port};
        ${rules}
        location /api { api write=${write}; }
    }
}
`;

async function start(file: string, args: string[] = []): Promise<LimitswitchProcess> {
  const cp = new LimitswitchProcess('control-plane', ['-c', file, ...args]);
  await cp.waitForLog('control plane listening');
  return cp;
}

describe('control-plane -c FILE: the api server block applies', () => {
  const dir = new TempDir();
  after(async () => {
    await stopAll();
    dir.remove();
  });

  it("listens where the block's listen says, and its deny refuses reads and writes with 403", async () => {
    const [port] = await freePorts(1);
    const cp = await start(dir.write('deny.conf', config(port!, 'allow 10.0.0.0/8;\n        deny all;')));
    const url = `http://127.0.0.1:${port}`;
    const read = await fetch(`${url}/api/9/http/keyvals/switches`);
    assert.equal(read.status, 403);
    assert.deepEqual(((await read.json()) as { error: unknown }).error, {
      status: 403,
      text: 'access forbidden by rule (client 127.0.0.1)',
      code: 'Forbidden',
    });
    assert.equal((await fetch(`${url}/limit_reqs`)).status, 403);
    const write = await fetch(`${url}/api/9/http/keyvals/switches`, {
      method: 'POST',
      body: '{"a":"1"}',
      headers: JSON_TYPE,
    });
    assert.equal(write.status, 403);
    // The cluster's own checks stay open.
    assert.equal((await fetch(`${url}/healthz`)).status, 200);
    await cp.stop();
  });

  it('an allowed client is served; --listen still wins over the block', async () => {
    const [blockPort, flagPort] = await freePorts(2);
    await start(dir.write('allow.conf', config(blockPort!, 'allow 127.0.0.1;\n        deny all;')), [
      '--listen',
      `127.0.0.1:${flagPort}`,
    ]);
    const url = `http://127.0.0.1:${flagPort}`;
    const write = await fetch(`${url}/api/9/http/keyvals/switches`, {
      method: 'POST',
      body: '{"a":"1"}',
      headers: JSON_TYPE,
    });
    assert.equal(write.status, 201);
    assert.deepEqual(await (await fetch(`${url}/api/9/http/keyvals/switches`)).json(), { a: '1' });
  });

  it('api write=off: every write answers 405 MethodDisabled', async () => {
    const [port] = await freePorts(1);
    await start(dir.write('readonly.conf', config(port!, '', 'off')));
    const write = await fetch(`http://127.0.0.1:${port}/api/9/http/keyvals/switches`, {
      method: 'POST',
      body: '{"a":"1"}',
      headers: JSON_TYPE,
    });
    assert.equal(write.status, 405);
    assert.equal(((await write.json()) as { error: { code: string } }).error.code, 'MethodDisabled');
  });

  it("writes name the API's hosts: the block's server_name, --server-name, IP addresses, localhost", async () => {
    const [port] = await freePorts(1);
    const file = dir.write(
      'names.conf',
      config(port!, 'server_name api.example.test *.cp.example.test ~^re[0-9]+$;'),
    );
    const cp = await startControlPlane([
      '-c',
      file,
      '--server-name',
      'ops.example.test',
      '--server-name=other.example.test',
    ]);
    const bound = new URL(cp.url).host;
    const post = async (headers: Record<string, string>, key: string) => {
      const res = await request(`${cp.url}/api/9/http/keyvals/switches`, {
        method: 'POST',
        body: JSON.stringify({ [key]: '1' }),
        headers: { 'content-type': 'application/json', ...headers },
      });
      return { status: res.statusCode, body: await res.body.text() };
    };
    // DNS rebinding: the attacker's name, resolved to this address.
    const rebound = await post({ host: 'rebind.attacker.example' }, 'evil');
    assert.equal(rebound.status, 421);
    assert.deepEqual(JSON.parse(rebound.body).error, {
      status: 421,
      text: 'host "rebind.attacker.example" is not one of this API\'s names; allow it with --server-name rebind.attacker.example',
      code: 'HostNotAllowed',
    });
    // A regex server_name is not taken (and the start-up log says so).
    assert.equal((await post({ host: 're1' }, 'evil')).status, 421);
    await cp.process.waitForLog(
      'a regex server_name of the api server is not matched against the Host of writes: name those hosts with --server-name',
      (line) => line.server_name === '~^re[0-9]+$',
    );
    // A page of another origin, and a text/plain body (a "simple" cross-origin request).
    assert.equal((await post({ host: bound, origin: 'http://evil.example' }, 'evil')).status, 403);
    const plain = await request(`${cp.url}/api/9/http/keyvals/switches`, {
      method: 'POST',
      body: '{"evil":"1"}',
      headers: { 'content-type': 'text/plain;charset=UTF-8' },
    });
    assert.equal(plain.statusCode, 415);
    assert.equal(((await plain.body.json()) as { error: { code: string } }).error.code, 'ContentTypeNotJson');
    const own = [
      'api.example.test',
      'a.cp.example.test:8443',
      'ops.example.test',
      'other.example.test',
      bound,
      `localhost:${new URL(cp.url).port}`,
    ];
    for (const [i, host] of own.entries()) {
      const res = await post({ host, origin: `http://${host}` }, `k${i}`);
      assert.equal(res.status, 201, `${host}: ${res.body}`);
    }
    const stored = (await (await fetch(`${cp.url}/api/9/http/keyvals/switches`)).json()) as object;
    assert.deepEqual(
      Object.keys(stored).sort(),
      own.map((_, i) => `k${i}`),
    );
    await cp.process.stop();
  });
});
