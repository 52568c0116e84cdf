/** APF's seat arithmetic against the seed's table (600 seats: --max-requests-inflight 400 + 200 mutating). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildPriorityLevels } from '../../../src/engine/priority/priority-level.ts';
import { nominalSeats } from '../../../src/engine/priority/seats.ts';

const DEFAULT_LEVELS: readonly [string, number][] = [
  ['catch-all', 5],
  ['global-default', 20],
  ['leader-election', 10],
  ['node-high', 40],
  ['system', 30],
  ['workload-high', 40],
  ['workload-low', 100],
];

test('the seed’s table: 600 seats over Σ shares 245', () => {
  const seats = Object.fromEntries(
    DEFAULT_LEVELS.map(([name, shares]) => [name, nominalSeats(600, shares, 245)]),
  );
  assert.deepEqual(seats, {
    'catch-all': 13,
    'global-default': 49,
    'leader-election': 25,
    'node-high': 98,
    system: 74,
    'workload-high': 98,
    'workload-low': 245,
  });
});

test('a 1-share level beside the defaults gets 3 seats; exempt levels take no shares and no seats', () => {
  const specs = [...DEFAULT_LEVELS, ['k17-tiny', 1] as [string, number]].map(([name, shares]) => ({
    name,
    exempt: false,
    shares,
    queuing: null,
    queueTimeoutMs: 15_000,
  }));
  specs.push({ name: 'exempt', exempt: true, shares: 1000, queuing: null, queueTimeoutMs: 15_000 });
  const levels = buildPriorityLevels(specs, 600);
  assert.equal(levels.get('k17-tiny')!.seats, 3);
  assert.equal(levels.get('workload-low')!.seats, Math.ceil((600 * 100) / 246));
  assert.equal(levels.get('exempt')!.seats, 0);
  assert.equal(levels.get('exempt')!.queueSet, null);
});
