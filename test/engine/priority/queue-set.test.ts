/**
 * APF's queue set: Reject and Queue, queue-length limits, withdrawal, and fairness — the part the
 * seed did not verify: a noisy flow in the level does not take the quiet flows' latency with it
 * (a single FIFO does), and with hand_size > 1 two heavy flows cannot block a light one that shares
 * a queue with each.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { QueueSet } from '../../../src/engine/priority/queue-set.ts';
import { Dealer, flowHash } from '../../../src/engine/priority/shuffle-shard.ts';
import { percentile, type SimFlow, simulate } from './simulation.ts';

test('reject: past the seats a request is refused (concurrency-limit); a finished one frees its seat', () => {
  const set = new QueueSet(3, null);
  const running = [0, 1, 2].map(() => set.start('f', 1n, 0));
  assert.deepEqual(
    running.map((r) => r.state),
    ['executing', 'executing', 'executing'],
  );
  assert.equal(set.start('f', 1n, 1).state, 'rejected');
  assert.equal(set.counters.rejected['concurrency-limit'], 1);
  set.finish(running[0]!, 5);
  assert.equal(set.start('f', 1n, 6).state, 'executing');
});

test('queue: 80 at once on 3 seats wait and are all served; none rejected', () => {
  const set = new QueueSet(3, { queues: 4, handSize: 2, queueLengthLimit: 100 });
  const dispatched: number[] = [];
  const requests = Array.from({ length: 80 }, (_, i) =>
    set.start(`client-${i % 8}`, flowHash('k17-tiny', 'hammer'), 0, () => dispatched.push(i)),
  );
  assert.equal(requests.filter((r) => r.state === 'executing').length, 3);
  assert.equal(set.waiting, 77);
  let t = 0;
  while (set.executing > 0) {
    t += 10;
    for (const r of requests.filter((q) => q.state === 'executing')) set.finish(r, t);
  }
  assert.equal(dispatched.length, 77);
  assert.equal(set.counters.dispatched, 80);
  assert.equal(
    Object.values(set.counters.rejected).reduce((a, b) => a + b),
    0,
  );
});

test('queue-full only when every seat is taken and the chosen queue holds queue_length', () => {
  const set = new QueueSet(1, { queues: 1, handSize: 1, queueLengthLimit: 2 });
  const states = [0, 1, 2, 3].map(() => set.start('f', 7n, 0).state);
  assert.deepEqual(states, ['executing', 'waiting', 'waiting', 'rejected']);
  assert.equal(set.counters.rejected['queue-full'], 1);
});

test('a waiting request withdrawn (time-out, cancelled) leaves its queue; the next one is served', () => {
  const set = new QueueSet(1, { queues: 2, handSize: 1, queueLengthLimit: 10 });
  const first = set.start('a', 1n, 0);
  const late = set.start('a', 1n, 1);
  const next = set.start('a', 1n, 2);
  assert.equal(set.withdraw(late, 3, 'time-out'), true);
  assert.equal(set.withdraw(late, 3, 'cancelled'), false);
  set.finish(first, 4);
  assert.equal(next.state, 'executing');
  assert.equal(late.state, 'rejected');
  assert.equal(set.counters.rejected['time-out'], 1);
});

// 3 seats of 10 ms: 300 requests/s. Five quiet flows at 20/s each; a noisy one at 20× that (400/s).
const quiet: SimFlow[] = ['q1', 'q2', 'q3', 'q4', 'q5'].map((name) => ({ name, rate: 20 }));
const noisy: SimFlow = { name: 'noisy', rate: 400 };
const run = (flows: SimFlow[], queues: number, handSize: number) =>
  simulate(flows, {
    seats: 3,
    queuing: { queues, handSize, queueLengthLimit: 50 },
    serviceMs: 10,
    durationMs: 5_000,
  });
const quietP95 = (result: ReturnType<typeof run>) =>
  percentile(
    quiet.flatMap((f) => result.latencies.get(f.name)!),
    0.95,
  );

test('fair queuing: a flow sending 20× the others leaves their p95 within 2× of it without the noisy one; a single FIFO does not', (t) => {
  const alone = quietP95(run(quiet, 64, 2));
  const fair = run([...quiet, noisy], 64, 2);
  const fifo = run([...quiet, noisy], 1, 1);
  const quietRejected = (r: ReturnType<typeof run>) => quiet.reduce((n, f) => n + r.rejected.get(f.name)!, 0);
  t.diagnostic(
    `quiet flows' p95: ${alone} ms alone, ${quietP95(fair)} ms beside the noisy flow (queues 64, hand 2; ${quietRejected(fair)} of theirs rejected, ${fair.rejected.get('noisy')} of the noisy one's), ${quietP95(fifo).toFixed(0)} ms in one FIFO (${quietRejected(fifo)} of theirs rejected)`,
  );
  assert.ok(quietP95(fair) <= 2 * alone, `fair queuing: ${quietP95(fair)} ms against ${alone} ms alone`);
  assert.equal(quietRejected(fair), 0);
  assert.ok(fair.rejected.get('noisy')! > 0, 'the noisy flow pays for its excess');
  assert.ok(quietP95(fifo) > 2 * alone, `one FIFO: ${quietP95(fifo)} ms against ${alone} ms alone`);
});

test('shuffle sharding: with hands of 2, two heavy flows that share one queue each with a light flow do not block it; with hands of 1 they do', (t) => {
  const hands = (deck: number, size: number) => {
    const dealer = new Dealer(deck, size);
    return (name: string) => dealer.dealIntoHand(flowHash('sim', name), []);
  };
  const names = Array.from({ length: 2000 }, (_, i) => `heavy-${i}`);
  const light: SimFlow = { name: 'light', rate: 10 };
  const lightOf = (r: ReturnType<typeof run>) => ({
    p95: percentile(r.latencies.get('light')!, 0.95),
    rejected: r.rejected.get('light')!,
  });
  // hands of 2 out of 8: both heavy flows hold the light flow's first queue, neither its second
  const two = hands(8, 2);
  const [a, b] = two('light') as [number, number];
  const [heavy1, heavy2] = names.filter((n) => two(n).includes(a) && !two(n).includes(b));
  const sharded = lightOf(run([light, { name: heavy1!, rate: 200 }, { name: heavy2!, rate: 200 }], 8, 2));
  // hands of 1: both heavy flows in the light flow's only queue
  const one = hands(8, 1);
  const [same1, same2] = names.filter((n) => one(n)[0] === one('light')[0]);
  const single = lightOf(run([light, { name: same1!, rate: 200 }, { name: same2!, rate: 200 }], 8, 1));
  // the limit of shuffle sharding: two heavy flows covering both of its queues (made unlikely, not impossible)
  const coverA = names.find((n) => two(n).includes(a) && !two(n).includes(b))!;
  const coverB = names.find((n) => two(n).includes(b) && !two(n).includes(a))!;
  const covered = lightOf(run([light, { name: coverA, rate: 200 }, { name: coverB, rate: 200 }], 8, 2));
  t.diagnostic(
    `light flow (10/s) beside two 200/s flows sharing one of its queues: p95 ${sharded.p95} ms, ${sharded.rejected} rejected with hands of 2; ${single.p95.toFixed(0)} ms, ${single.rejected} rejected with hands of 1; both its queues covered: ${covered.p95.toFixed(0)} ms, ${covered.rejected} rejected`,
  );
  assert.ok(sharded.p95 <= 20 && sharded.rejected === 0, `hands of 2: ${JSON.stringify(sharded)}`);
  assert.ok(single.p95 > 5 * sharded.p95 || single.rejected > 0, `hands of 1: ${JSON.stringify(single)}`);
});
