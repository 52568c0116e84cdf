/**
 * A replica's upstream groups as its workers report them: each worker balances a group without a
 * `zone` on its own (as nginx's workers do), so their loads add up; a group with a `zone` has one
 * state the workers share, which the main thread reads itself, with the workers' idle connections.
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
      return [{ ...zoned, keepalive: infos.reduce((sum, info) => sum + info.keepalive, 0) }];
    }
    return infos.length === 0 ? [] : [sumUpstreams(infos)];
  });
}

/** One group as several workers report it: their loads and their queues (each worker's own) added up. */
function sumUpstreams(infos: readonly UpstreamInfo[]): UpstreamInfo {
  const [first, ...rest] = infos as [UpstreamInfo, ...UpstreamInfo[]];
  const peers = first.peers.map((peer) => ({ ...peer }));
  const queue = first.queue === null ? null : { ...first.queue };
  let keepalive = first.keepalive;
  for (const info of rest) {
    keepalive += info.keepalive;
    info.peers.forEach((other, i) => {
      const peer = peers[i];
      if (peer === undefined) return;
      peer.active += other.active;
      if (other.state === 'up') peer.state = 'up';
    });
    if (queue === null || info.queue === null) continue;
    for (const field of Object.keys(queue) as (keyof UpstreamQueueInfo)[]) queue[field] += info.queue[field];
  }
  return { ...first, peers, keepalive, queue };
}
