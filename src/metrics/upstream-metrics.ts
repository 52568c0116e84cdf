/**
 * A replica's `upstream` blocks as metrics: each server's requests in flight under
 * nginx-prometheus-exporter's name (`nginxplus_upstream_server_active{upstream,server}`), and NGINX
 * Plus's queue under limitswitch's prefix (the exporter has none): its length now and its limit, the
 * overflows (502 at once), and how each wait ended, with the seconds waited.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { UpstreamInfo, UpstreamQueueInfo } from '../engine/upstream/upstream-info.ts';
import { RunningTotals } from './running-totals.ts';

type QueueTotal = 'overflows' | 'served' | 'timedOut' | 'left' | 'waitedSeconds';

export function upstreamMetrics(registers: Registry[], upstreams: () => Iterable<UpstreamInfo>): void {
  new Gauge({
    name: 'nginxplus_upstream_server_active',
    help: 'Active connections',
    labelNames: ['upstream', 'server'],
    registers,
    collect() {
      this.reset();
      for (const group of upstreams())
        for (const peer of group.peers) this.set({ upstream: group.name, server: peer.server }, peer.active);
    },
  });
  const queueGauge = (name: string, help: string, value: (q: UpstreamQueueInfo) => number) =>
    new Gauge({
      name: `limitswitch_upstream_queue_${name}`,
      help,
      labelNames: ['upstream'],
      registers,
      collect() {
        this.reset();
        for (const group of upstreams())
          if (group.queue !== null) this.set({ upstream: group.name }, value(group.queue));
      },
    });
  queueGauge('size', 'Requests waiting in the upstream queue now', (q) => q.size);
  queueGauge('max_size', 'The upstream queue’s limit (queue number)', (q) => q.maxSize);
  queueTotal(
    upstreams,
    registers,
    'overflows_total',
    'Requests turned away because the queue was full (502)',
    [[{}, 'overflows']],
  );
  queueTotal(
    upstreams,
    registers,
    'requests_total',
    'Queued requests by how their wait ended (served: got a server; timed_out: 502; left: the client went away)',
    [
      [{ outcome: 'served' }, 'served'],
      [{ outcome: 'timed_out' }, 'timedOut'],
      [{ outcome: 'left' }, 'left'],
    ],
  );
  queueTotal(
    upstreams,
    registers,
    'wait_seconds_total',
    'Seconds queued requests waited, every outcome together',
    [[{}, 'waitedSeconds']],
  );
}

/** A counter read from the queue's running totals. */
function queueTotal(
  upstreams: () => Iterable<UpstreamInfo>,
  registers: Registry[],
  name: string,
  help: string,
  series: readonly (readonly [Record<string, string>, QueueTotal])[],
): void {
  const totals = new RunningTotals();
  new Counter({
    name: `limitswitch_upstream_queue_${name}`,
    help,
    labelNames: ['upstream', ...Object.keys(series[0]![0])],
    registers,
    collect() {
      for (const group of upstreams()) {
        if (group.queue === null) continue;
        for (const [labels, field] of series) {
          const growth = totals.growth(`${group.name}\0${field}`, group.queue[field]);
          this.inc({ upstream: group.name, ...labels }, growth);
        }
      }
    },
  });
}
