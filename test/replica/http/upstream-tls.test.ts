/**
 * The pure parts of TLS to upstream servers: the name a connection uses (ngx_http_upstream_ssl_name:
 * its port left off; no SNI for an IP address), and the keepalive cache never handing a connection to
 * a request that would have made it otherwise (plain and TLS, or TLS with other settings or name).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { UpstreamTls } from '../../../src/replica/http/contract/upstream-tls.ts';
import { peerTls } from '../../../src/replica/http/upstream/peer-tls.ts';
import {
  type CachedConnection,
  KeepaliveCache,
} from '../../../src/replica/http/upstream/upstream-keepalive.ts';
import { sniOf, sslName } from '../../../src/replica/http/wire/upstream-tls.ts';

describe('the name of an upstream TLS connection', () => {
  test('its port is left off, an IPv6 address keeps its brackets', () => {
    assert.equal(sslName('backend.test:8443'), 'backend.test');
    assert.equal(sslName('backend.test'), 'backend.test');
    assert.equal(sslName('[::1]:8443'), '[::1]');
    assert.equal(sslName('127.0.0.1:443'), '127.0.0.1');
  });

  test('no SNI for an IP address or an empty name (RFC 6066)', () => {
    assert.equal(sniOf('backend.test'), 'backend.test');
    assert.equal(sniOf('127.0.0.1'), undefined);
    assert.equal(sniOf('[::1]'), undefined);
    assert.equal(sniOf(''), undefined);
  });

  test('proxy_ssl_name, else $proxy_host', () => {
    const settings = { id: 7 } as UpstreamTls['settings'];
    assert.equal(peerTls({ settings, name: null }, 'backend.test:8443').name, 'backend.test');
    const named = peerTls({ settings, name: () => 'api.test:443' }, 'backend.test');
    assert.equal(named.name, 'api.test');
    assert.equal(named.poolKey, '7 api.test');
  });
});

class Connection implements CachedConnection<Connection> {
  readonly peer: object;
  readonly poolKey: string;
  readonly requests = 1;
  readonly startedMs = 0;
  newer: Connection | null = null;
  older: Connection | null = null;
  cached = false;
  closed = false;

  constructor(peer: object, poolKey: string) {
    this.peer = peer;
    this.poolKey = poolKey;
  }

  close(): void {
    this.closed = true;
  }

  closeAndWait(): Promise<void> {
    this.close();
    return Promise.resolve();
  }
}

describe('kept connections and TLS', () => {
  test('a request takes only a connection made alike: plain with plain, TLS with its settings and name', () => {
    const cache = new KeepaliveCache<Connection>({
      connections: 8,
      requests: 100,
      timeMs: 60_000,
      timeoutMs: 60_000,
    });
    const server = {};
    const plain = new Connection(server, '');
    const tls = new Connection(server, '1 backend.test');
    cache.keep(plain, 0);
    cache.keep(tls, 0);
    assert.equal(cache.take(server, '2 backend.test'), null);
    assert.equal(cache.take(server, '1 other.test'), null);
    assert.equal(cache.take(server, '1 backend.test'), tls);
    assert.equal(cache.take(server, '1 backend.test'), null);
    assert.equal(cache.take(server), plain);
    assert.equal(cache.size, 0);
  });
});
