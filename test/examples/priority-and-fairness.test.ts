/**
 * examples/priority-and-fairness on a replica process: the seed's experiment — a 1-share level with
 * 3 seats, 80 concurrent clients for 5 s against a slow upstream — with Reject (429 + Retry-After,
 * the rejection counter equal to the 429s the clients saw) and, switched at runtime through keyval,
 * with Queue (queues=4, queue_length=100, hand_size=2: no 429 at all); classification by map
 * (FlowSchemas) and the exempt level getting through a saturated one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ApfExperiment } from './apf-experiment.ts';

describe('examples/priority-and-fairness: the seed’s experiment', () => {
  let x: ApfExperiment;
  const rejected = (level: string, reason: string) =>
    x.metric(
      `limitswitch_priority_level_rejected_requests_total{priority_level="${level}",reason="${reason}"}`,
    );

  before(async () => {
    x = await ApfExperiment.start(5);
  });
  after(async () => {
    await x?.stop();
  });

  it('the seats: 600 × 1 ÷ 247 → 3 for k17-tiny, 600 × 100 ÷ 247 → 243 for workload-low', async () => {
    assert.equal(
      await x.metric('limitswitch_priority_level_nominal_limit_seats{priority_level="k17-tiny"}'),
      3,
    );
    assert.equal(
      await x.metric('limitswitch_priority_level_nominal_limit_seats{priority_level="workload-low"}'),
      243,
    );
    assert.equal(
      await x.metric('limitswitch_priority_level_nominal_limit_seats{priority_level="exempt"}'),
      0,
    );
  });

  it('classification: FlowSchemas as maps, the flow’s level on the answer', async () => {
    assert.deepEqual(await x.one('hammer'), { status: 200, level: 'k17-tiny' });
    assert.deepEqual(await x.one('ci-bot'), { status: 200, level: 'workload-low' });
    assert.deepEqual(await x.one(''), { status: 200, level: 'global-default' });
    assert.deepEqual(await x.one('system:admin'), { status: 200, level: 'exempt' });
    assert.deepEqual(await x.one('hammer', '/healthz'), { status: 200, level: 'exempt' });
  });

  it('Reject: 80 clients for 5 s on 3 seats get 429s with Retry-After; the counter equals the 429s; exempt gets through', async (t) => {
    const before = await rejected('k17-tiny', 'concurrency-limit');
    const [run, admin] = await Promise.all([
      x.load('hammer', 80, 5_000),
      // during the overload, an admin request
      new Promise((resolve) => setTimeout(resolve, 2_000)).then(() => x.one('system:admin')),
    ]);
    t.diagnostic(`Reject: ${JSON.stringify(run)}`);
    const after = await rejected('k17-tiny', 'concurrency-limit');
    assert.ok((run.statuses[429] ?? 0) > 0, 'some 429s');
    assert.equal((run.statuses[200] ?? 0) + (run.statuses[429] ?? 0), run.requests);
    assert.equal(after - before, run.statuses[429]);
    assert.equal(run.firstRetryAfter, '1');
    assert.equal(run.levelHeader, 'k17-tiny');
    assert.deepEqual(admin, { status: 200, level: 'exempt' });
  });

  it('switched to Queue at runtime through keyval: the same load gets no 429', async (t) => {
    await x.switchTo('queue');
    const before = await x.metric(
      'limitswitch_priority_level_request_wait_duration_seconds_count{priority_level="k17-tiny-queued",execute="true"}',
    );
    const run = await x.load('hammer', 80, 5_000);
    t.diagnostic(`Queue: ${JSON.stringify(run)}`);
    assert.deepEqual(Object.keys(run.statuses), ['200']);
    assert.equal(run.levelHeader, 'k17-tiny-queued');
    const waited = await x.metric(
      'limitswitch_priority_level_request_wait_duration_seconds_count{priority_level="k17-tiny-queued",execute="true"}',
    );
    assert.equal(waited - before, run.requests);
    for (const reason of ['queue-full', 'time-out', 'cancelled'])
      assert.equal(await rejected('k17-tiny-queued', reason), 0, reason);
  });

  it('the status API reports the level as APF’s metrics do', async () => {
    const res = await fetch(`${x.replica.statusUrl}/api/9/http/priority_levels/k17-tiny-queued`);
    const level = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 200);
    assert.equal(level.type, 'limited');
    assert.equal(level.nominal_limit_seats, 3);
    assert.equal(level.current_executing_requests, 0);
    assert.equal(level.current_inqueue_requests, 0);
    assert.ok((level.dispatched_requests as number) > 0);
    const cluster = await fetch(`${x.controlPlane.url}/api/9/http/priority_levels/k17-tiny-queued`);
    assert.equal(cluster.status, 200);
  });
});
