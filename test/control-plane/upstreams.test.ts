/**
 * `/api/9/http/upstreams/`: the live replicas' `upstream` blocks summed in NGINX Plus's shape.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { upstreamsReport } from '../../src/control-plane/routes/upstreams.ts';
import type { UpstreamInfo } from '../../src/engine/upstream/upstream-info.ts';
import type { ReplicaRecord } from '../../src/store/cluster-registry.ts';

function replica(id: string, live: boolean, upstreams: UpstreamInfo[]): ReplicaRecord {
  return {
    id,
    version: '0.1.0',
    configHash: 'h',
    appliedRevision: 1,
    appliedCommit: 'c',
    startedAtMs: 0,
    keyvalZones: [],
    limitReqZones: [],
    lastHeartbeatMs: 0,
    live,
    upstreams,
  };
}

function tea(active: [number, number], state: 'up' | 'unavail', size: number, served: number): UpstreamInfo {
  return {
    name: 'tea',
    peers: [
      { server: '10.0.0.5:8080', weight: 1, state, active: active[0], maxConns: 4 },
      { server: '10.0.0.6:8080', weight: 2, state: 'up', active: active[1], maxConns: 0 },
    ],
    keepalive: 2,
    queue: {
      size,
      maxSize: 10,
      overflows: 1,
      queued: served + size,
      served,
      timedOut: 0,
      left: 0,
      waitedSeconds: 0.5,
    },
  };
}

test('servers’ active requests, keepalive and queue counters are summed over the live replicas', () => {
  const report = upstreamsReport([
    replica('a', true, [tea([4, 1], 'unavail', 3, 10)]),
    replica('b', true, [tea([2, 0], 'up', 0, 5)]),
    replica('gone', false, [tea([9, 9], 'up', 9, 9)]),
  ]);
  assert.deepEqual(report.tea, {
    peers: [
      {
        id: 0,
        server: '10.0.0.5:8080',
        name: '10.0.0.5:8080',
        backup: false,
        weight: 1,
        state: 'up',
        active: 6,
        max_conns: 4,
      },
      {
        id: 1,
        server: '10.0.0.6:8080',
        name: '10.0.0.6:8080',
        backup: false,
        weight: 2,
        state: 'up',
        active: 1,
      },
    ],
    keepalive: 4,
    zombies: 0,
    zone: 'tea',
    queue: {
      size: 3,
      max_size: 20,
      overflows: 2,
      queued: 18,
      served: 15,
      timed_out: 0,
      left: 0,
      waited_seconds: 1,
    },
  });
});

test('a server is unavail only where every live replica left it out; no replicas, no upstreams', () => {
  const report = upstreamsReport([
    replica('a', true, [tea([0, 0], 'unavail', 0, 0)]),
    replica('b', true, [tea([0, 0], 'unavail', 0, 0)]),
  ]);
  assert.equal(report.tea!.peers[0]!.state, 'unavail');
  assert.deepEqual(Object.keys(upstreamsReport([replica('a', false, [tea([0, 0], 'up', 0, 0)])])), []);
});

test('a backup server is reported backup: true, a down one state down', () => {
  const group: UpstreamInfo = {
    name: 'coffee',
    peers: [
      { server: '10.0.0.7:8080', weight: 1, backup: false, state: 'down', active: 0, maxConns: 0 },
      { server: '10.0.0.8:8080', weight: 1, backup: true, state: 'up', active: 1, maxConns: 0 },
    ],
    keepalive: 0,
    queue: null,
  };
  const report = upstreamsReport([replica('a', true, [group]), replica('b', true, [group])]);
  assert.deepEqual(
    report.coffee!.peers.map((peer) => [peer.backup, peer.state, peer.active]),
    [
      [false, 'down', 0],
      [true, 'up', 2],
    ],
  );
});
