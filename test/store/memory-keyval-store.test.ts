import assert from 'node:assert/strict';
import { it } from 'node:test';
import { MemoryKeyvalStore } from '../../src/store/memory-keyval-store.ts';
import { keyvalStoreContract } from './keyval-store.contract.ts';

keyvalStoreContract('memory', {
  create: async (options) => new MemoryKeyvalStore(options),
  peer: async (store) => store,
});

it('memory store: a closed store answers RL_ERR_STORE_UNAVAILABLE', async () => {
  const store = new MemoryKeyvalStore();
  await store.close();
  await assert.rejects(store.revision(), {
    code: 'RL_ERR_STORE_UNAVAILABLE',
    message: 'keyval store unavailable',
  });
});

it('memory store: two stores have different epochs', async () => {
  const [a, b] = [new MemoryKeyvalStore(), new MemoryKeyvalStore()];
  assert.notEqual((await a.head()).epoch, (await b.head()).epoch);
});
