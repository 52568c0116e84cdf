/**
 * `/api/{version}/http/priority_levels/` and `/{level}`: API Priority and Fairness's levels from the
 * live replicas' heartbeats, summed (seats, requests executing and waiting, dispatches, rejections by
 * reason, the dry run's, waits by outcome, and the busiest flows now). A replica's status listen answers for itself alone.
 */
import type { FastifyInstance } from 'fastify';
import {
  busiestFirst,
  FLOWS_REPORTED,
  type PriorityLevelInfo,
  type WaitHistogram,
} from '../../engine/priority/priority-level.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import type { ReplicaRecord } from '../../store/cluster-registry.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';

interface LevelReport {
  type: 'exempt' | 'limited';
  nominal_limit_seats: number;
  current_executing_requests: number;
  current_inqueue_requests: number;
  dispatched_requests: number;
  rejected_requests: Record<string, number>;
  rejected_dry_run_requests: number;
  request_wait: {
    executed: { count: number; seconds: number };
    rejected: { count: number; seconds: number };
  };
  /** The busiest flows now, summed over the replicas. */
  flows: { flow: string; waiting: number; executing: number }[];
  replicas: number;
}

export function priorityLevelRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  const report = async () => {
    return priorityLevelsReport(await ctx.gateway.call('replicas', (s) => s.registry.replicas()));
  };
  addSpecRoute(app, ctx, 'getHttpPriorityLevels', report);
  addSpecRoute(app, ctx, 'getHttpPriorityLevel', async (request) => {
    const { level } = request.params as { level: string };
    const found = (await report())[level];
    if (found === undefined) throw new LimitswitchError('PriorityLevelNotFound');
    return found;
  });
}

export function priorityLevelsReport(replicas: readonly ReplicaRecord[]): Record<string, LevelReport> {
  const out: Record<string, LevelReport> = Object.create(null);
  for (const replica of replicas) {
    if (!replica.live) continue;
    for (const level of replica.priorityLevels ?? []) out[level.name] = add(out[level.name], level);
  }
  return out;
}

const wait = (h: WaitHistogram) => ({ count: h.count, seconds: h.sumS });

function add(sum: LevelReport | undefined, level: PriorityLevelInfo): LevelReport {
  if (sum === undefined) {
    return {
      type: level.exempt ? 'exempt' : 'limited',
      nominal_limit_seats: level.seats,
      current_executing_requests: level.executing,
      current_inqueue_requests: level.waiting,
      dispatched_requests: level.dispatched,
      rejected_requests: { ...level.rejected },
      rejected_dry_run_requests: level.rejectedDryRun,
      request_wait: { executed: wait(level.waits.executed), rejected: wait(level.waits.rejected) },
      flows: level.flows.map((f) => ({ ...f })),
      replicas: 1,
    };
  }
  for (const flow of level.flows) {
    const into = sum.flows.find((f) => f.flow === flow.flow);
    if (into === undefined) sum.flows.push({ ...flow });
    else {
      into.waiting += flow.waiting;
      into.executing += flow.executing;
    }
  }
  sum.flows.sort(busiestFirst);
  sum.flows.length = Math.min(sum.flows.length, FLOWS_REPORTED);
  sum.nominal_limit_seats += level.seats;
  sum.current_executing_requests += level.executing;
  sum.current_inqueue_requests += level.waiting;
  sum.dispatched_requests += level.dispatched;
  for (const [reason, n] of Object.entries(level.rejected))
    sum.rejected_requests[reason] = (sum.rejected_requests[reason] ?? 0) + n;
  sum.rejected_dry_run_requests += level.rejectedDryRun;
  sum.request_wait.executed.count += level.waits.executed.count;
  sum.request_wait.executed.seconds += level.waits.executed.sumS;
  sum.request_wait.rejected.count += level.waits.rejected.count;
  sum.request_wait.rejected.seconds += level.waits.rejected.sumS;
  sum.replicas++;
  return sum;
}
