/**
 * The seed's API Priority and Fairness experiment on a replica, figures side by side with the seed's:
 * examples/priority-and-fairness/nginx.conf, a 1-share level (3 seats), 80 concurrent clients of one
 * account for 5 s against an upstream that takes 5 ms a request — first with `limit_response=reject`,
 * then switched at runtime through keyval to the level with `queues=4 hand_size=2 queue_length=100`.
 *
 * Run: npm run bench:priority-and-fairness     (last line: JSON)
 * Knobs: BENCH_CLIENTS (80), BENCH_DURATION_MS (5000), BENCH_SERVICE_MS (5).
 */
import { ApfExperiment, type RunFigures } from '../test/examples/apf-experiment.ts';

const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 80);
const DURATION_MS = Number(process.env.BENCH_DURATION_MS ?? 5000);
const SERVICE_MS = Number(process.env.BENCH_SERVICE_MS ?? 5);

const row = (name: string, r: RunFigures) =>
  `${name.padEnd(8)} ${String(r.requests).padStart(7)} ${`${Math.round(r.requests / (DURATION_MS / 1000))}/s`.padStart(8)}  ${JSON.stringify(r.statuses).padEnd(28)} p50 ${r.p50Ms.toFixed(0).padStart(4)} ms  p95 ${r.p95Ms.toFixed(0).padStart(4)} ms  max ${r.maxMs.toFixed(0).padStart(4)} ms  Retry-After ${r.firstRetryAfter ?? '—'}`;

const x = await ApfExperiment.start(SERVICE_MS);
try {
  const rejectedBefore = await x.metric(
    'limitswitch_priority_level_rejected_requests_total{priority_level="k17-tiny",reason="concurrency-limit"}',
  );
  const reject = await x.load('hammer', CLIENTS, DURATION_MS);
  const rejectedAfter = await x.metric(
    'limitswitch_priority_level_rejected_requests_total{priority_level="k17-tiny",reason="concurrency-limit"}',
  );
  await x.switchTo('queue');
  const queue = await x.load('hammer', CLIENTS, DURATION_MS);
  console.log(
    `priority and fairness: ${CLIENTS} clients × ${DURATION_MS} ms, upstream ${SERVICE_MS} ms a request, a 1-share level of 3 seats`,
  );
  console.log(
    'seed (kube-apiserver, kind): Reject 6041 requests {200: 5729, 429: 312} p50 65 p95 117 max 392 ms, Retry-After 3',
  );
  console.log(
    'seed (kube-apiserver, kind): Queue  6071 requests {200: 6071}           p50 63 p95 112 max 164 ms',
  );
  console.log(row('reject', reject));
  console.log(row('queue', queue));
  console.log(
    `rejection counter (concurrency-limit): +${rejectedAfter - rejectedBefore}, 429s seen: ${reject.statuses[429] ?? 0}`,
  );
  console.log(
    JSON.stringify({
      reject_requests: reject.requests,
      reject_200: reject.statuses[200] ?? 0,
      reject_429: reject.statuses[429] ?? 0,
      reject_counter: rejectedAfter - rejectedBefore,
      reject_p50_ms: Math.round(reject.p50Ms),
      reject_p95_ms: Math.round(reject.p95Ms),
      reject_max_ms: Math.round(reject.maxMs),
      queue_requests: queue.requests,
      queue_200: queue.statuses[200] ?? 0,
      queue_429: queue.statuses[429] ?? 0,
      queue_p50_ms: Math.round(queue.p50Ms),
      queue_p95_ms: Math.round(queue.p95Ms),
      queue_max_ms: Math.round(queue.maxMs),
    }),
  );
} finally {
  await x.stop();
}
