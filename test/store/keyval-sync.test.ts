import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { systemClock } from '../../src/shared/clock.ts';
import type { KeyvalStore } from '../../src/store/keyval-store.ts';
import { KeyvalSync, type KeyvalSyncUpdate } from '../../src/store/keyval-sync.ts';
import { openMemoryStore } from '../../src/store/memory/open-memory-store.ts';
import { StateFile } from '../../src/store/state-file.ts';
import { waitFor } from '../helpers/wait-for.ts';
import { FlakyStore } from './flaky-store.ts';
import { assertInOrder, converged } from './sync-fixtures.ts';

const never = (value: string) => ({ value, expireAtMs: null });
const dir = mkdtempSync(join(tmpdir(), 'limitswitch-sync-'));
const syncs: KeyvalSync[] = [];

function startSync(store: KeyvalStore, options: { stateFile?: string; checkIntervalMs?: number } = {}) {
  const stateFile =
    options.stateFile === undefined ? undefined : new StateFile(options.stateFile, systemClock);
  const sync = new KeyvalSync({ store, checkIntervalMs: 50, stateWriteDelayMs: 10, ...options, stateFile });
  const updates: KeyvalSyncUpdate[] = [];
  sync.onApply((u) => updates.push(u));
  syncs.push(sync);
  return { sync, updates, started: sync.start() };
}

describe('KeyvalSync', () => {
  after(async () => {
    for (const s of syncs) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('starts from the snapshot, then applies every change in order', async () => {
    const store = openMemoryStore().keyvals;
    await store.add('z', { a: never('1') });
    const { sync, updates, started } = startSync(store);
    await started;
    assert.deepEqual(sync.state(), {
      connected: true,
      appliedRevision: 1,
      appliedCommit: (await store.head()).commit,
      epoch: (await store.head()).epoch,
      source: 'store',
      lastError: null,
    });
    assert.deepEqual(sync.zone('z'), { a: never('1') });
    await store.set('z', 'b', never('2'));
    await store.empty('z');
    await store.add('y', { c: never('3'), d: never('4') });
    await waitFor(() => sync.state().appliedRevision === 4, { message: 'revision 4' });
    assert.deepEqual(
      updates.map((u) =>
        u.kind === 'snapshot' ? `snapshot@${u.snapshot.revision}` : `${u.change.op}@${u.change.revision}`,
      ),
      ['snapshot@1', 'set@2', 'empty@3', 'set-many@4'],
    );
    assert.deepEqual(sync.snapshot().zones, { y: { c: never('3'), d: never('4') } });
  });

  it('no change slips between subscribe and snapshot, under a steady stream of writes', async () => {
    const store = openMemoryStore().keyvals;
    let writing = true;
    const writer = (async () => {
      for (let i = 0; writing; i++) {
        await store.set('z', `k${i % 7}`, never(String(i)));
        await new Promise((r) => setImmediate(r));
      }
    })();
    const { sync, updates, started } = startSync(store, { checkIntervalMs: 1000 });
    await started;
    await new Promise((r) => setTimeout(r, 20));
    writing = false;
    await writer;
    await waitFor(() => converged(sync, store), { message: 'mirror equals store' });
    assertInOrder(updates);
  });

  it('a gap (lost notifications) is filled from the change log, in order', async () => {
    const flaky = new FlakyStore();
    const { sync, updates, started } = startSync(flaky.store);
    await started;
    flaky.drop = (c) => c.revision % 3 === 0;
    for (let i = 0; i < 30; i++) await flaky.store.set('z', `k${i % 4}`, never(String(i)));
    await waitFor(() => converged(sync, flaky.store), { message: 'mirror equals store' });
    assert.equal(updates.filter((u) => u.kind === 'snapshot').length, 1);
    assertInOrder(updates);
  });

  it('when the change log no longer reaches back, the snapshot is reloaded', async () => {
    const flaky = new FlakyStore(openMemoryStore({ maxLogEntries: 3 }).keyvals);
    const { sync, updates, started } = startSync(flaky.store, { checkIntervalMs: 1000 });
    await started;
    flaky.drop = () => true;
    for (let i = 0; i < 10; i++) await flaky.store.set('z', 'k', never(String(i)));
    flaky.drop = () => false;
    await flaky.store.set('z', 'last', never('x'));
    await waitFor(() => converged(sync, flaky.store), { message: 'mirror equals store' });
    assert.deepEqual(
      updates.filter((u) => u.kind === 'snapshot').map((u) => u.kind === 'snapshot' && u.snapshot.revision),
      [0, 11],
    );
  });

  it('a store that restarted empty (new epoch) is reloaded even when its revision is ahead', async () => {
    const flaky = new FlakyStore();
    for (let i = 0; i < 3; i++) await flaky.store.set('old', `k${i}`, never('o'));
    const { sync, updates, started } = startSync(flaky.store, { checkIntervalMs: 100 });
    await started;
    const fresh = openMemoryStore().keyvals;
    for (let i = 0; i < 5; i++) await fresh.set('new', `k${i}`, never('n'));
    flaky.swap(fresh);
    await fresh.set('new', 'k5', never('n'));
    await waitFor(() => converged(sync, fresh), { message: 'mirror equals the new store' });
    assert.deepEqual(Object.keys(sync.snapshot().zones), ['new']);
    assertInOrder(updates);
  });

  it('fail-static: keeps its state while the store is down, says so, converges when it is back', async () => {
    const flaky = new FlakyStore();
    await flaky.store.add('z', { a: never('1') });
    const { sync, started } = startSync(flaky.store);
    await started;
    flaky.down = true;
    await flaky.target.set('z', 'a', never('2'));
    await waitFor(() => !sync.state().connected, { message: 'disconnected' });
    assert.deepEqual(sync.state(), {
      connected: false,
      appliedRevision: 1,
      appliedCommit: await flaky.target.commitAt(1),
      epoch: (await flaky.target.head()).epoch,
      source: 'store',
      lastError: 'keyval store unavailable: down',
    });
    assert.deepEqual(sync.zone('z'), { a: never('1') });
    flaky.down = false;
    await waitFor(() => converged(sync, flaky.store), { message: 'mirror equals store' });
    assert.equal(sync.state().connected, true);
    assert.equal(sync.state().lastError, null);
  });

  it('saves the mirror to the state file and loads it when the store is down at start', async () => {
    const stateFile = join(dir, 'state.json');
    const flaky = new FlakyStore();
    await flaky.store.add('z', { a: never('1'), b: { value: '2', expireAtMs: 4_000_000_000_000 } });
    const first = startSync(flaky.store, { stateFile });
    await first.started;
    await flaky.store.delete('z', 'a');
    await waitFor(
      () => {
        try {
          return JSON.parse(readFileSync(stateFile, 'utf8')).revision === 2;
        } catch {
          return false;
        }
      },
      { message: 'state file at revision 2' },
    );
    await first.sync.stop();

    flaky.down = true;
    await flaky.target.set('z', 'c', never('3'));
    const second = startSync(flaky.store, { stateFile });
    await second.started;
    assert.deepEqual(second.sync.state(), {
      connected: false,
      appliedRevision: 2,
      appliedCommit: await flaky.target.commitAt(2),
      epoch: (await flaky.target.head()).epoch,
      source: 'state-file',
      lastError: 'keyval store unavailable: down',
    });
    assert.deepEqual(second.sync.zone('z'), { b: { value: '2', expireAtMs: 4_000_000_000_000 } });
    assert.equal(second.updates[0]?.kind === 'snapshot' && second.updates[0].source, 'state-file');
    flaky.down = false;
    await waitFor(() => converged(second.sync, flaky.store), { message: 'mirror equals store' });
    assert.equal(second.sync.state().source, 'store');
    assertInOrder(second.updates);
  });

  it('a damaged state file is reported, not fatal', async () => {
    const stateFile = join(dir, 'damaged.json');
    const damaged = '{"version":1';
    writeFileSync(stateFile, damaged);
    const parseError = (() => {
      try {
        JSON.parse(damaged);
      } catch (err) {
        return (err as Error).message;
      }
    })();
    const flaky = new FlakyStore();
    flaky.down = true;
    const { sync, started } = startSync(flaky.store, { stateFile });
    await started;
    assert.deepEqual(sync.state(), {
      connected: false,
      appliedRevision: 0,
      appliedCommit: '',
      epoch: null,
      source: 'none',
      lastError: `keyval state file ${stateFile}: not JSON: ${parseError}`,
    });
  });

  it('pruneExpired drops due keys from the mirror only', async () => {
    const store = openMemoryStore().keyvals;
    const t = 4_000_000_000_000;
    await store.add('z', { a: { value: '1', expireAtMs: t }, b: never('2') });
    await store.add('y', { c: { value: '3', expireAtMs: t + 5 } });
    const { sync, started } = startSync(store);
    await started;
    assert.deepEqual(sync.pruneExpired(t), { z: ['a'] });
    assert.deepEqual(sync.snapshot().zones, {
      z: { b: never('2') },
      y: { c: { value: '3', expireAtMs: t + 5 } },
    });
    assert.equal(sync.state().appliedRevision, 2);
    await store.expireDue(t + 5);
    await waitFor(() => sync.state().appliedRevision === 4, { message: 'expire changes applied' });
    assert.deepEqual(sync.snapshot().zones, { z: { b: never('2') } });
  });
});
