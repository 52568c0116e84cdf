import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { keySchema } from '../../src/store/redis/keys.ts';

describe('keySchema', () => {
  it('puts every key under one hash tag', () => {
    const keys = keySchema({ prefix: 'rl', cluster: 'prod-eu' });
    const all = [
      keys.revision,
      keys.epoch,
      keys.log,
      keys.zones,
      keys.zone('a:b'),
      keys.expiry,
      keys.registry,
      keys.replicas,
      keys.replicasExpiry,
      keys.counters('limit_req'),
      keys.counterBatches,
      keys.lease('automation/z/k'),
      keys.leaseRecords,
      keys.leaseRecordsExpiry,
      keys.audit,
      keys.channel,
    ];
    for (const key of all) assert.match(key, /^rl:\{prod-eu\}:[^{}]+$/);
    assert.equal(new Set(all).size, all.length);
    assert.equal(keys.zone('a:b'), `${keys.zonePrefix}a:b`);
  });

  it('defaults to limitswitch:{default}', () => {
    assert.equal(keySchema().revision, 'limitswitch:{default}:revision');
  });

  it('rejects names that would break the hash tag', () => {
    assert.throws(() => keySchema({ cluster: 'a}b' }), {
      code: 'RL_ERR_CONFIG_INVALID',
      message: 'store prefix and cluster name must match ^[A-Za-z0-9_.-]+$: "limitswitch", "a}b"',
    });
  });
});
