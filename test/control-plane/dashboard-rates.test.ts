/**
 * The dashboard's rates (`src/control-plane/dashboard/rates.js`, a browser module without DOM use,
 * loaded here as it is): cumulative counters polled over time become requests per second.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

const { CounterHistory, WINDOW_MS } = await import(
  new URL('../../src/control-plane/dashboard/rates.js', import.meta.url).href
);

const zone = (passed: number, rejected = 0) => ({ z: { passed, rejected } });

describe('dashboard rates', () => {
  it('turns each pair of polls into a rate per second at the later poll', () => {
    const history = new CounterHistory();
    history.add(0, { cluster: zone(0) });
    history.add(1000, { cluster: zone(50, 5) });
    history.add(3000, { cluster: zone(150, 5) });
    assert.deepEqual(history.rates('cluster', 'z', ['passed', 'rejected']), {
      passed: [
        { atMs: 1000, perS: 50 },
        { atMs: 3000, perS: 50 },
      ],
      rejected: [
        { atMs: 1000, perS: 5 },
        { atMs: 3000, perS: 0 },
      ],
    });
    assert.deepEqual(history.latest('cluster', 'z'), { passed: 150, rejected: 5 });
  });

  it('starts afresh after a counter reset instead of a negative rate, and counts a new zone from zero', () => {
    const history = new CounterHistory();
    history.add(0, { cluster: zone(100) });
    history.add(1000, { cluster: zone(3) });
    history.add(2000, { cluster: { ...zone(4), y: { passed: 7 } } });
    assert.deepEqual(history.rates('cluster', 'z', ['passed']).passed, [
      { atMs: 1000, perS: 0 },
      { atMs: 2000, perS: 1 },
    ]);
    assert.deepEqual(history.rates('cluster', 'y', ['passed']).passed, [{ atMs: 2000, perS: 7 }]);
    assert.deepEqual(history.zones(), ['y', 'z']);
  });

  it('keeps the window only, and lists the cluster before the replicas', () => {
    const history = new CounterHistory();
    history.add(0, { 'replica-2': zone(0), cluster: zone(0) });
    history.add(1000, { 'replica-1': zone(1), cluster: zone(1) });
    history.add(WINDOW_MS + 2000, { cluster: zone(2) });
    assert.equal(WINDOW_MS, 5 * 60_000);
    // The first poll fell out of the window: one rate is left, from the second poll to the third.
    assert.equal(history.rates('cluster', 'z', ['passed']).passed.length, 1);
    assert.deepEqual(history.series(), ['cluster', 'replica-1']);
  });
});
