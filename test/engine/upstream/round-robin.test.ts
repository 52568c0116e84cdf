/**
 * nginx's round robin of an upstream group (round-robin.ts): the smooth weighted order, `max_conns`,
 * `tried`, `max_fails` and `fail_timeout` with the time passed in (nginx's whole seconds) and the
 * effective weight a failure lowers, `down` and `backup` servers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RoundRobin, type RoundRobinPeer } from '../../../src/engine/upstream/round-robin.ts';
import type { Clock } from '../../../src/shared/clock.ts';

interface Peer extends RoundRobinPeer {
  readonly name: string;
}

const peer = (
  name: string,
  weight = 1,
  maxConns = 0,
  mark: 'backup' | 'down' | '' = '',
  maxFails = 1,
  failTimeoutS = 10,
): Peer => ({
  name,
  weight,
  maxConns,
  maxFails,
  failTimeoutS,
  active: 0,
  currentWeight: 0,
  effectiveWeight: weight,
  fails: 0,
  accessedS: 0,
  checkedS: 0,
  backup: mark === 'backup',
  down: mark === 'down',
});

/** A clock that reads `nowMs`. */
const at = (nowMs: number): Clock => ({ nowMs: () => nowMs });

/** `count` picks at `nowMs`, by name ('-' for none). */
function picks(rr: RoundRobin<Peer>, count: number, nowMs = 0): string {
  return Array.from({ length: count }, () => rr.pick(null, at(nowMs))?.name ?? '-').join(' ');
}

describe('round robin (ngx_http_upstream_get_peer)', () => {
  it('weights 5, 1, 1 give nginx’s smooth sequence a a b a c a a, again and again', () => {
    const rr = new RoundRobin([peer('a', 5), peer('b'), peer('c')]);
    assert.equal(picks(rr, 14), 'a a b a c a a a a b a c a a');
  });

  it('equal weights take turns in the order written', () => {
    const rr = new RoundRobin([peer('a'), peer('b'), peer('c')]);
    assert.equal(picks(rr, 6), 'a b c a b c');
  });

  it('skips the servers already tried for the request; none left is null', () => {
    const [a, b, c] = [peer('a'), peer('b'), peer('c')];
    const rr = new RoundRobin([a, b, c]);
    assert.equal(rr.pick([a], at(0)), b);
    assert.equal(rr.pick([a, b], at(0)), c);
    assert.equal(rr.pick([a, b, c], at(0)), null);
  });

  it('a server carrying its max_conns is skipped until a request on it ends', () => {
    const [a, b] = [peer('a', 1, 1), peer('b')];
    const rr = new RoundRobin([a, b]);
    a.active = 1;
    assert.equal(picks(rr, 3), 'b b b');
    a.active = 0;
    assert.equal(picks(rr, 2), 'a b');
  });
});

describe('max_fails and fail_timeout', () => {
  it('max_fails=1: a failed server is skipped for fail_timeout seconds, then back at its lowered weight', () => {
    const [a, b] = [peer('a'), peer('b')];
    const rr = new RoundRobin([a, b]);
    assert.equal(rr.markFailed(a, 1_000), true);
    assert.equal(rr.isDown(a, 1_000), true);
    assert.equal(picks(rr, 3, 1_000), 'b b b');
    assert.equal(picks(rr, 2, 11_999), 'b b', 'second 11 is still within 10 s of second 1');
    assert.equal(rr.isDown(a, 12_000), false);
    // its effective weight fell to 0 and comes back by one per pick: b first, then a
    assert.equal(picks(rr, 2, 12_000), 'b a');
    assert.equal(a.checkedS, 12, 'checked when picked again');
    rr.answered(a);
    assert.equal(a.fails, 0, 'an answer after the check clears its failures');
  });

  it('max_fails=3: failures add up while no check passes; the third leaves the server out', () => {
    const [a, b] = [peer('a', 1, 0, '', 3), peer('b', 1, 0, '', 3)];
    const rr = new RoundRobin([a, b]);
    const order: string[] = [];
    for (let request = 1; request <= 30; request++) {
      const first = rr.pick(null, at(5_000))!;
      // every third request a gets fails (upstream.t's "failures"), and goes to b
      if (first === a && ++order.length % 3 === 0) {
        rr.markFailed(a, 5_000);
        rr.answered(a);
        rr.pick([a], at(5_000));
      } else rr.answered(first);
    }
    assert.equal(order.length, 9, 'a took 9 requests, 3 of them failed');
    assert.equal(a.fails, 3);
    assert.equal(rr.isDown(a, 15_000), true);
    assert.equal(rr.isDown(a, 16_000), false);
  });

  it('max_fails=0: failures are counted but never leave the server out', () => {
    const [a, b] = [peer('a', 1, 0, '', 0), peer('b', 1, 0, '', 0)];
    const rr = new RoundRobin([a, b]);
    assert.equal(rr.markFailed(a, 0), false);
    assert.equal(rr.markFailed(a, 0), false);
    assert.equal(picks(rr, 2), 'a b');
  });

  it('every server down is no live upstream: null', () => {
    const [a, b] = [peer('a', 1, 0, '', 1, 5), peer('b', 1, 0, '', 1, 5)];
    const rr = new RoundRobin([a, b]);
    rr.markFailed(a, 0);
    rr.markFailed(b, 100);
    assert.equal(rr.pick(null, at(5_999)), null);
    assert.equal(rr.pick(null, at(6_000))?.name, 'a');
  });

  it('the only server of a group is never left out, but is still tried once and held to max_conns', () => {
    const only = peer('only', 1, 2);
    const rr = new RoundRobin([only]);
    assert.equal(rr.markFailed(only, 0), false);
    assert.equal(rr.isDown(only, 0), false);
    assert.equal(rr.pick(null, at(0)), only);
    assert.equal(rr.pick([only], at(0)), null);
    only.active = 2;
    assert.equal(rr.pick(null, at(0)), null);
  });
});

describe('down and backup servers (ngx_http_upstream_get_round_robin_peer)', () => {
  it('a down server is never picked, nor counted among the tries', () => {
    const [a, b, c] = [peer('a'), peer('b', 1, 0, 'down'), peer('c')];
    const rr = new RoundRobin([a, b, c]);
    assert.equal(picks(rr, 4), 'a c a c');
    assert.equal(rr.tries, 2);
    const only = peer('only', 1, 0, 'down');
    assert.equal(new RoundRobin([only]).pick(null, at(0)), null, 'a lone server marked down');
  });

  it('backups are picked only when no primary can be: failed, down, at max_conns', () => {
    const [a, b, x, y] = [peer('a', 1, 1), peer('b'), peer('x', 1, 0, 'backup'), peer('y', 1, 0, 'backup')];
    const rr = new RoundRobin([a, x, b, y]);
    assert.equal(picks(rr, 4), 'a b a b');
    assert.equal(rr.markFailed(b, 0), true);
    a.active = 1;
    assert.equal(picks(rr, 3), 'x y x');
    a.active = 0;
    assert.equal(picks(rr, 2), 'a a');
    assert.equal(
      picks(rr, 3, 11_000),
      'a a b',
      'the failed primary is back after fail_timeout, its weight lowered',
    );
  });

  it('a request that went to a backup stays on the backups for its next tries', () => {
    const [a, x, y] = [peer('a'), peer('x', 1, 0, 'backup'), peer('y', 1, 0, 'backup')];
    const rr = new RoundRobin([a, x, y]);
    assert.equal(rr.pick([a], at(0)), x);
    assert.equal(rr.pick([a, x], at(0)), y, 'not the primary again');
    assert.equal(rr.pick([a, x, y], at(0)), null);
    assert.equal(rr.tries, 3);
  });

  it('one primary with backups is left out after a failure (no longer a single server)', () => {
    const [a, x] = [peer('a'), peer('x', 1, 0, 'backup')];
    const rr = new RoundRobin([a, x]);
    assert.equal(rr.markFailed(a, 0), true);
    assert.equal(rr.pick(null, at(1)), x);
    assert.equal(rr.pick(null, at(11_000)), a);
  });

  it('down backups are skipped too: nothing left is null (no live upstreams)', () => {
    const [a, x] = [peer('a', 1, 0, 'down'), peer('x', 1, 0, 'backup')];
    const rr = new RoundRobin([a, x, peer('y', 1, 0, 'backup')]);
    assert.equal(rr.pick(null, at(0)), x);
    const allDown = new RoundRobin([peer('a', 1, 0, 'down'), peer('x', 1, 0, 'down')]);
    assert.equal(allDown.pick(null, at(0)), null);
  });
});
