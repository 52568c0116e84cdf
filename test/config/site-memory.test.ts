/**
 * A worker thread's site built on the zones another site shared (engine/http/site-memory.ts,
 * build-site.ts): one limit_req table, one limit_conn count, one set of counters, keyval switches
 * read from the owner's publication, as nginx's workers share a zone.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import { buildSite } from '../../src/config/build-site.ts';
import { loadConfigText } from '../../src/config/index.ts';
import type { Site } from '../../src/engine/http/site.ts';
import { shareSite } from '../../src/engine/http/site-memory.ts';
import { LOOKUP_BUSY, LOOKUP_OK } from '../../src/engine/limit-req/limit-req-zone.ts';
import type { RequestFacts } from '../../src/engine/variables/request-context.ts';
import { startTypeScriptWorker } from '../helpers/typescript-worker.ts';

const CONFIG = `http {
  keyval_zone zone=switches:64k type=prefix;
  keyval $uri $limited zone=switches;
  map $limited $limit_key { default ""; 1 $binary_remote_addr; }
  limit_req_zone $limit_key zone=per_client:64k rate=1r/s;
  limit_conn_zone $binary_remote_addr zone=conns:64k;
  server { listen 8081; server_name cafe.example.com;
    location /coffee { limit_req zone=per_client; limit_conn conns 100; proxy_pass http://127.0.0.1:9; } }
}`;
const NOW_MS = 1_700_000_000_000;
const WORKER_REQUESTS = 5;

function facts(remoteAddr: string): RequestFacts {
  return {
    method: 'GET',
    scheme: 'http',
    target: '/coffee/latte',
    headers: { host: 'cafe.example.com' },
    remoteAddr,
    remotePort: 40000,
    serverAddr: '127.0.0.1',
    serverPort: 8081,
  };
}

/** limit_req's status for one request (its limit_conn slot kept, as a request in progress keeps it). */
function decide(site: Site, remoteAddr: string): string {
  const f = facts(remoteAddr);
  return site.decide(site.route(f.target, f.headers.host, f.serverAddr, f.serverPort)!, f, NOW_MS).status;
}

/** In a worker: the site built on the shared zones decides requests from one client at one instant. */
function workerSite(): void {
  const site = buildSite(loadConfigText(CONFIG, 'worker.conf').http, undefined, workerData.attach);
  const statuses = Array.from({ length: WORKER_REQUESTS }, () => decide(site, '10.0.0.1'));
  parentPort!.postMessage(statuses);
}

if (!isMainThread && workerData?.test === 'site-memory') workerSite();
else
  describe('a worker thread’s site on shared zones', () => {
    it('decides on the owner’s zones: one table, one count, one set of counters, the owner’s switches', async () => {
      const owner = buildSite(loadConfigText(CONFIG, 'owner.conf').http);
      const switches = owner.keyvalZones.get('switches')!;
      switches.set('/coffee', { value: '1', expireAtMs: null });
      const memory = shareSite(owner);
      const worker = startTypeScriptWorker(new URL(import.meta.url), {
        test: 'site-memory',
        attach: { memory, slice: 1 },
      });
      const [statuses] = (await once(worker, 'message')) as [string[]];
      await worker.terminate();
      // the switch the owner set is on in the worker: the first request passes, the rest are over 1r/s
      assert.deepEqual(statuses, ['PASSED', ...Array(WORKER_REQUESTS - 1).fill('REJECTED')]);
      // the owner's next request meets the worker's bucket
      assert.equal(decide(owner, '10.0.0.1'), 'REJECTED');
      assert.equal(decide(owner, '10.0.0.2'), 'PASSED');
      const zone = owner.limitReqZones.get('per_client')!;
      assert.deepEqual(
        { ...zone.counters },
        { passed: 2, delayed: 0, rejected: WORKER_REQUESTS, delayed_dry_run: 0, rejected_dry_run: 0 },
      );
      // the worker's request in progress holds its limit_conn slot in the owner's zone
      const conns = owner.limitConnZones.get('conns')!;
      assert.equal(conns.inProgress('\x0a\x00\x00\x01'), 1);
      assert.equal(conns.counters.passed, 2);
    });

    it('a reload shares the same memory for the zones it kept, and new memory for a changed one', () => {
      const owner = buildSite(loadConfigText(CONFIG, 'owner.conf').http);
      const before = shareSite(owner);
      const kept = buildSite(loadConfigText(CONFIG, 'owner.conf').http, owner);
      const after = shareSite(kept);
      assert.equal(after.limitReq.get('per_client')!.state, before.limitReq.get('per_client')!.state);
      assert.equal(after.limitConn.get('conns')!.counters, before.limitConn.get('conns')!.counters);
      assert.equal(after.keyval.get('switches')!.header, before.keyval.get('switches')!.header);
      const resized = buildSite(
        loadConfigText(CONFIG.replace('per_client:64k', 'per_client:128k'), 'x').http,
        kept,
      );
      assert.notEqual(
        shareSite(resized).limitReq.get('per_client')!.state,
        before.limitReq.get('per_client')!.state,
      );
    });

    it('a sync zone is shared: a worker’s decisions are in the zone’s sync state the owner collects', () => {
      const synced = CONFIG.replace('rate=1r/s;', 'rate=1r/s sync;');
      const owner = buildSite(loadConfigText(synced, 'owner.conf').http);
      const worker = buildSite(loadConfigText(synced, 'worker.conf').http, undefined, {
        memory: shareSite(owner),
        slice: 1,
      });
      const zone = worker.limitReqZones.get('per_client')!;
      const [first, second] = [0, 1].map(() => zone.lookup('\x0a\x00\x00\x01', NOW_MS, 0, true));
      assert.deepEqual([first, second], [LOOKUP_OK, LOOKUP_BUSY]);
      const ownerZone = owner.limitReqZones.get('per_client')!;
      assert.equal(ownerZone.sync!.pending, 1);
      const [entry] = ownerZone.sync!.collect(ownerZone.table);
      assert.deepEqual({ charged: entry!.charged, seen: entry!.seen }, { charged: 1, seen: 2 });
      // the store's answer, applied by the owner, is what the worker's next lookup costs
      ownerZone.sync!.apply(ownerZone.table, entry!, { excessMilli: 0, share: 0.5 }, NOW_MS);
      assert.equal(zone.sync!.costMilli(entry!.node, NOW_MS), 2000);
    });
  });
