/**
 * `/api/{version}/http/upstreams/` and `/{upstream}`: the `upstream` blocks in NGINX Plus's shape,
 * from the live replicas' heartbeats — each server's `active` requests (summed over the replicas),
 * `max_conns` (each replica's own), `backup`, `state` (`unavail` only where every replica left it out,
 * `down` as the config marks it), the idle `keepalive` connections, and Plus's `queue` (`size`, `max_size` summed, `overflows`) with
 * limitswitch's outcome counters beside it. A replica's status listen answers for itself alone.
 */
import type { FastifyInstance } from 'fastify';
import type { UpstreamInfo, UpstreamQueueInfo } from '../../engine/upstream/upstream-info.ts';
import { LimitswitchError } from '../../shared/errors.ts';
import type { ReplicaRecord } from '../../store/cluster-registry.ts';
import { addSpecRoute, type ControlPlaneContext } from '../context.ts';

interface PlusPeer {
  id: number;
  server: string;
  name: string;
  backup: boolean;
  weight: number;
  state: 'up' | 'unavail' | 'down';
  active: number;
  max_conns?: number;
}

interface PlusQueue {
  size: number;
  max_size: number;
  overflows: number;
  queued: number;
  served: number;
  timed_out: number;
  left: number;
  waited_seconds: number;
}

interface PlusUpstream {
  peers: PlusPeer[];
  keepalive: number;
  zombies: 0;
  zone: string;
  queue?: PlusQueue;
}

export function upstreamRoutes(app: FastifyInstance, ctx: ControlPlaneContext): void {
  const report = async () => {
    const replicas = await ctx.gateway.call('replicas', (s) => s.registry.replicas());
    return upstreamsReport(replicas);
  };
  addSpecRoute(app, ctx, 'getHttpUpstreams', report);
  addSpecRoute(app, ctx, 'getHttpUpstream', async (request) => {
    const { upstream } = request.params as { upstream: string };
    const found = (await report())[upstream];
    if (found === undefined) throw new LimitswitchError('UpstreamNotFound');
    return found;
  });
}

/** The live replicas' groups, summed by name (a group's servers by position: one config). */
export function upstreamsReport(replicas: readonly ReplicaRecord[]): Record<string, PlusUpstream> {
  const out: Record<string, PlusUpstream> = Object.create(null);
  for (const replica of replicas) {
    if (!replica.live) continue;
    for (const group of replica.upstreams ?? []) {
      const sum = out[group.name];
      out[group.name] = sum === undefined ? plusUpstream(group) : merged(sum, group);
    }
  }
  return out;
}

function plusUpstream(group: UpstreamInfo): PlusUpstream {
  const out: PlusUpstream = {
    peers: group.peers.map((peer, id) => {
      const plus: PlusPeer = {
        id,
        server: peer.server,
        name: peer.server,
        backup: peer.backup === true,
        weight: peer.weight,
        state: peer.state,
        active: peer.active,
      };
      if (peer.maxConns !== 0) plus.max_conns = peer.maxConns;
      return plus;
    }),
    keepalive: group.keepalive,
    zombies: 0,
    zone: group.name,
  };
  if (group.queue !== null) out.queue = plusQueue(group.queue);
  return out;
}

function plusQueue(queue: UpstreamQueueInfo): PlusQueue {
  return {
    size: queue.size,
    max_size: queue.maxSize,
    overflows: queue.overflows,
    queued: queue.queued,
    served: queue.served,
    timed_out: queue.timedOut,
    left: queue.left,
    waited_seconds: queue.waitedSeconds,
  };
}

function merged(sum: PlusUpstream, group: UpstreamInfo): PlusUpstream {
  sum.keepalive += group.keepalive;
  group.peers.forEach((peer, i) => {
    const into = sum.peers[i];
    if (into === undefined || into.server !== peer.server) return;
    into.active += peer.active;
    if (peer.state === 'up') into.state = 'up';
  });
  if (group.queue !== null && sum.queue !== undefined) {
    const q = plusQueue(group.queue);
    for (const field of Object.keys(q) as (keyof PlusQueue)[]) sum.queue[field] += q[field];
  }
  return sum;
}
