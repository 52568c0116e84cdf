/**
 * A group's `backup` and `down` servers as the replica holds them: picked as nginx's round robin
 * picks them, each counted on for `max_conns`, and reported (Plus's `backup`, state `down`).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DEFAULT_UPSTREAM_OPTIONS,
  UpstreamGroup,
} from '../../../src/replica/http/upstream/upstream-group.ts';

test('a down primary is skipped; a backup takes requests once the primary is at max_conns; info says so', async () => {
  const group = new UpstreamGroup(
    'tea',
    [
      { host: '127.0.0.1', port: 1, weight: 1, down: true },
      { host: '127.0.0.1', port: 2, weight: 1, maxConns: 1 },
      { host: '127.0.0.1', port: 3, weight: 1, backup: true },
    ],
    DEFAULT_UPSTREAM_OPTIONS,
  );
  try {
    const [down, primary, backup] = group.peers;
    assert.equal(group.pick(), primary);
    assert.equal(group.pick(), backup, 'the primary carries its max_conns');
    assert.equal(backup!.active, 1);
    group.free(primary!);
    assert.equal(group.pick(), primary);
    assert.equal(group.tries, 2);
    assert.deepEqual(
      group.info().peers.map((peer) => [peer.server, peer.backup, peer.state]),
      [
        [down!.server, false, 'down'],
        [primary!.server, false, 'up'],
        [backup!.server, true, 'up'],
      ],
    );
  } finally {
    await group.close();
  }
});
