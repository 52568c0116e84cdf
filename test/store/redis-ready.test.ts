/**
 * Issue 34 §3: during a Redis outage every command waits for the connection; that must not read as a
 * leak (`MaxListenersExceededWarning … ready listeners added to [Commander]`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import { freePort } from '../helpers/free-port.ts';

test('many commands waiting for an unreachable store: no listener leak warning, each fails on its own', async () => {
  const warnings: string[] = [];
  const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  const store = openRedisStore({ url: `redis://127.0.0.1:${await freePort()}`, commandTimeoutMs: 300 });
  try {
    const results = await Promise.allSettled(Array.from({ length: 30 }, () => store.registry.zones()));
    assert.deepEqual(
      results.map((r) => r.status),
      results.map(() => 'rejected'),
    );
    // warnings are emitted on the next tick
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
      [],
    );
  } finally {
    process.off('warning', onWarning);
    await store.close();
  }
});
