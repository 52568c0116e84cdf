import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRedisUrl } from '../../src/store/redis/redis-connection.ts';

describe('parseRedisUrl', () => {
  it('redis:// with credentials and database, RESP2', () => {
    assert.deepEqual(parseRedisUrl('redis://app:p%40ss@10.0.0.5:6380/2'), {
      kind: 'standalone',
      options: { protocol: 2, username: 'app', password: 'p@ss', db: 2, host: '10.0.0.5', port: 6380 },
      durability: null,
    });
  });

  it('rediss:// turns TLS on; default port 6379; password only', () => {
    assert.deepEqual(parseRedisUrl('rediss://:secret@redis.example'), {
      kind: 'standalone',
      options: { protocol: 2, tls: {}, password: 'secret', host: 'redis.example', port: 6379 },
      durability: null,
    });
  });

  it('IPv6 host in brackets', () => {
    assert.deepEqual(parseRedisUrl('redis://[::1]:7000'), {
      kind: 'standalone',
      options: { protocol: 2, host: '::1', port: 7000 },
      durability: null,
    });
  });

  it('redis+sentinel:// lists sentinels (default port 26379), master name, db, sentinel password', () => {
    assert.deepEqual(parseRedisUrl('redis+sentinel://:pw@s1:26380,s2/mymaster/1?sentinelPassword=sp'), {
      kind: 'sentinel',
      options: {
        protocol: 2,
        password: 'pw',
        db: 1,
        name: 'mymaster',
        sentinels: [
          { host: 's1', port: 26380 },
          { host: 's2', port: 26379 },
        ],
        sentinelPassword: 'sp',
      },
      durability: null,
    });
  });

  it('redis+cluster:// lists seed nodes', () => {
    assert.deepEqual(parseRedisUrl('rediss+cluster://n1:7000,n2:7001'), {
      kind: 'cluster',
      nodes: [
        { host: 'n1', port: 7000 },
        { host: 'n2', port: 7001 },
      ],
      options: { protocol: 2, tls: {} },
      durability: null,
    });
  });

  it('?wait=N[&waitTimeoutMs=T]: durable writes on any topology (1 s by default)', () => {
    assert.deepEqual(parseRedisUrl('redis://h:1?wait=1').durability, { replicas: 1, timeoutMs: 1000 });
    assert.deepEqual(parseRedisUrl('redis+sentinel://s:1/m?wait=2&waitTimeoutMs=250').durability, {
      replicas: 2,
      timeoutMs: 250,
    });
    assert.deepEqual(parseRedisUrl('redis+cluster://n:1?wait=1').durability, {
      replicas: 1,
      timeoutMs: 1000,
    });
  });

  for (const [url, message] of [
    [
      'http://h:1',
      'invalid store URL "http://h:1": expected redis://, rediss://, redis+sentinel:// or redis+cluster://',
    ],
    [
      'redis://a:1,b:2',
      'invalid store URL "redis://a:1,b:2": one host:port expected (use redis+sentinel:// or redis+cluster://)',
    ],
    ['redis://u:secret@h:1/x', 'invalid store URL "redis://***@h:1/x": database must be a number, not "x"'],
    [
      'redis+sentinel://s1:1',
      'invalid store URL "redis+sentinel://s1:1": expected redis+sentinel://host:port,…/mastername[/db]',
    ],
    [
      'redis+cluster://n1:1/0',
      'invalid store URL "redis+cluster://n1:1/0": a cluster URL has no path (Redis Cluster has one database)',
    ],
    ['redis://h:99999', 'invalid store URL "redis://h:99999": bad port in "h:99999"'],
    [
      'redis://h:1?wiat=1',
      'invalid store URL "redis://h:1?wiat=1": unknown parameter "wiat" (known: wait, waitTimeoutMs)',
    ],
    [
      'redis://h:1?sentinelPassword=x',
      'invalid store URL "redis://h:1?sentinelPassword=x": unknown parameter "sentinelPassword" (known: wait, waitTimeoutMs)',
    ],
    [
      'redis://h:1?wait=0',
      'invalid store URL "redis://h:1?wait=0": "wait" must be a number of replicas (1-999), not "0"',
    ],
    [
      'redis://h:1?waitTimeoutMs=5',
      'invalid store URL "redis://h:1?waitTimeoutMs=5": "waitTimeoutMs" needs "wait"',
    ],
    [
      'redis://h:1?wait=1&waitTimeoutMs=1s',
      'invalid store URL "redis://h:1?wait=1&waitTimeoutMs=1s": "waitTimeoutMs" must be milliseconds (1-999999), not "1s"',
    ],
  ] as const) {
    it(`rejects ${url}`, () => {
      assert.throws(() => parseRedisUrl(url), { code: 'RL_ERR_CONFIG_INVALID', message });
    });
  }
});
