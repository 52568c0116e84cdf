/**
 * examples/max-in-flight: Kubernetes' max-in-flight filter on a replica process, rule by rule. The
 * example file as shipped, with its budgets made small (400 read-only → 2, 200 mutating → 1) and its
 * upstream and port pointed at the test's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/free-port.ts';
import { GatedUpstream } from '../helpers/gated-upstream.ts';
import {
  metricValue,
  type ReplicaRun,
  startReplica,
  stopAll,
  TempDir,
} from '../helpers/limitswitch-process.ts';

const EXAMPLE = new URL('../../examples/max-in-flight/nginx.conf', import.meta.url);

interface Answer {
  readonly status: number;
  readonly retryAfter: string | null;
}

describe('examples/max-in-flight', () => {
  const dir = new TempDir();
  let gate: GatedUpstream;
  let replica: ReplicaRun;
  let url: string;
  let held = 0;

  const send = async (
    method: string,
    path: string,
    headers: Record<string, string> = {},
  ): Promise<Answer> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-forwarded-for': '192.0.2.1', ...headers },
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    return { status: res.status, retryAfter: res.headers.get('retry-after') };
  };
  /** A request that stays in progress (held at the upstream) until the test's end. */
  const hold = async (method: string, headers: Record<string, string> = {}, query = '') => {
    const path = `/hold${held++}${query}`;
    void fetch(`${url}${path}`, { method, headers: { 'x-forwarded-for': '192.0.2.1', ...headers } }).then(
      (res) => res.arrayBuffer(),
      () => {},
    );
    await gate.arrived(path);
  };

  before(async () => {
    gate = await GatedUpstream.start();
    const port = await freePort();
    const text = readFileSync(EXAMPLE, 'utf8')
      .replace('limit_conn readonly_inflight 400;', 'limit_conn readonly_inflight 2;')
      .replace('limit_conn mutating_inflight 200;', 'limit_conn mutating_inflight 1;')
      .replace('server 127.0.0.1:9000;', `server 127.0.0.1:${gate.port};`)
      .replace('listen 8080;', `listen 127.0.0.1:${port};`);
    assert.match(text, /readonly_inflight 2;[\s\S]*mutating_inflight 1;/);
    replica = await startReplica(dir.write('nginx.conf', text));
    url = `http://127.0.0.1:${replica.ports[String(port)]}`;
  });

  after(async () => {
    gate?.close();
    await stopAll();
    dir.remove();
  });

  it('read-only requests: exactly past the budget, 429 with Retry-After: 1', async () => {
    await hold('GET');
    await hold('HEAD');
    assert.deepEqual(await send('GET', '/x'), { status: 429, retryAfter: '1' });
    assert.deepEqual(await send('HEAD', '/x'), { status: 429, retryAfter: '1' });
    // what the apiserver reports as its current in-flight read-only requests
    const metrics = await (await fetch(`${replica.statusUrl}/metrics`)).text();
    assert.equal(
      metricValue(metrics, 'limitswitch_limit_conn_requests_in_progress{zone="readonly_inflight"}'),
      2,
    );
    assert.equal(metricValue(metrics, 'nginxplus_limit_connection_rejected{zone="readonly_inflight"}'), 2);
  });

  it('mutating requests are counted apart: one passes while reads are full, the next is 429', async () => {
    await hold('POST');
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      assert.deepEqual(await send(method, '/x'), { status: 429, retryAfter: '1' }, method);
    }
  });

  it('the privileged class is never limited', async () => {
    const privileged = { 'x-forwarded-for': '10.1.2.3' };
    assert.deepEqual(await send('GET', '/x', privileged), { status: 200, retryAfter: null });
    assert.deepEqual(await send('DELETE', '/x', privileged), { status: 200, retryAfter: null });
  });

  it('long-running requests are not counted: watches, and they hold no slot', async () => {
    assert.deepEqual(await send('GET', '/x?watch=true'), { status: 200, retryAfter: null });
    // a watch held open does not take a read-only slot: plain reads are still refused, not more so
    await hold('GET', {}, '?watch=1');
    assert.equal((await send('GET', '/x?watch=false')).status, 429);
  });
});
