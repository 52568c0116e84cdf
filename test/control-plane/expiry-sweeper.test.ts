import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { describe, it } from 'node:test';
import type { KeyvalChange } from '../../src/store/keyval-store.ts';
import { openMemoryStore } from '../../src/store/memory/open-memory-store.ts';
import { buildApp, JSON_HEADERS } from './harness.ts';

describe('keyval expiry across control planes', () => {
  it('removes an expired key from the store exactly once, however many control planes sweep', async () => {
    const store = openMemoryStore();
    const changes: KeyvalChange[] = [];
    const events = new EventEmitter();
    await store.keyvals.subscribe((change) => {
      changes.push(change);
      if (change.op === 'expire') events.emit('expired');
    });
    const first = await buildApp({ store, expirySweepMs: 20 });
    const second = await buildApp({ store, expirySweepMs: 20 });
    const expired = once(events, 'expired');
    // The sweepers' timers are unref'd (a listening server keeps a process alive); here nothing listens.
    const keepAlive = setInterval(() => {}, 1000);
    const created = await first.app.inject({
      method: 'POST',
      url: '/api/9/http/keyvals/ttl',
      payload: '{"k":{"value":"1","expire":150}}',
      headers: JSON_HEADERS,
    });
    assert.equal(created.statusCode, 201);
    await expired;
    // Both sweepers keep running; give them several more ticks to (wrongly) expire it again.
    await new Promise((resolve) => setTimeout(resolve, 200));
    clearInterval(keepAlive);
    await Promise.all([first.app.close(), second.app.close()]);
    const expiries = changes.filter((c) => c.op === 'expire');
    assert.equal(expiries.length, 1);
    const { commit: _commit, parent: _parent, ...expiry } = expiries[0]!;
    assert.deepEqual(expiry, { revision: 2, op: 'expire', zone: 'ttl', keys: ['k'] });
    assert.deepEqual((await store.keyvals.snapshot()).zones.ttl ?? {}, {});
  });
});
