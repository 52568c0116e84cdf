import assert from 'node:assert/strict';
import { it } from 'node:test';
import { openMemoryStore } from '../../src/store/memory/open-memory-store.ts';
import { storeContracts } from './contracts/index.ts';

storeContracts('memory', {
  create: async (options) => openMemoryStore(options),
  peer: async (store) => store,
});

it('memory store: a closed store answers StoreUnavailable on every port', async () => {
  const store = openMemoryStore();
  await store.close();
  const unavailable = { code: 'StoreUnavailable', message: 'keyval store unavailable' };
  await assert.rejects(store.keyvals.head(), unavailable);
  await assert.rejects(store.registry.zones(), unavailable);
  await assert.rejects(store.counters.read('limit_req'), unavailable);
  await assert.rejects(store.audit.recent(1), unavailable);
  await assert.rejects(store.leases.acquire('l', 1000), unavailable);
});

it('memory store: two stores have different epochs', async () => {
  const [a, b] = [openMemoryStore(), openMemoryStore()];
  assert.notEqual((await a.keyvals.head()).epoch, (await b.keyvals.head()).epoch);
});
