/**
 * The keyvals port contract: every backend runs it (memory, Redis standalone, Sentinel, Cluster).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { AuditNote } from '../../../src/store/audit-trail.ts';
import type { KeyvalChange, KeyvalEntry, KeyvalStore } from '../../../src/store/keyval-store.ts';
import { waitFor } from '../../helpers/wait-for.ts';
import { rejectsWith, type StoreHarness } from './store-harness.ts';

const never = (value: string) => ({ value, expireAtMs: null });

async function revisionOf(store: KeyvalStore): Promise<number> {
  return (await store.head()).revision;
}

/** A change or a mutation result without its commit ids (random; the commit tests check them). */
function bare<T>(value: T): T {
  if (Array.isArray(value)) return value.map(bare) as T;
  if (value === null || typeof value !== 'object') return value;
  const { commit: _c, parent: _p, ...rest } = value as Record<string, unknown>;
  return rest as T;
}

/**
 * The store with commit ids taken out of what mutations and `changesSince` answer, so the tests of
 * values and revisions read plainly; 'commit ids' below checks them on the store itself.
 */
function withoutCommits(store: KeyvalStore): KeyvalStore {
  return new Proxy(store, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (
        !['add', 'change', 'set', 'delete', 'empty', 'expireDue', 'restore', 'changesSince'].includes(
          String(prop),
        )
      )
        return value.bind(target);
      return async (...args: unknown[]) =>
        bare(await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
    },
  });
}

export function keyvalContract(name: string, harness: StoreHarness): void {
  const create = async (options?: { maxLogEntries?: number }): Promise<KeyvalStore> =>
    withoutCommits((await harness.create(options)).keyvals);
  describe(`keyvals port contract: ${name}`, () => {
    it('starts empty at revision 0 with an epoch', async () => {
      const store = await create();
      const head = await store.head();
      assert.equal(head.revision, 0);
      assert.match(head.epoch, /^[0-9a-f-]{8,}$/);
      const snapshot = await store.snapshot();
      assert.deepEqual({ revision: snapshot.revision, zones: snapshot.zones }, { revision: 0, zones: {} });
      assert.equal(snapshot.epoch, head.epoch);
      assert.deepEqual(await store.changesSince(0), []);
      assert.deepEqual(await store.getZone('z', Date.now()), {});
    });

    it('add: one key, then one more into the non-empty zone; previous is null', async () => {
      const store = await create();
      assert.deepEqual(await store.add('z', { a: never('1') }), { revision: 1, previous: { a: null } });
      assert.deepEqual(await store.add('z', { b: { value: '2', expireAtMs: 4_000_000_000_000 } }), {
        revision: 2,
        previous: { b: null },
      });
      assert.deepEqual(await store.getZone('z', Date.now()), {
        a: never('1'),
        b: { value: '2', expireAtMs: 4_000_000_000_000 },
      });
      assert.deepEqual(await store.changesSince(0), [
        { revision: 1, op: 'set', zone: 'z', key: 'a', value: '1', expireAtMs: null },
        { revision: 2, op: 'set', zone: 'z', key: 'b', value: '2', expireAtMs: 4_000_000_000_000 },
      ]);
    });

    it('add: several keys only into an empty zone (set-many); otherwise nothing is written', async () => {
      const store = await create();
      await store.add('z', { a: never('1'), b: never('2') });
      assert.deepEqual(await store.changesSince(0), [
        { revision: 1, op: 'set-many', zone: 'z', entries: { a: never('1'), b: never('2') } },
      ]);
      await rejectsWith(
        store.add('z', { c: never('3'), d: never('4') }),
        'KeyvalFormatError',
        400,
        'only one key can be added: keyval zone "z" already holds keys; change a key with PATCH (one key a request), or empty the zone with DELETE first',
      );
      assert.equal(await revisionOf(store), 1);
      assert.deepEqual(Object.keys(await store.getZone('z', Date.now())).sort(), ['a', 'b']);
    });

    it('add: an existing key is KeyvalKeyExists and changes nothing', async () => {
      const store = await create();
      await store.add('z', { a: never('1') });
      await rejectsWith(store.add('z', { a: never('2') }), 'KeyvalKeyExists', 409, 'key "a" already exists');
      assert.equal(await revisionOf(store), 1);
      assert.deepEqual(await store.getZone('z', Date.now()), { a: never('1') });
    });

    it('add: an expired key counts as absent', async () => {
      const store = await create();
      await store.add('z', { a: { value: 'old', expireAtMs: Date.now() - 1000 } });
      assert.deepEqual(await store.getZone('z', Date.now()), {});
      assert.deepEqual(await store.add('z', { a: never('new') }), { revision: 2, previous: { a: null } });
      await rejectsWith(store.change('z', 'b', never('x')), 'KeyvalKeyNotFound', 404, 'keyval key not found');
    });

    it('change: an existing key, returning the previous value; a missing or expired key is KeyvalKeyNotFound', async () => {
      const store = await create();
      await store.add('z', { a: never('1') });
      assert.deepEqual(await store.change('z', 'a', { value: '2', expireAtMs: 4_000_000_000_000 }), {
        revision: 2,
        previous: { a: '1' },
      });
      await rejectsWith(store.change('z', 'b', never('x')), 'KeyvalKeyNotFound', 404, 'keyval key not found');
      await rejectsWith(
        store.change('other', 'a', never('x')),
        'KeyvalKeyNotFound',
        404,
        'keyval key not found',
      );
      // expired well before now on any clock: the Redis store judges expiry on its own (TIME), which a
      // loaded machine's reading of it can put a few milliseconds off this process's
      await store.set('z', 'gone', { value: 'g', expireAtMs: Date.now() - 60_000 });
      await rejectsWith(
        store.change('z', 'gone', never('x')),
        'KeyvalKeyNotFound',
        404,
        'keyval key not found',
      );
      assert.equal(await revisionOf(store), 3);
      assert.deepEqual(await store.getZone('z', Date.now()), {
        a: { value: '2', expireAtMs: 4_000_000_000_000 },
      });
    });

    it('set: upserts', async () => {
      const store = await create();
      assert.deepEqual(await store.set('z', 'a', never('1')), { revision: 1, previous: { a: null } });
      assert.deepEqual(await store.set('z', 'a', never('2')), { revision: 2, previous: { a: '1' } });
      assert.deepEqual(await store.getZone('z', Date.now()), { a: never('2') });
    });

    it('delete: an existing key; a missing one is KeyvalKeyNotFound', async () => {
      const store = await create();
      await store.add('z', { a: never('1'), b: never('2') });
      assert.deepEqual(await store.delete('z', 'a'), { revision: 2, previous: { a: '1' } });
      await rejectsWith(store.delete('z', 'a'), 'KeyvalKeyNotFound', 404, 'keyval key not found');
      await rejectsWith(store.delete('nozone', 'a'), 'KeyvalKeyNotFound', 404, 'keyval key not found');
      assert.deepEqual(await store.changesSince(1), [{ revision: 2, op: 'delete', zone: 'z', key: 'a' }]);
      assert.deepEqual(await store.getZone('z', Date.now()), { b: never('2') });
    });

    it('empty: removes every key, bumps the revision even when already empty', async () => {
      const store = await create();
      await store.add('z', { a: never('1'), b: never('2') });
      await store.add('y', { c: never('3') });
      assert.deepEqual(await store.empty('z'), { revision: 3, previous: { a: '1', b: '2' } });
      assert.deepEqual(await store.empty('z'), { revision: 4, previous: {} });
      assert.deepEqual(await store.getZone('z', Date.now()), {});
      const snapshot = await store.snapshot();
      assert.deepEqual(
        { revision: snapshot.revision, zones: snapshot.zones },
        {
          revision: 4,
          zones: { y: { c: never('3') } },
        },
      );
      assert.deepEqual(await store.changesSince(2), [
        { revision: 3, op: 'empty', zone: 'z' },
        { revision: 4, op: 'empty', zone: 'z' },
      ]);
      // Several keys may be added again into the now empty zone.
      await store.add('z', { d: never('4'), e: never('5') });
    });

    it('expireDue: removes due keys once, one expire change per zone', async () => {
      const store = await create();
      const t = 4_000_000_000_000;
      await store.add('a', { k1: { value: '1', expireAtMs: t }, k2: { value: '2', expireAtMs: t + 10 } });
      await store.add('b', { k3: { value: '3', expireAtMs: t - 5 }, k4: never('4') });
      assert.equal(await store.expireDue(t - 6), null);
      assert.equal(await revisionOf(store), 2);
      assert.deepEqual(await store.getZone('a', t), { k2: { value: '2', expireAtMs: t + 10 } });
      const result = await store.expireDue(t);
      assert.deepEqual(result, { revision: 4, previous: {}, expired: { a: { k1: '1' }, b: { k3: '3' } } });
      assert.equal(await store.expireDue(t), null);
      assert.deepEqual(await store.changesSince(2), [
        { revision: 3, op: 'expire', zone: 'a', keys: ['k1'] },
        { revision: 4, op: 'expire', zone: 'b', keys: ['k3'] },
      ]);
      const snapshot = await store.snapshot();
      assert.deepEqual(snapshot.zones, {
        a: { k2: { value: '2', expireAtMs: t + 10 } },
        b: { k4: never('4') },
      });
    });

    it('expireDue: a key changed to never expire is not expired', async () => {
      const store = await create();
      const t = 4_000_000_000_000;
      await store.add('a', { k: { value: '1', expireAtMs: t } });
      await store.change('a', 'k', never('2'));
      assert.equal(await store.expireDue(t + 1), null);
      await store.set('a', 'k', { value: '3', expireAtMs: t + 5 });
      assert.deepEqual(await store.expireDue(t + 5), {
        revision: 4,
        previous: {},
        expired: { a: { k: '3' } },
      });
      await store.set('a', 'j', { value: '4', expireAtMs: t });
      await store.delete('a', 'j');
      await store.set('b', 'j', { value: '5', expireAtMs: t });
      await store.empty('b');
      assert.equal(await store.expireDue(t + 100), null);
    });

    it('values and keys survive any characters', async () => {
      const store = await create();
      const key = 'ключ "q" \\ / \n\t 🔑 %s {x}';
      const value = '{"json":[1,2]} 値 \u0001 ';
      await store.add('z:1', { [key]: never(value) });
      assert.deepEqual(await store.getZone('z:1', Date.now()), { [key]: never(value) });
      assert.deepEqual((await store.snapshot()).zones, { 'z:1': { [key]: never(value) } });
      const [change] = (await store.changesSince(0))!;
      assert.deepEqual(change, { revision: 1, op: 'set', zone: 'z:1', key, value, expireAtMs: null });
      assert.deepEqual(await store.expireDue(Date.now()), null);
    });

    it('keeps a key named __proto__ as data', async () => {
      const store = await create();
      const entries = JSON.parse('{"__proto__":{"value":"1","expireAtMs":null}}') as Record<
        string,
        KeyvalEntry
      >;
      await store.add('z', entries);
      await store.set('z', 'constructor', never('2'));
      const zone = await store.getZone('z', Date.now());
      assert.deepEqual(Object.entries(zone), [
        ['__proto__', never('1')],
        ['constructor', never('2')],
      ]);
      assert.deepEqual(Object.keys((await store.snapshot()).zones.z ?? {}), ['__proto__', 'constructor']);
      await store.delete('z', '__proto__');
      assert.deepEqual(Object.keys(await store.getZone('z', Date.now())), ['constructor']);
    });

    it('changesSince: in order; null when the bounded log no longer reaches back or the revision is ahead', async () => {
      const store = await create({ maxLogEntries: 5 });
      for (let i = 1; i <= 8; i++) await store.set('z', 'k', never(String(i)));
      assert.equal(await store.changesSince(0), null);
      assert.equal(await store.changesSince(2), null);
      const tail = (await store.changesSince(3))!;
      assert.deepEqual(
        tail.map((c) => c.revision),
        [4, 5, 6, 7, 8],
      );
      assert.deepEqual(tail[4], {
        revision: 8,
        op: 'set',
        zone: 'z',
        key: 'k',
        value: '8',
        expireAtMs: null,
      });
      assert.deepEqual(await store.changesSince(8), []);
      assert.equal(await store.changesSince(9), null);
    });

    it('subscribe: every change in order once active; unsubscribe stops delivery', async () => {
      const store = await create();
      const seen: KeyvalChange[] = [];
      const unsubscribe = await store.subscribe((change) => seen.push(bare(change)));
      await store.add('z', { a: never('1') });
      await store.change('z', 'a', never('2'));
      await store.delete('z', 'a');
      await store.empty('z');
      await waitFor(() => seen.length >= 4, { message: '4 notifications' });
      assert.deepEqual(seen, await store.changesSince(0));
      await unsubscribe();
      await store.set('z', 'b', never('3'));
      const marker: KeyvalChange[] = [];
      const second = await store.subscribe((change) => marker.push(change));
      await store.set('z', 'c', never('4'));
      await waitFor(() => marker.length >= 1, { message: 'marker notification' });
      assert.equal(seen.length, 4);
      await second();
    });

    it('100 concurrent adds of one key from two clients: exactly one wins', async () => {
      const opened = await harness.create();
      const store = opened.keyvals;
      const peer = (await harness.peer(opened)).keyvals;
      const results = await Promise.allSettled(
        Array.from({ length: 100 }, (_, i) => (i % 2 ? peer : store).add('z', { k: never(String(i)) })),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected');
      assert.equal(won.length, 1);
      assert.equal(lost.length, 99);
      for (const r of lost) assert.equal((r.reason as Error).message, 'key "k" already exists');
      assert.equal(await revisionOf(store), 1);
      assert.equal((await store.changesSince(0))?.length, 1);
    });

    it('expiry exactly once with two control planes expiring concurrently', async () => {
      const opened = await harness.create();
      const store = opened.keyvals;
      const peer = (await harness.peer(opened)).keyvals;
      const t = 4_000_000_000_000;
      for (let z = 0; z < 3; z++) {
        const entries: Record<string, { value: string; expireAtMs: number }> = {};
        for (let k = 0; k < 20; k++) entries[`k${k}`] = { value: `${z}.${k}`, expireAtMs: t + k };
        await store.add(`z${z}`, entries);
      }
      let removed = 0;
      for (let step = 0; step < 20; step += 4) {
        const results = await Promise.all([store.expireDue(t + step), peer.expireDue(t + step)]);
        for (const r of results) {
          for (const keys of Object.values(r?.expired ?? {})) removed += Object.keys(keys).length;
        }
      }
      assert.equal(removed, 3 * 17);
      const expireChanges = ((await store.changesSince(3)) ?? []).filter((c) => c.op === 'expire');
      const keysExpired = expireChanges.flatMap((c) =>
        c.op === 'expire' ? c.keys.map((k) => `${c.zone}/${k}`) : [],
      );
      assert.equal(keysExpired.length, 3 * 17);
      assert.equal(new Set(keysExpired).size, 3 * 17);
      assert.equal(await revisionOf(store), 3 + expireChanges.length);
    });

    it('a mutation given a note records its audit entries in the same step, one per key', async () => {
      const opened = await harness.create();
      const store = opened.keyvals;
      const note: AuditNote = { timeMs: 7, tokenId: 'ops', client: '10.0.0.1', reason: 'incident 42' };
      const entry = (key: string | null, old: string | null, value: string | null, revision: number) => ({
        ...note,
        zone: 'z',
        key,
        old,
        new: value,
        revision,
      });
      await store.add('z', { a: never('1'), b: never('2') }, { note });
      await store.change('z', 'a', never('3'), { note });
      await store.set('z', 'c', never('4'));
      await rejectsWith(
        store.add('z', { c: never('x') }, { note }),
        'KeyvalKeyExists',
        409,
        'key "c" already exists',
      );
      await store.delete('z', 'b', { note });
      await store.empty('z', { note });
      await store.empty('z', { note: { ...note, tokenId: null, reason: null } });
      await rejectsWith(
        store.change('z', 'nope', never('x'), { note }),
        'KeyvalKeyNotFound',
        404,
        'keyval key not found',
      );
      assert.deepEqual(await opened.audit.recent(100), [
        { ...entry(null, null, null, 6), tokenId: null, reason: null },
        entry('c', '4', null, 5),
        entry('a', '3', null, 5),
        entry('b', '2', null, 4),
        entry('a', '1', '3', 2),
        entry('b', null, '2', 1),
        entry('a', null, '1', 1),
      ]);
    });

    it('commit ids: each change names its parent; head, results and commitAt agree; histories differ', async () => {
      const opened = await harness.create();
      const store = opened.keyvals;
      assert.deepEqual(await store.head(), { ...(await store.head()), revision: 0, commit: '' });
      assert.equal(await store.commitAt(0), '');
      const results = [
        await store.add('z', { a: never('1') }),
        await store.set('z', 'b', never('2')),
        await store.delete('z', 'a'),
        await store.empty('z'),
      ];
      await store.add('x', { k: { value: 'v', expireAtMs: 4_000_000_000_000 } });
      await store.add('y', { k: { value: 'v', expireAtMs: 4_000_000_000_000 } });
      results.push(await store.add('w', { k: never('1') }));
      results.push((await store.expireDue(4_000_000_000_000))!);
      const changes = (await store.changesSince(0))!;
      assert.deepEqual(
        changes.map((c) => c.revision),
        [1, 2, 3, 4, 5, 6, 7, 8, 9],
      );
      let parent = '';
      for (const change of changes) {
        assert.equal(change.parent, parent, `parent of ${change.revision}`);
        assert.match(change.commit, /^[0-9a-f-]{36}(:\d+)?$/);
        assert.equal(await store.commitAt(change.revision), change.commit);
        parent = change.commit;
      }
      assert.equal(new Set(changes.map((c) => c.commit)).size, changes.length);
      for (const result of results) {
        assert.equal(result.commit, changes.find((c) => c.revision === result.revision)?.commit);
      }
      const head = await store.head();
      assert.deepEqual([head.revision, head.commit], [9, parent]);
      assert.equal((await store.snapshot()).commit, parent);
      assert.equal(await store.commitAt(10), null);
      const other = (await harness.create()).keyvals;
      await other.add('z', { a: never('1') });
      assert.notEqual((await other.head()).commit, changes[0]!.commit, 'another history, another commit');
    });

    it('restore: writes zones back only into a store with no revision yet, one set-many per zone, audited', async () => {
      const opened = await harness.create();
      const store = withoutCommits(opened.keyvals);
      const note: AuditNote = { timeMs: 9, tokenId: null, client: 'replica r1', reason: 'store reset' };
      const zones = {
        b: { k: { value: '2', expireAtMs: 4_000_000_000_000 } },
        a: { x: never('1'), y: never('3') },
        empty: {},
      };
      assert.deepEqual(await store.restore(zones, note), { revision: 2, previous: {} });
      assert.deepEqual(await store.changesSince(0), [
        { revision: 1, op: 'set-many', zone: 'a', entries: { x: never('1'), y: never('3') } },
        {
          revision: 2,
          op: 'set-many',
          zone: 'b',
          entries: { k: { value: '2', expireAtMs: 4_000_000_000_000 } },
        },
      ]);
      assert.deepEqual((await store.snapshot()).zones, { a: zones.a, b: zones.b });
      assert.deepEqual(
        (await opened.audit.recent(10)).map((e) => [e.zone, e.key, e.old, e.new, e.revision, e.reason]),
        [
          ['b', 'k', null, '2', 2, 'store reset'],
          ['a', 'y', null, '3', 1, 'store reset'],
          ['a', 'x', null, '1', 1, 'store reset'],
        ],
      );
      assert.equal(
        await store.restore({ c: { k: never('x') } }, note),
        null,
        'a second restore writes nothing',
      );
      const other = withoutCommits((await harness.create()).keyvals);
      await other.set('z', 'k', never('operator'));
      assert.equal(await other.restore({ z: { k: never('old') } }, note), null, 'a write came first');
      assert.deepEqual((await other.snapshot()).zones, { z: { k: never('operator') } });
    });

    it('zone size: entries are charged as nginx slabs; a write that would not fit is KeyvalZoneFull and changes nothing', async () => {
      const store = await create();
      const sizeBytes = 32_768; // 32768 − 8 page descriptors × 24 − 1024 = 31552 bytes for entries
      const key = (i: number) => `k${String(i).padStart(4, '0')}`; // 72 + 5 + 1 = 78 → a 128-byte chunk
      for (let i = 0; i < 246; i++) await store.set('z', key(i), never('1'), { sizeBytes });
      const full = ['KeyvalZoneFull', 413, 'keyval zone "z" is full'] as const;
      await rejectsWith(store.set('z', key(246), never('1'), { sizeBytes }), ...full);
      await rejectsWith(store.add('z', { [key(246)]: never('1') }, { sizeBytes }), ...full);
      assert.equal(await revisionOf(store), 246);
      // Same chunk: replacing a value fits; a value that needs a bigger chunk does not.
      await store.change('z', key(0), never('2'), { sizeBytes });
      await rejectsWith(store.change('z', key(0), never('x'.repeat(60)), { sizeBytes }), ...full);
      assert.equal((await store.getZone('z', Date.now()))[key(0)]?.value, '2');
      // Without a size, or after a delete, it fits again.
      await store.set('z', key(246), never('1'));
      await store.delete('z', key(1));
      await store.delete('z', key(2));
      await store.set('z', key(247), never('1'), { sizeBytes });
      await store.empty('z');
      await store.add('z', Object.fromEntries(Array.from({ length: 246 }, (_, i) => [key(i), never('1')])), {
        sizeBytes,
      });
      await store.empty('z');
      await rejectsWith(
        store.add('z', Object.fromEntries(Array.from({ length: 247 }, (_, i) => [key(i), never('1')])), {
          sizeBytes,
        }),
        ...full,
      );
      assert.deepEqual(await store.getZone('z', Date.now()), {});
      // Expired entries leave with the sweep, and their bytes with them.
      const t = 4_000_000_000_000;
      for (let i = 0; i < 246; i++)
        await store.set('y', key(i), { value: '1', expireAtMs: t }, { sizeBytes });
      await rejectsWith(
        store.set('y', 'extra', never('1'), { sizeBytes }),
        'KeyvalZoneFull',
        413,
        'keyval zone "y" is full',
      );
      await store.expireDue(t);
      await store.set('y', 'extra', never('1'), { sizeBytes });
    });
  });
}
