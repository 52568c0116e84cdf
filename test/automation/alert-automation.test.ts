import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { storeUnavailableError } from '../../src/store/keyval-errors.ts';
import { openMemoryStore } from '../../src/store/memory/open-memory-store.ts';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import type { Store } from '../../src/store/store.ts';
import { RedisServer } from '../helpers/redis-server.ts';
import {
  ACTOR,
  alert,
  automationOn,
  Clock,
  CountingCounters,
  notification,
  T0,
  ZONES,
} from './automation-fixtures.ts';

const COFFEE = { alertname: 'CoffeeOverloaded', path: '/coffee' };
const SERVER = { alertname: 'ServerOverloaded', host: 'cafe.example.com' };

type StoreFactory = (clock: Clock) => Promise<Store>;

function automationSuite(name: string, makeStore: StoreFactory): void {
  describe(`alert automation on the ${name} store`, { timeout: 60_000 }, () => {
    async function setup() {
      const clock = new Clock();
      const store = await makeStore(clock);
      await store.registry.registerZones(ZONES);
      const counters = new CountingCounters();
      const warnings: string[] = [];
      const automation = automationOn(store, clock, { counters, warnings });
      const zone = async (zoneName: string) => store.keyvals.getZone(zoneName, clock.nowMs);
      // Automation's own state: lease records, never keyvals.
      const records = async () => ({ ...(await store.leases.records('automation/', clock.nowMs)) });
      return { clock, store, counters, warnings, automation, zone, records };
    }

    it('a firing alert sets the key with its TTL, audited with the alert; a re-sent one only refreshes', async () => {
      const { clock, store, counters, automation, zone, records } = await setup();
      const first = await automation.handle(notification([alert('firing', 'fp-coffee', COFFEE)]), ACTOR);
      assert.deepEqual(first.errors, []);
      assert.equal(first.results.length, 1);
      assert.deepEqual(
        { ...first.results[0], revision: undefined },
        {
          rule: 'coffee',
          alertname: 'CoffeeOverloaded',
          fingerprint: 'fp-coffee',
          status: 'firing',
          zone: 'limitreq_uri',
          key: '/coffee',
          action: 'set',
          old: null,
          new: '1',
          dry_run: false,
          revision: undefined,
        },
      );
      assert.deepEqual(await zone('limitreq_uri'), { '/coffee': { value: '1', expireAtMs: T0 + 600_000 } });
      // The switched key is the only keyval change: replicas see one revision, nothing of the lease.
      assert.equal((await store.keyvals.head()).revision, 1);
      assert.equal(first.results[0]!.revision, 1);
      const [entry] = await store.audit.recent(10);
      assert.deepEqual(entry, {
        timeMs: T0,
        tokenId: 'alertmanager',
        client: '10.0.0.9',
        zone: 'limitreq_uri',
        key: '/coffee',
        old: null,
        new: '1',
        revision: first.results[0]!.revision,
        reason: 'alert CoffeeOverloaded firing (fingerprint fp-coffee, rule coffee)',
      });

      clock.nowMs += 60_000;
      const again = await automation.handle(notification([alert('firing', 'fp-coffee', COFFEE)]), ACTOR);
      assert.equal(again.results[0]!.action, 'refresh');
      assert.deepEqual(await zone('limitreq_uri'), { '/coffee': { value: '1', expireAtMs: T0 + 660_000 } });
      assert.equal((await store.audit.recent(10)).length, 1);
      assert.equal(counters.get('change coffee set'), 1);
      assert.equal(counters.get('notification coffee'), 2);
      assert.equal((await store.keyvals.head()).revision, 2, 'the refresh rewrote the key, nothing else');
      // Only the record is left: the lease is released.
      assert.deepEqual(Object.keys(await records()), ['automation/state/limitreq_uri/%2Fcoffee']);
      assert.ok(await store.leases.acquire('automation/limitreq_uri/%2Fcoffee', 1000), 'lease released');
    });

    it('restores the value from before the alert on resolve; a re-sent resolve changes nothing', async () => {
      const { store, automation, zone, records } = await setup();
      await store.keyvals.set('limitreq_uri', '/coffee', { value: '0', expireAtMs: null });
      await automation.handle(notification([alert('firing', 'fp-coffee', COFFEE)]), ACTOR);
      assert.equal((await zone('limitreq_uri'))['/coffee']?.value, '1');
      const resolved = await automation.handle(notification([alert('resolved', 'fp-coffee', COFFEE)]), ACTOR);
      assert.deepEqual(
        resolved.results.map((r) => [r.action, r.old, r.new]),
        [['restore', '1', '0']],
      );
      assert.deepEqual(await zone('limitreq_uri'), { '/coffee': { value: '0', expireAtMs: null } });
      assert.deepEqual(await records(), {});
      const revision = (await store.keyvals.head()).revision;
      assert.equal(revision, 3, "the operator's set, the alert's set, the restore");
      const again = await automation.handle(notification([alert('resolved', 'fp-coffee', COFFEE)]), ACTOR);
      assert.equal(again.results[0]!.action, 'none');
      assert.deepEqual(await zone('limitreq_uri'), { '/coffee': { value: '0', expireAtMs: null } });
      assert.equal(
        (await store.audit.recent(10))[0]!.reason,
        'alert CoffeeOverloaded resolved (fingerprint fp-coffee, rule coffee)',
      );
      // The lease taken and given back is no keyval change.
      assert.equal((await store.keyvals.head()).revision, revision);
    });

    it('two alerts on one key: it stays set until the last resolves', async () => {
      const { automation, zone } = await setup();
      const other = { ...COFFEE, instance: 'replica-2' };
      await automation.handle(notification([alert('firing', 'fp-1', COFFEE)]), ACTOR);
      await automation.handle(
        notification([alert('firing', 'fp-1', COFFEE), alert('firing', 'fp-2', other)]),
        ACTOR,
      );
      const first = await automation.handle(
        notification([alert('resolved', 'fp-1', COFFEE), alert('firing', 'fp-2', other)]),
        ACTOR,
      );
      assert.deepEqual(
        first.results.map((r) => r.action),
        ['none', 'refresh'],
      );
      assert.equal((await zone('limitreq_uri'))['/coffee']?.value, '1');
      const last = await automation.handle(notification([alert('resolved', 'fp-2', other)]), ACTOR);
      assert.deepEqual(
        last.results.map((r) => r.action),
        ['restore'],
      );
      assert.deepEqual(await zone('limitreq_uri'), {});
    });

    it('a lost resolve: the key expires with its TTL, and so does the record', async () => {
      const { clock, automation, zone, records } = await setup();
      await automation.handle(notification([alert('firing', 'fp-coffee', COFFEE)]), ACTOR);
      clock.nowMs = T0 + 600_000;
      assert.deepEqual(await zone('limitreq_uri'), {});
      assert.deepEqual(await records(), {});
      const late = await automation.handle(notification([alert('resolved', 'fp-coffee', COFFEE)]), ACTOR);
      assert.equal(late.results[0]!.action, 'none');
      const again = await automation.handle(notification([alert('firing', 'fp-coffee', COFFEE)]), ACTOR);
      assert.deepEqual([again.results[0]!.action, again.results[0]!.old], ['set', null]);
    });

    it('min_hold: a resolve inside the hold waits; the sweep reverts when it is due', async () => {
      const { clock, store, automation, zone } = await setup();
      await automation.handle(notification([alert('firing', 'fp-server', SERVER)]), ACTOR);
      clock.nowMs = T0 + 30_000;
      const held = await automation.handle(notification([alert('resolved', 'fp-server', SERVER)]), ACTOR);
      assert.equal(held.results[0]!.action, 'hold');
      assert.equal((await zone('limitper_server'))['cafe.example.com']?.value, '1');
      clock.nowMs = T0 + 119_999;
      assert.deepEqual(await automation.sweep({ tokenId: null, client: 'automation' }), []);
      assert.equal((await zone('limitper_server'))['cafe.example.com']?.value, '1');
      clock.nowMs = T0 + 120_000;
      const swept = await automation.sweep({ tokenId: null, client: 'automation' });
      assert.deepEqual(
        swept.map((r) => [r.rule, r.fingerprint, r.action]),
        [['server', 'fp-server', 'delete']],
      );
      assert.deepEqual(await zone('limitper_server'), {});
      const [entry] = await store.audit.recent(1);
      assert.equal(
        entry!.reason,
        'alert ServerOverloaded resolved (fingerprint fp-server, rule server), min_hold elapsed',
      );
      assert.equal(entry!.client, 'automation');
      assert.deepEqual(await automation.sweep({ tokenId: null, client: 'automation' }), []);
    });

    it('dry run: records, counts and reports what would change, and changes no key', async () => {
      const { store, counters, automation, zone } = await setup();
      const tea = { alertname: 'TeaRejections' };
      const fired = await automation.handle(notification([alert('firing', 'fp-tea', tea)]), ACTOR);
      assert.deepEqual(
        fired.results.map((r) => [r.action, r.dry_run, r.revision]),
        [['set', true, null]],
      );
      assert.deepEqual(await zone('limitreq_uri'), {});
      assert.equal(
        (await store.audit.recent(1))[0]!.reason,
        'dry run: alert TeaRejections firing (fingerprint fp-tea, rule tea-dry)',
      );
      await automation.handle(notification([alert('firing', 'fp-tea', tea)]), ACTOR);
      assert.equal(counters.get('dry-run change tea-dry set'), 1);
      const resolved = await automation.handle(notification([alert('resolved', 'fp-tea', tea)]), ACTOR);
      assert.deepEqual(
        resolved.results.map((r) => [r.action, r.old, r.new]),
        [['delete', '1', null]],
      );
      assert.equal(counters.get('dry-run change tea-dry delete'), 1);
      assert.equal(counters.get('change tea-dry set'), 0);
      assert.deepEqual(await zone('limitreq_uri'), {});
      assert.equal((await store.audit.recent(10)).length, 2);
    });

    it('a key changed by an operator meanwhile is not reverted', async () => {
      const { store, automation, zone, warnings } = await setup();
      await automation.handle(notification([alert('firing', 'fp-coffee', COFFEE)]), ACTOR);
      await store.keyvals.change('limitreq_uri', '/coffee', { value: '2', expireAtMs: null });
      const resolved = await automation.handle(notification([alert('resolved', 'fp-coffee', COFFEE)]), ACTOR);
      assert.equal(resolved.results[0]!.action, 'left');
      assert.deepEqual(await zone('limitreq_uri'), { '/coffee': { value: '2', expireAtMs: null } });
      assert.deepEqual(warnings, ['limitreq_uri /coffee: changed by someone else, not reverted']);
    });

    it('alerts a rule cannot apply are reported and counted; nothing changes', async () => {
      const { store, counters, automation } = await setup();
      const revision = (await store.keyvals.head()).revision;
      const outcome = await automation.handle(
        notification([
          alert('firing', 'fp-b', { alertname: 'ServerOverloaded' }),
          alert('firing', 'fp-c', { alertname: 'Ghost' }),
          alert('firing', 'fp-d', { alertname: 'Abuser', client: 'not-an-ip' }),
          alert('firing', 'fp-e', { alertname: 'Unrelated' }),
        ]),
        ACTOR,
      );
      assert.deepEqual(outcome.results, []);
      assert.deepEqual(outcome.errors, [
        {
          rule: 'server',
          alertname: 'ServerOverloaded',
          fingerprint: 'fp-b',
          reason: 'label_missing',
          text: 'label "host" is missing or empty',
        },
        {
          rule: 'ghost',
          alertname: 'Ghost',
          fingerprint: 'fp-c',
          reason: 'zone_not_found',
          text: 'keyval zone "no_such_zone" not found',
        },
        {
          rule: 'abuser',
          alertname: 'Abuser',
          fingerprint: 'fp-d',
          reason: 'invalid_key',
          text: 'bad address "not-an-ip"',
        },
      ]);
      assert.equal((await store.keyvals.head()).revision, revision);
      assert.equal(counters.get('error server label_missing'), 1);
      assert.equal(counters.get('error ghost zone_not_found'), 1);
      assert.equal(counters.get('error abuser invalid_key'), 1);
      const none = await automation.handle(
        notification([alert('firing', 'fp-e', { alertname: 'Unrelated' })]),
        ACTOR,
      );
      assert.deepEqual(none, { alerts: 1, results: [], errors: [] });
      assert.equal(counters.get('notification '), 1);
    });

    it('two control planes handling the same notifications at once record the pre-alert value once', async () => {
      const { clock, store, zone, records } = await setup();
      const peer = await makePeer(store, clock);
      const planes = [automationOn(store, clock), automationOn(peer, clock)];
      await store.keyvals.set('limitreq_uri', '/coffee', { value: '0', expireAtMs: null });
      const fired = await Promise.all(
        planes.map((p) => p.handle(notification([alert('firing', 'fp-coffee', COFFEE)]), ACTOR)),
      );
      assert.deepEqual(fired.map((o) => o.results[0]!.action).sort(), ['refresh', 'set']);
      await Promise.all(
        planes.map((p) => p.handle(notification([alert('resolved', 'fp-coffee', COFFEE)]), ACTOR)),
      );
      assert.deepEqual(await zone('limitreq_uri'), { '/coffee': { value: '0', expireAtMs: null } });
      assert.deepEqual(await records(), {});
    });

    async function makePeer(store: Store, clock: Clock): Promise<Store> {
      return peers.get(store)?.(clock) ?? store;
    }
  });
}

/** For stores with a second client of the same data (Redis): store → factory of that client. */
const peers = new WeakMap<Store, (clock: Clock) => Promise<Store>>();

automationSuite('memory', async (clock) => openMemoryStore({ clock: { nowMs: clock.now } }));

describe('alert automation: Redis', { timeout: 90_000 }, () => {
  let redis: RedisServer;
  const opened: Store[] = [];
  before(async () => {
    redis = await RedisServer.start();
  });
  after(async () => {
    await Promise.all(opened.map((s) => s.close()));
    await redis.stop();
  });
  automationSuite('Redis', async (clock) => {
    const cluster = `automation-${randomUUID()}`;
    const open = (c: Clock) => {
      const store = openRedisStore({ url: redis.url, cluster, clock: { nowMs: c.now } });
      opened.push(store);
      return store;
    };
    const store = open(clock);
    peers.set(store, async (c) => open(c));
    return store;
  });
});

describe('alert automation: a store failing half-way', () => {
  it('answers with the error; the retried notification converges', async () => {
    const clock = new Clock();
    const real = openMemoryStore({ clock: { nowMs: clock.now } });
    await real.registry.registerZones(ZONES);
    await real.keyvals.set('limitreq_uri', '/coffee', { value: '0', expireAtMs: null });
    let failNextSet = true;
    const keyvals = new Proxy(real.keyvals, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop !== 'set' || typeof value !== 'function') {
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (zone: string, ...rest: unknown[]) => {
          if (zone === 'limitreq_uri' && failNextSet) {
            failNextSet = false;
            throw storeUnavailableError(new Error('connection reset'));
          }
          return (value as (...a: unknown[]) => Promise<unknown>).call(target, zone, ...rest);
        };
      },
    });
    const automation = automationOn({ ...real, keyvals }, clock);
    const firing = notification([alert('firing', 'fp-coffee', COFFEE)]);
    await assert.rejects(automation.handle(firing, ACTOR), { code: 'StoreUnavailable' });
    assert.equal((await real.keyvals.getZone('limitreq_uri', clock.nowMs))['/coffee']?.value, '0');
    const retried = await automation.handle(firing, ACTOR);
    assert.equal(retried.results[0]!.action, 'set');
    assert.equal((await real.keyvals.getZone('limitreq_uri', clock.nowMs))['/coffee']?.value, '1');
    await automation.handle(notification([alert('resolved', 'fp-coffee', COFFEE)]), ACTOR);
    assert.deepEqual(await real.keyvals.getZone('limitreq_uri', clock.nowMs), {
      '/coffee': { value: '0', expireAtMs: null },
    });
  });
});
