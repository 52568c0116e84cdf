/**
 * API Priority and Fairness metrics, APF's names (apiserver_flowcontrol_…) under limitswitch's
 * prefix: per priority level its nominal seats, requests executing and waiting, dispatches,
 * rejections by reason (concurrency-limit, queue-full, time-out, cancelled) and how long requests
 * waited, by whether they then executed.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import {
  type PriorityLevelInfo,
  WAIT_BUCKETS_S,
  type WaitHistogram,
} from '../engine/priority/priority-level.ts';
import type { RejectReason } from '../engine/priority/queue-set.ts';
import { RunningTotals } from './running-totals.ts';

const PREFIX = 'limitswitch_priority_level';
const REASONS: readonly RejectReason[] = ['concurrency-limit', 'queue-full', 'time-out', 'cancelled'];

export function priorityMetrics(registers: Registry[], levels: () => Iterable<PriorityLevelInfo>): void {
  const gauge = (name: string, help: string, value: (l: PriorityLevelInfo) => number) =>
    new Gauge({
      name: `${PREFIX}_${name}`,
      help,
      labelNames: ['priority_level'],
      registers,
      collect() {
        this.reset();
        for (const level of levels()) this.set({ priority_level: level.name }, value(level));
      },
    });
  gauge(
    'nominal_limit_seats',
    'Seats of the priority level: ceil(total × shares ÷ Σ shares)',
    (l) => l.seats,
  );
  gauge('current_executing_requests', 'Requests of the priority level executing now', (l) => l.executing);
  gauge(
    'current_inqueue_requests',
    'Requests of the priority level waiting in its queues now',
    (l) => l.waiting,
  );
  const totals = new RunningTotals();
  new Counter({
    name: `${PREFIX}_dispatched_requests_total`,
    help: 'Requests of the priority level given a seat',
    labelNames: ['priority_level'],
    registers,
    collect() {
      for (const level of levels())
        this.inc({ priority_level: level.name }, totals.growth(`d\0${level.name}`, level.dispatched));
    },
  });
  new Counter({
    name: `${PREFIX}_rejected_requests_total`,
    help: 'Requests of the priority level rejected, by reason (concurrency-limit, queue-full, time-out, cancelled)',
    labelNames: ['priority_level', 'reason'],
    registers,
    collect() {
      for (const level of levels())
        for (const reason of REASONS)
          this.inc(
            { priority_level: level.name, reason },
            totals.growth(`r\0${level.name}\0${reason}`, level.rejected[reason]),
          );
    },
  });
  new Counter({
    name: `${PREFIX}_rejected_dry_run_requests_total`,
    help: 'Requests of the priority level a dry run let through that it would have rejected',
    labelNames: ['priority_level'],
    registers,
    collect() {
      for (const level of levels())
        this.inc({ priority_level: level.name }, totals.growth(`dry\0${level.name}`, level.rejectedDryRun));
    },
  });
  for (const registry of registers) registry.registerMetric(waitHistogram(levels) as never);
}

/** The wait histogram, read from the levels' own buckets at scrape time. */
function waitHistogram(levels: () => Iterable<PriorityLevelInfo>) {
  const name = `${PREFIX}_request_wait_duration_seconds`;
  return {
    name,
    help: 'Time requests of the priority level waited for a seat, by whether they then executed',
    type: 'histogram',
    aggregator: 'sum',
    reset() {},
    async get() {
      const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
      const add = (level: string, execute: string, histogram: WaitHistogram) => {
        const labels = { priority_level: level, execute };
        WAIT_BUCKETS_S.forEach((le, i) => {
          values.push({
            labels: { ...labels, le },
            value: histogram.buckets[i]!,
            metricName: `${name}_bucket`,
          });
        });
        values.push({
          labels: { ...labels, le: '+Inf' },
          value: histogram.count,
          metricName: `${name}_bucket`,
        });
        values.push({ labels, value: histogram.sumS, metricName: `${name}_sum` });
        values.push({ labels, value: histogram.count, metricName: `${name}_count` });
      };
      for (const level of levels()) {
        add(level.name, 'true', level.waits.executed);
        add(level.name, 'false', level.waits.rejected);
      }
      return { name, help: this.help, type: 'histogram', values, aggregator: 'sum' };
    },
  };
}
