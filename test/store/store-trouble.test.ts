/**
 * Issue 18 §3.3: while the store was down every replica logged `keyval store unavailable` twice a
 * second, without the URL or the cause. Now the error names the store and why (refused, timeout,
 * auth), and the log says it once per outage, sums up repeats, and says when the store is back.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openRedisStore } from '../../src/store/redis/open-redis-store.ts';
import { describeStoreError, StoreTrouble } from '../../src/store/store-trouble.ts';
import { freePort } from '../helpers/free-port.ts';
import { RedisServer } from '../helpers/redis-server.ts';

async function failure(url: string): Promise<string> {
  const store = openRedisStore({ url, commandTimeoutMs: 300, connectTimeoutMs: 300 });
  try {
    await store.keyvals.head();
  } catch (err) {
    return describeStoreError(err);
  } finally {
    await store.close();
  }
  assert.fail('expected the store call to fail');
}

describe('a store that does not answer says which and why', () => {
  let secured: RedisServer;
  before(async () => {
    // Started open (the helper waits for PING), then locked.
    secured = await RedisServer.start();
    await secured.cli('config', 'set', 'requirepass', 'sesame');
  });
  after(async () => {
    await secured.stop();
  });

  it('nothing listening: connection refused, with the URL', async () => {
    const port = await freePort();
    assert.equal(
      await failure(`redis://127.0.0.1:${port}`),
      `keyval store unavailable: redis://127.0.0.1:${port}: connection refused (connect ECONNREFUSED 127.0.0.1:${port})`,
    );
  });

  it('a wrong password: authentication failed, the password never shown', async () => {
    const text = await failure(`redis://:wrong@127.0.0.1:${secured.port}`);
    assert.match(
      text,
      new RegExp(
        `^keyval store unavailable: redis://\\*\\*\\*@127\\.0\\.0\\.1:${secured.port}: authentication failed \\(WRONGPASS`,
      ),
    );
    assert.doesNotMatch(text, /wrong/);
  });

  it('a frozen Redis: timed out', async () => {
    const frozen = await RedisServer.start();
    frozen.pause();
    try {
      assert.match(
        await failure(frozen.url),
        new RegExp(`^keyval store unavailable: redis://127\\.0\\.0\\.1:${frozen.port}: timed out \\(`),
      );
    } finally {
      frozen.resume();
      await frozen.stop();
    }
  });
});

describe('StoreTrouble: the log of an outage', () => {
  const down = Object.assign(new Error('keyval store unavailable'), {
    cause: new Error('redis://r:6379: connection refused (connect ECONNREFUSED r:6379)'),
  });

  it('says the first failure, sums up the repeats every 30 s, and says when the store is back', () => {
    let nowMs = 0;
    const lines: [string, string][] = [];
    const trouble = new StoreTrouble((level, message) => lines.push([level, message]), {
      nowMs: () => nowMs,
    });
    // Heartbeat and flush, once a second each, for 65 s.
    for (; nowMs <= 65_000; nowMs += 1000) {
      trouble.failed('heartbeat', down, 'enforcing the last known switches (fail-static)');
      trouble.failed('counter flush', down, 'counter deltas kept for the next flush');
    }
    nowMs = 70_000;
    trouble.answered();
    trouble.answered();
    const text = 'keyval store unavailable: redis://r:6379: connection refused (connect ECONNREFUSED r:6379)';
    assert.deepEqual(lines, [
      ['warn', `${text}; enforcing the last known switches (fail-static)`],
      [
        'warn',
        `${text}; enforcing the last known switches (fail-static) (59 more failures since the last report)`,
      ],
      [
        'warn',
        `${text}; enforcing the last known switches (fail-static) (59 more failures since the last report)`,
      ],
      ['info', 'keyval store reachable again after 70.0 s'],
    ]);
  });

  it('a new reason is said at once', () => {
    const lines: string[] = [];
    const trouble = new StoreTrouble((_level, message) => lines.push(message), { nowMs: () => 0 });
    trouble.failed('heartbeat', down, 'x');
    trouble.failed('heartbeat', new Error('keyval store unavailable'), 'x');
    assert.deepEqual(lines, [
      'keyval store unavailable: redis://r:6379: connection refused (connect ECONNREFUSED r:6379); x',
      'keyval store unavailable; x',
    ]);
  });
});
