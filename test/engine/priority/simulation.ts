/**
 * A discrete-event run of one priority level: each flow sends at a fixed rate (open loop, its
 * requests evenly spaced, flows out of phase), every request is served for a fixed time, on a
 * simulated clock. Reports each flow's latencies (wait + service) and the rejections.
 */
import { type FairRequest, QueueSet, type QueuingConfig } from '../../../src/engine/priority/queue-set.ts';
import { flowHash } from '../../../src/engine/priority/shuffle-shard.ts';

export interface SimFlow {
  readonly name: string;
  /** Requests per second. */
  readonly rate: number;
}

export interface SimResult {
  /** Latencies in ms of the requests served, per flow. */
  readonly latencies: ReadonlyMap<string, number[]>;
  readonly rejected: ReadonlyMap<string, number>;
}

export function simulate(
  flows: readonly SimFlow[],
  options: { seats: number; queuing: QueuingConfig; serviceMs: number; durationMs: number },
): SimResult {
  const events: { atMs: number; run: () => void }[] = [];
  const at = (atMs: number, run: () => void) => {
    let i = events.length;
    while (i > 0 && events[i - 1]!.atMs > atMs) i--;
    events.splice(i, 0, { atMs, run });
  };
  let nowMs = 0;
  const set = new QueueSet(options.seats, options.queuing);
  const latencies = new Map(flows.map((f) => [f.name, [] as number[]]));
  const rejected = new Map(flows.map((f) => [f.name, 0]));
  const send = (flow: SimFlow) => {
    const sentMs = nowMs;
    const executing = (request: FairRequest) => {
      at(nowMs + options.serviceMs, () => {
        set.finish(request, nowMs);
        latencies.get(flow.name)!.push(nowMs - sentMs);
      });
    };
    const request = set.start(flow.name, flowHash('sim', flow.name), nowMs, executing);
    if (request.state === 'executing') executing(request);
    else if (request.state === 'rejected') rejected.set(flow.name, rejected.get(flow.name)! + 1);
  };
  flows.forEach((flow, i) => {
    const gapMs = 1000 / flow.rate;
    const phaseMs = (gapMs * i) / flows.length;
    for (let t = phaseMs; t < options.durationMs; t += gapMs) at(t, () => send(flow));
  });
  while (events.length > 0) {
    const event = events.shift()!;
    nowMs = event.atMs;
    event.run();
  }
  return { latencies, rejected };
}

/** The p-th percentile of `values`. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}
