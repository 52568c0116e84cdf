/** limit_conn's handler (engine/limit-conn), request by request, as ngx_http_limit_conn_module.c. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildSite } from '../../src/config/build-site.ts';
import { loadConfigText } from '../../src/config/index.ts';
import { parseComplexValue } from '../../src/engine/complex-value.ts';
import { type LimitConnPolicy, limitConnections } from '../../src/engine/limit-conn/limit-conn.ts';
import { LimitConnZone, limitConnNodeBytes } from '../../src/engine/limit-conn/limit-conn-zone.ts';

type Ctx = Record<string, string>;

function zone(name: string, sizeBytes = 1 << 20): LimitConnZone {
  return new LimitConnZone(name, parseComplexValue(`$${name}`), sizeBytes);
}

function policy(
  limits: [LimitConnZone, number][],
  extra: Partial<LimitConnPolicy<Ctx>> = {},
): LimitConnPolicy<Ctx> {
  return {
    rules: limits.map(([z, conn]) => ({
      zone: z,
      keyOf: (c: Ctx) => c[z.name] ?? '',
      keyText: `$${z.name}`,
      conn,
    })),
    status: 503,
    logLevel: 'error',
    dryRun: false,
    ...extra,
  };
}

describe('limit_conn', () => {
  it('counts requests in progress per key; past the limit 503 with nginx’s line; a release frees a slot', () => {
    const addr = zone('addr');
    const p = policy([[addr, 2]]);
    const a = limitConnections(p, { addr: 'A' });
    const b = limitConnections(p, { addr: 'A' });
    assert.deepEqual([a.status, b.status], ['PASSED', 'PASSED']);
    const c = limitConnections(p, { addr: 'A' });
    assert.deepEqual([c.status, c.rejectCode, c.slots], ['REJECTED', 503, null]);
    assert.deepEqual(c.logs, [{ level: 'error', message: 'limiting connections by zone "addr"' }]);
    // another key has its own count
    assert.equal(limitConnections(p, { addr: 'B' }).status, 'PASSED');
    a.slots!.release();
    a.slots!.release(); // idempotent
    assert.equal(addr.inProgress('A'), 1);
    assert.equal(limitConnections(p, { addr: 'A' }).status, 'PASSED');
    assert.deepEqual(addr.counters, { passed: 4, rejected: 1, rejected_dry_run: 0 });
  });

  it('several zones: a refusal gives back the slots the request took in the earlier ones', () => {
    const perIp = zone('ip');
    const perServer = zone('server');
    const p = policy([
      [perIp, 10],
      [perServer, 1],
    ]);
    const first = limitConnections(p, { ip: '1', server: 's' });
    assert.equal(first.status, 'PASSED');
    const second = limitConnections(p, { ip: '1', server: 's' });
    assert.equal(second.status, 'REJECTED');
    assert.equal(perIp.inProgress('1'), 1, 'the refused request does not hold a slot in the first zone');
    assert.deepEqual(perIp.counters, { passed: 1, rejected: 0, rejected_dry_run: 0 });
    assert.deepEqual(perServer.counters, { passed: 1, rejected: 1, rejected_dry_run: 0 });
  });

  it('dry run: nothing is refused; over the limit the request is let through uncounted, and said so', () => {
    const addr = zone('addr');
    const p = policy([[addr, 1]], { dryRun: true, logLevel: 'warn' });
    limitConnections(p, { addr: 'A' });
    const over = limitConnections(p, { addr: 'A' });
    assert.deepEqual([over.status, over.rejectCode, over.slots], ['REJECTED_DRY_RUN', 0, null]);
    assert.deepEqual(over.logs, [
      { level: 'warn', message: 'limiting connections, dry run, by zone "addr"' },
    ]);
    assert.equal(addr.inProgress('A'), 1);
  });

  it('an empty key is not counted; a key over 255 bytes is skipped with an error line', () => {
    const addr = zone('addr');
    const p = policy([[addr, 1]]);
    const empty = limitConnections(p, { addr: '' });
    assert.deepEqual([empty.status, empty.slots, empty.logs], ['', null, []]);
    const long = 'x'.repeat(256);
    const skipped = limitConnections(p, { addr: long });
    assert.equal(skipped.status, '');
    assert.deepEqual(skipped.logs, [
      { level: 'error', message: `the value of the "$addr" key is more than 255 bytes: "${long}"` },
    ]);
    assert.equal(limitConnections(p, { addr: 'x'.repeat(255) }).status, 'PASSED');
  });

  it('a full zone refuses new keys (the slab line at crit), not keys it already holds', () => {
    // 32k: 32768 − 8 descriptors × 24 − 1024 = 31552 bytes, 64-byte nodes for 4-byte keys
    const small = zone('addr', 32 * 1024);
    const p = policy([[small, 5]]);
    assert.equal(limitConnNodeBytes(4), 64);
    let held = 0;
    for (let i = 0; ; i++) {
      const out = limitConnections(p, { addr: `k${String(i).padStart(3, '0')}` });
      if (out.status !== 'PASSED') {
        assert.deepEqual(out.logs, [
          { level: 'crit', message: 'ngx_slab_alloc() failed: no memory in limit_conn_zone "addr"' },
        ]);
        break;
      }
      held++;
    }
    assert.equal(held, Math.floor(31552 / 64));
    assert.equal(limitConnections(p, { addr: 'k000' }).status, 'PASSED');
  });
});

describe('limit_conn in the site’s phases', () => {
  const text = `http {
    limit_req_zone $binary_remote_addr zone=req:1m rate=1r/s;
    limit_conn_zone $binary_remote_addr zone=addr:1m;
    server { listen 8080;
      location /held/ { limit_req zone=req burst=5; limit_conn addr 1; proxy_pass http://127.0.0.1:9; }
      location /denied/ { limit_conn addr 1; deny all; proxy_pass http://127.0.0.1:9; }
      location /dry/ { limit_conn addr 1; limit_conn_dry_run on; proxy_pass http://127.0.0.1:9; }
    } }`;
  const facts = (uri: string) => ({
    method: 'GET',
    scheme: 'http' as const,
    target: uri,
    headers: { host: 'a' },
    remoteAddr: '10.0.0.1',
    remotePort: 1,
    serverAddr: '127.0.0.1',
    serverPort: 8080,
  });

  it('runs after limit_req’s delay: a held request holds no slot until the delay is over', () => {
    const site = buildSite(loadConfigText(text, 'site.conf').http);
    const first = site.evaluate(facts('/held/1'), 0);
    assert.deepEqual([first.kind, first.connStatus], ['proxy', 'PASSED']);
    const second = site.evaluate(facts('/held/2'), 0);
    assert.ok(second.kind === 'delay');
    assert.deepEqual([second.kind, second.connStatus, second.delayMs], ['delay', '', 1000]);
    // the delay is over while the first is still in progress: the second is refused now
    const after = site.resume(second.delayed);
    assert.deepEqual([after.kind, after.code, after.connStatus], ['reject', 503, 'REJECTED']);
    assert.ok(first.kind === 'proxy' && first.connections !== null);
    first.connections.release();
    const delayed = site.evaluate(facts('/held/3'), 0);
    assert.ok(delayed.kind === 'delay');
    const third = site.resume(delayed.delayed);
    assert.deepEqual([third.kind, third.connStatus], ['proxy', 'PASSED']);
    assert.ok(third.kind === 'proxy' && third.connections !== null);
    third.connections.release();
  });

  it('a denied request gives its slot back at once; dry run passes with REJECTED_DRY_RUN', () => {
    const site = buildSite(loadConfigText(text, 'site.conf').http);
    const denied = site.evaluate(facts('/denied/1'), 0);
    assert.deepEqual([denied.kind, denied.connStatus, 'connections' in denied], ['deny', 'PASSED', false]);
    assert.equal(site.limitConnZones.get('addr')!.inProgress('\x0a\x00\x00\x01'), 0);
    const held = site.evaluate(facts('/dry/1'), 0);
    const over = site.evaluate(facts('/dry/2'), 0);
    assert.ok(over.kind === 'proxy');
    assert.deepEqual([over.kind, over.connStatus, over.connections], ['proxy', 'REJECTED_DRY_RUN', null]);
    assert.ok(held.kind === 'proxy' && held.connections !== null);
    held.connections.release();
  });
});
