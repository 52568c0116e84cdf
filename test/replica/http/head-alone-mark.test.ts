/**
 * The mark of a server seen writing a response head alone (upstream-connection.ts): set by the
 * pattern, kept by short answers while it lasts (on the fresh connections a marked server gets, the
 * answer often comes whole and cannot show the pattern), never set by short answers alone.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_KEEPALIVE } from '../../../src/replica/http/upstream/upstream-keepalive.ts';
import { UpstreamSet } from '../../../src/replica/http/upstream/upstream-set.ts';

function peerWithClock() {
  const clock = { now: 1_000_000, nowMs: () => clock.now };
  const set = new UpstreamSet(
    [{ name: 'b', servers: [{ host: '127.0.0.1', port: 9, weight: 1 }], keepalive: DEFAULT_KEEPALIVE }],
    { clock, headAloneMemoryMs: 60_000 },
  );
  return { peer: set.get('b')!.peers[0]!, clock };
}

describe('the head-alone mark of a server', () => {
  it('is not set by short answers of an unmarked server', () => {
    const { peer } = peerWithClock();
    peer.answeredShort();
    assert.equal(peer.headAloneUntilMs, 0);
  });

  it('lasts the memory from the pattern, and each short answer while it lasts renews it', () => {
    const { peer, clock } = peerWithClock();
    peer.sawHeadAlone();
    assert.equal(peer.headAloneUntilMs, 1_060_000);
    clock.now += 50_000;
    peer.answeredShort();
    assert.equal(peer.headAloneUntilMs, 1_110_000, 'renewed from the short answer');
    clock.now += 59_000;
    peer.sawHeadAlone();
    assert.equal(peer.headAloneUntilMs, 1_169_000);
  });
});
