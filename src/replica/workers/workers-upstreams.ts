/**
 * A replica's upstream groups as its workers report them: each worker balances a group without a
 * `zone` on its own (as nginx's workers do), so their loads add up; a group with a `zone` has one
 * state the workers share, which the main thread reads itself, with the workers' idle connections
 * and queues (each worker queues its own requests, with or without a zone).
 */
import type { Config } from '../../config/model.ts';
import type { UpstreamInfo, UpstreamQueueInfo } from '../../engine/upstream/upstream-info.ts';
import type { UpstreamSet } from '../http/upstream/upstream-set.ts';

export interface WorkersUpstreams {
  readonly config: Config;
  /** The main thread's groups, whose zoned ones' state the workers share. */
  readonly upstreams: UpstreamSet;
  readonly upstreamMemory: ReadonlyMap<string, SharedArrayBuffer>;
}

/** The config's upstream blocks, given each worker's last report. */
export function workersUpstreamInfo(
  generation: WorkersUpstreams,
  reports: readonly (readonly UpstreamInfo[])[],
): UpstreamInfo[] {
  return generation.config.http.upstreams.flatMap((u) => {
    const infos = reports.flatMap((report) => report.filter((info) => info.name === u.name));
    const zoned = generation.upstreamMemory.has(u.name)
      ? generation.upstreams.get(u.name)?.info()
      : undefined;
    if (zoned !== undefined) {
      const keepalive = infos.reduce((sum, info) => sum + info.keepalive, 0);
      return [{ ...zoned, keepalive, queue: sumQueues(infos.map((info) => info.queue)) }];
    }
    return infos.length === 0 ? [] : [sumUpstreams(infos)];
  });
}

/** One group as several workers report it: their loads and their queues (each worker's own) added up. */
function sumUpstreams(infos: readonly UpstreamInfo[]): UpstreamInfo {
  const [first, ...rest] = infos as [UpstreamInfo, ...UpstreamInfo[]];
  const peers = first.peers.map((peer) => ({ ...peer }));
  let keepalive = first.keepalive;
  for (const info of rest) {
    keepalive += info.keepalive;
    info.peers.forEach((other, i) => {
      const peer = peers[i];
      if (peer === undefined) return;
      peer.active += other.active;
      if (other.state === 'up') peer.state = 'up';
    });
  }
  return { ...first, peers, keepalive, queue: sumQueues(infos.map((info) => info.queue)) };
}

/** The workers' queues of one group added up (each worker queues its own requests, as Plus's do). */
function sumQueues(queues: readonly (UpstreamQueueInfo | null)[]): UpstreamQueueInfo | null {
  const [first, ...rest] = queues;
  if (first === undefined || first === null) return null;
  const sum = { ...first };
  for (const queue of rest) {
    if (queue === null) continue;
    for (const field of Object.keys(sum) as (keyof UpstreamQueueInfo)[]) sum[field] += queue[field];
  }
  return sum;
}
