/**
 * Real-world configurations, unchanged (test/fixtures/real-configs/README.md says where each is from):
 * nginx's own sample `nginx.conf` passes `check`; ingress-nginx's and NIC's documented rewrite and
 * rate-limit Ingresses render without an error and, served by a replica, do what their documentation
 * says they do.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { request } from 'undici';
import { stringify } from 'yaml';
import { render } from '../../src/cli/render-command.ts';
import { loadConfigFile } from '../../src/config/index.ts';
import type { Replica } from '../../src/replica/replica.ts';
import { startInProcessReplica } from '../helpers/in-process-replica.ts';
import { TempDir } from '../helpers/limitswitch-process.ts';
import { endpointSlice, service } from '../k8s/builders.ts';
import { startUpstream, type TestUpstream, type UpstreamRecord } from '../replica/http/harness.ts';

const FIXTURES = new URL('../fixtures/real-configs/', import.meta.url);
const fixture = (name: string) => new URL(name, FIXTURES).pathname;

describe("nginx's sample nginx.conf", () => {
  it('passes check unchanged', () => {
    const config = loadConfigFile(fixture('nginx-conf/nginx.conf'));
    assert.ok(config.http);
  });
});

describe("ingress-nginx's and NIC's documented Ingresses, served", () => {
  const dir = new TempDir();
  let backend: TestUpstream;
  let replica: Replica;
  let port: number;
  let messages: string[];

  before(async () => {
    backend = await startUpstream();
    // the Services the examples name, each with the test's backend as its one endpoint
    const cluster = ['http-svc', 'coffee-svc', 'tea-svc'].flatMap((svc) => [
      service(svc, [{ port: 80 }]),
      endpointSlice(svc, [{ port: backend.port }], [{ ip: '127.0.0.1' }]),
    ]);
    const objects = dir.write('cluster.yaml', cluster.map((o) => stringify(o)).join('---\n'));
    // the NIC examples all name one Ingress, default/cafe-ingress: one of them is served beside
    // ingress-nginx's two (rewrite.bar.com, approot.bar.com)
    const out = render({
      file: [fixture('ingress-nginx-rewrite.yaml'), fixture('nic-regex-rewrite.yaml'), objects],
    });
    assert.equal(out.exitCode, 0, out.messages.join('\n'));
    messages = out.messages;
    const text = out.text;
    ({ replica, port } = await startInProcessReplica('real-configs', text));
  });

  after(async () => {
    await replica?.close();
    await backend?.close();
    dir.remove();
  });

  async function get(host: string, target: string) {
    const res = await request(`http://127.0.0.1:${port}${target}`, { headers: { host } });
    const text = await res.body.text();
    const url = res.statusCode === 200 ? (JSON.parse(text) as UpstreamRecord).url : null;
    return { status: res.statusCode, url, location: res.headers.location };
  }

  it('ingress-nginx rewrite: /something, /something/ and /something/new reach the backend as /, / and /new', async () => {
    assert.deepEqual(await get('rewrite.bar.com', '/something'), {
      status: 200,
      url: '/',
      location: undefined,
    });
    assert.equal((await get('rewrite.bar.com', '/something/')).url, '/');
    assert.equal((await get('rewrite.bar.com', '/something/new')).url, '/new');
  });

  it('ingress-nginx app-root: / answers 302 to http://approot.bar.com/app1', async () => {
    const r = await get('approot.bar.com', '/');
    assert.equal(r.status, 302);
    assert.equal(r.location, 'http://approot.bar.com/app1');
    assert.equal((await get('approot.bar.com', '/app1')).url, '/app1');
  });

  it('NIC regex rewrite: /menu/coffee/espresso and /menu/tea/green reach /beverages/…', async () => {
    assert.equal((await get('cafe.example.com', '/menu/coffee/espresso')).url, '/beverages/coffee/espresso');
    assert.equal((await get('cafe.example.com', '/menu/tea/green')).url, '/beverages/tea/green');
    assert.equal((await get('cafe.example.com', '/menu/tea')).status, 404);
  });

  it('names what it does not carry (the TLS secret the examples do not include), never silently', () => {
    assert.ok(
      messages.every((m) => !m.includes('[error]')),
      messages.join('\n'),
    );
  });

  it('NIC simple rewrite and rate limit render without an error', () => {
    for (const f of ['nic-simple-rewrite.yaml', 'nic-rate-limit.yaml']) {
      const out = render({ file: [fixture(f)] });
      assert.equal(out.exitCode, 0, out.messages.join('\n'));
    }
    const limited = render({ file: [fixture('nic-rate-limit.yaml')] }).text;
    assert.match(
      limited,
      /limit_req_zone \$\{binary_remote_addr\} zone=default\/cafe-ingress:10M rate=1r\/s;/,
    );
    const simple = render({ file: [fixture('nic-simple-rewrite.yaml')] }).text;
    assert.match(simple, /rewrite \/coffee \/beverages\/coffee break;/);
  });
});
